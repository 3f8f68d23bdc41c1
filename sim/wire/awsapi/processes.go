package awsapi

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
