package awsapi

// Amazon EC2 Auto Scaling's types (API version 2011-01-01).

// LaunchTemplateSpecification names a launch template and a version.
type LaunchTemplateSpecification struct {
	LaunchTemplateID   string `xml:"LaunchTemplateId,omitempty"`
	LaunchTemplateName string `xml:"LaunchTemplateName,omitempty"`
	Version            string `xml:"Version,omitempty"`
}

// TagDescription is a tag of an Auto Scaling group.
type TagDescription struct {
	ResourceID        string `xml:"ResourceId"`
	ResourceType      string `xml:"ResourceType"`
	Key               string `xml:"Key"`
	Value             string `xml:"Value"`
	PropagateAtLaunch bool   `xml:"PropagateAtLaunch"`
}

// Instance is an instance of an Auto Scaling group.
type Instance struct {
	InstanceID           string                       `xml:"InstanceId"`
	InstanceType         string                       `xml:"InstanceType,omitempty"`
	AvailabilityZone     string                       `xml:"AvailabilityZone"`
	LifecycleState       string                       `xml:"LifecycleState"`
	HealthStatus         string                       `xml:"HealthStatus"`
	LaunchTemplate       *LaunchTemplateSpecification `xml:"LaunchTemplate,omitempty"`
	ProtectedFromScaleIn bool                         `xml:"ProtectedFromScaleIn"`
	ImageID              string                       `xml:"ImageId,omitempty"`
}

// SuspendedProcess is a suspended process of a group.
type SuspendedProcess struct {
	ProcessName      string `xml:"ProcessName"`
	SuspensionReason string `xml:"SuspensionReason"`
}

// AutoScalingGroup is a group as DescribeAutoScalingGroups returns it.
type AutoScalingGroup struct {
	AutoScalingGroupName             string                       `xml:"AutoScalingGroupName"`
	AutoScalingGroupARN              string                       `xml:"AutoScalingGroupARN"`
	LaunchTemplate                   *LaunchTemplateSpecification `xml:"LaunchTemplate,omitempty"`
	MixedInstancesPolicy             *MixedInstancesPolicy        `xml:"MixedInstancesPolicy,omitempty"`
	MinSize                          int32                        `xml:"MinSize"`
	MaxSize                          int32                        `xml:"MaxSize"`
	DesiredCapacity                  int32                        `xml:"DesiredCapacity"`
	DefaultCooldown                  int32                        `xml:"DefaultCooldown"`
	AvailabilityZones                []string                     `xml:"AvailabilityZones>member"`
	HealthCheckType                  string                       `xml:"HealthCheckType"`
	HealthCheckGracePeriod           int32                        `xml:"HealthCheckGracePeriod"`
	Instances                        []Instance                   `xml:"Instances>member"`
	CreatedTime                      string                       `xml:"CreatedTime"`
	SuspendedProcesses               []SuspendedProcess           `xml:"SuspendedProcesses>member"`
	VPCZoneIdentifier                string                       `xml:"VPCZoneIdentifier,omitempty"`
	Status                           string                       `xml:"Status,omitempty"`
	Tags                             []TagDescription             `xml:"Tags>member"`
	TerminationPolicies              []string                     `xml:"TerminationPolicies>member"`
	NewInstancesProtectedFromScaleIn bool                         `xml:"NewInstancesProtectedFromScaleIn"`
	ServiceLinkedRoleARN             string                       `xml:"ServiceLinkedRoleARN"`
	CapacityRebalance                bool                         `xml:"CapacityRebalance"`
	DefaultInstanceWarmup            *int32                       `xml:"DefaultInstanceWarmup,omitempty"`
}

// DescribeAutoScalingGroupsResult is DescribeAutoScalingGroups' result.
type DescribeAutoScalingGroupsResult struct {
	AutoScalingGroups []AutoScalingGroup `xml:"AutoScalingGroups>member"`
	NextToken         string             `xml:"NextToken,omitempty"`
}

// Activity is a scaling activity.
type Activity struct {
	ActivityID           string `xml:"ActivityId"`
	AutoScalingGroupName string `xml:"AutoScalingGroupName"`
	AutoScalingGroupARN  string `xml:"AutoScalingGroupARN,omitempty"`
	Description          string `xml:"Description"`
	Cause                string `xml:"Cause"`
	StartTime            string `xml:"StartTime"`
	EndTime              string `xml:"EndTime,omitempty"`
	StatusCode           string `xml:"StatusCode"`
	StatusMessage        string `xml:"StatusMessage,omitempty"`
	Progress             int32  `xml:"Progress"`
	Details              string `xml:"Details"`
}

// ActivityResult is the result of TerminateInstanceInAutoScalingGroup.
type ActivityResult struct {
	Activity Activity `xml:"Activity"`
}

// DescribeScalingActivitiesResult is DescribeScalingActivities' result.
type DescribeScalingActivitiesResult struct {
	Activities []Activity `xml:"Activities>member"`
	NextToken  string     `xml:"NextToken,omitempty"`
}

// MixedInstancesPolicy is an Auto Scaling group's mixed instances policy, as
// DescribeAutoScalingGroups reports it.
type MixedInstancesPolicy struct {
	LaunchTemplate        MixedLaunchTemplate    `xml:"LaunchTemplate"`
	InstancesDistribution *InstancesDistribution `xml:"InstancesDistribution,omitempty"`
}

// MixedLaunchTemplate is a mixed instances policy's launch template and
// its instance-type overrides.
type MixedLaunchTemplate struct {
	LaunchTemplateSpecification LaunchTemplateSpecification `xml:"LaunchTemplateSpecification"`
	Overrides                   []LaunchTemplateOverrides   `xml:"Overrides>member,omitempty"`
}

// LaunchTemplateOverrides is an instance type a mixed instances policy may
// launch, with the capacity units it counts for.
type LaunchTemplateOverrides struct {
	InstanceType     string `xml:"InstanceType,omitempty"`
	WeightedCapacity string `xml:"WeightedCapacity,omitempty"`
}

// InstancesDistribution splits a mixed instances policy's capacity between
// On-Demand and Spot instances.
type InstancesDistribution struct {
	OnDemandAllocationStrategy          string `xml:"OnDemandAllocationStrategy"`
	OnDemandBaseCapacity                int32  `xml:"OnDemandBaseCapacity"`
	OnDemandPercentageAboveBaseCapacity int32  `xml:"OnDemandPercentageAboveBaseCapacity"`
	SpotAllocationStrategy              string `xml:"SpotAllocationStrategy"`
	SpotInstancePools                   int32  `xml:"SpotInstancePools,omitempty"`
	SpotMaxPrice                        string `xml:"SpotMaxPrice,omitempty"`
}

// Lifecycle hook transitions, default results and the instance lifecycle
// states the hooks hold instances in, as Auto Scaling names them.
const (
	TransitionLaunching   = "autoscaling:EC2_INSTANCE_LAUNCHING"
	TransitionTerminating = "autoscaling:EC2_INSTANCE_TERMINATING"
	ResultContinue        = "CONTINUE"
	ResultAbandon         = "ABANDON"
	StatePendingWait      = "Pending:Wait"
	StatePendingProceed   = "Pending:Proceed"
	StateTerminatingWait  = "Terminating:Wait"
)

// LifecycleHook is a lifecycle hook of an Auto Scaling group
// (DescribeLifecycleHooks).
type LifecycleHook struct {
	LifecycleHookName     string `xml:"LifecycleHookName"`
	AutoScalingGroupName  string `xml:"AutoScalingGroupName"`
	LifecycleTransition   string `xml:"LifecycleTransition"`
	NotificationTargetARN string `xml:"NotificationTargetARN,omitempty"`
	RoleARN               string `xml:"RoleARN,omitempty"`
	NotificationMetadata  string `xml:"NotificationMetadata,omitempty"`
	HeartbeatTimeout      int32  `xml:"HeartbeatTimeout"`
	GlobalTimeout         int32  `xml:"GlobalTimeout"`
	DefaultResult         string `xml:"DefaultResult"`
}

// DescribeLifecycleHooksResult is DescribeLifecycleHooks' result.
type DescribeLifecycleHooksResult struct {
	LifecycleHooks []LifecycleHook `xml:"LifecycleHooks>member"`
}

// Auto Scaling's processes (SuspendProcesses, ResumeProcesses), as AWS
// names them.
const (
	ProcessLaunch            = "Launch"
	ProcessTerminate         = "Terminate"
	ProcessAddToLoadBalancer = "AddToLoadBalancer"
	ProcessAlarmNotification = "AlarmNotification"
	ProcessAZRebalance       = "AZRebalance"
	ProcessHealthCheck       = "HealthCheck"
	ProcessInstanceRefresh   = "InstanceRefresh"
	ProcessReplaceUnhealthy  = "ReplaceUnhealthy"
	ProcessScheduledActions  = "ScheduledActions"
)

// Processes are every process SuspendProcesses and ResumeProcesses accept.
var Processes = []string{ProcessLaunch, ProcessTerminate, ProcessAddToLoadBalancer, ProcessAlarmNotification,
	ProcessAZRebalance, ProcessHealthCheck, ProcessInstanceRefresh, ProcessReplaceUnhealthy, ProcessScheduledActions}

// Instance refresh statuses.
const (
	RefreshPending    = "Pending"
	RefreshInProgress = "InProgress"
	RefreshSuccessful = "Successful"
	RefreshFailed     = "Failed"
	RefreshCancelling = "Cancelling"
	RefreshCancelled  = "Cancelled"
)

// Error codes of instance refreshes.
const (
	CodeInstanceRefreshInProgress     = "InstanceRefreshInProgress"
	CodeActiveInstanceRefreshNotFound = "ActiveInstanceRefreshNotFound"
)

// RefreshPreferences are an instance refresh's preferences.
type RefreshPreferences struct {
	MinHealthyPercentage *int32 `xml:"MinHealthyPercentage,omitempty"`
	MaxHealthyPercentage *int32 `xml:"MaxHealthyPercentage,omitempty"`
	InstanceWarmup       *int32 `xml:"InstanceWarmup,omitempty"`
	SkipMatching         *bool  `xml:"SkipMatching,omitempty"`
	AutoRollback         *bool  `xml:"AutoRollback,omitempty"`
}

// InstanceRefresh is an instance refresh as DescribeInstanceRefreshes
// returns it.
type InstanceRefresh struct {
	InstanceRefreshID    string              `xml:"InstanceRefreshId"`
	AutoScalingGroupName string              `xml:"AutoScalingGroupName"`
	Status               string              `xml:"Status"`
	StatusReason         string              `xml:"StatusReason,omitempty"`
	StartTime            string              `xml:"StartTime,omitempty"`
	EndTime              string              `xml:"EndTime,omitempty"`
	PercentageComplete   int32               `xml:"PercentageComplete"`
	InstancesToUpdate    int32               `xml:"InstancesToUpdate"`
	Preferences          *RefreshPreferences `xml:"Preferences,omitempty"`
}

// StartInstanceRefreshResult is StartInstanceRefresh's result (and
// CancelInstanceRefresh's: the refresh's ID).
type StartInstanceRefreshResult struct {
	InstanceRefreshID string `xml:"InstanceRefreshId"`
}

// DescribeInstanceRefreshesResult is DescribeInstanceRefreshes' result.
type DescribeInstanceRefreshesResult struct {
	InstanceRefreshes []InstanceRefresh `xml:"InstanceRefreshes>member"`
	NextToken         string            `xml:"NextToken,omitempty"`
}
