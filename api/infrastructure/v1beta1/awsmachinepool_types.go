package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AWSMachinePoolSpec is the desired state of an AWSMachinePool: one Auto Scaling Group.
// +kubebuilder:validation:XValidation:rule="self.minSize <= self.maxSize",message="minSize must be less than or equal to maxSize",fieldPath=".minSize"
type AWSMachinePoolSpec struct {
	// ProviderID is the ASG's identification ID.
	// +optional
	ProviderID string `json:"providerID,omitempty"`

	// MinSize is the ASG's minimum size. Defaults to 1.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	MinSize int32 `json:"minSize"`

	// MaxSize is the ASG's maximum size.
	// +required
	// +kubebuilder:validation:Minimum=1
	MaxSize int32 `json:"maxSize"`

	// AvailabilityZones are the zones the ASG spans.
	// +optional
	AvailabilityZones []string `json:"availabilityZones,omitempty"`

	// AvailabilityZoneSubnetType selects public, private or all subnets of the zones.
	// +optional
	AvailabilityZoneSubnetType *AZSubnetType `json:"availabilityZoneSubnetType,omitempty"`

	// Subnets are the ASG's subnets: each an ID string or an object with id or filters.
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Subnets []AWSResourceReference `json:"subnets,omitempty"`

	// AdditionalTags are extra tags set on the ASG and its instances.
	// +optional
	AdditionalTags Tags `json:"additionalTags,omitempty"`

	// AWSLaunchTemplate is the launch template of the instances.
	// +required
	AWSLaunchTemplate AWSLaunchTemplate `json:"awsLaunchTemplate"`

	// MixedInstancesPolicy mixes instance types and purchase options.
	// +optional
	MixedInstancesPolicy *MixedInstancesPolicy `json:"mixedInstancesPolicy,omitempty"`

	// ProviderIDList holds the providerID of every instance of the ASG.
	// +optional
	// +kubebuilder:validation:MaxItems=10000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	ProviderIDList []string `json:"providerIDList,omitempty"`

	// DefaultCoolDown is the time between scaling activities. Defaults to 300s.
	// +optional
	// +kubebuilder:default="300s"
	DefaultCoolDown *metav1.Duration `json:"defaultCoolDown,omitempty"`

	// DefaultInstanceWarmup is the time a new instance needs before it counts toward
	// metrics. Defaults to 300s.
	// +optional
	// +kubebuilder:default="300s"
	DefaultInstanceWarmup *metav1.Duration `json:"defaultInstanceWarmup,omitempty"`

	// RefreshPreferences configure the ASG's instance refresh.
	// +optional
	RefreshPreferences *RefreshPreferences `json:"refreshPreferences,omitempty"`

	// CapacityRebalance enables Spot capacity rebalancing.
	// +optional
	CapacityRebalance bool `json:"capacityRebalance,omitempty"`

	// SuspendProcesses suspends ASG processes.
	// +optional
	SuspendProcesses *SuspendProcessesTypes `json:"suspendProcesses,omitempty"`

	// LifecycleHooks are the ASG's lifecycle hooks, by unique name (AWS
	// allows 50 per group).
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=50
	LifecycleHooks []AWSLifecycleHook `json:"lifecycleHooks,omitempty"`
}

// RefreshPreferences configure an ASG instance refresh.
// +kubebuilder:validation:XValidation:rule="!has(self.minHealthyPercentage) || !has(self.maxHealthyPercentage) || self.minHealthyPercentage <= self.maxHealthyPercentage",message="minHealthyPercentage must be less than or equal to maxHealthyPercentage",fieldPath=".minHealthyPercentage"
type RefreshPreferences struct {
	// Disable turns instance refresh off.
	// +optional
	Disable bool `json:"disable,omitempty"`

	// Strategy of the refresh; only Rolling.
	// +optional
	// +kubebuilder:validation:Enum=Rolling
	Strategy *string `json:"strategy,omitempty"`

	// InstanceWarmup is the seconds until a new instance is healthy.
	// +optional
	// +kubebuilder:validation:Minimum=0
	InstanceWarmup *int64 `json:"instanceWarmup,omitempty"`

	// MinHealthyPercentage is the capacity percentage that must stay healthy.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	MinHealthyPercentage *int64 `json:"minHealthyPercentage,omitempty"`

	// MaxHealthyPercentage is the capacity percentage allowed during the refresh.
	// +optional
	// +kubebuilder:validation:Minimum=100
	// +kubebuilder:validation:Maximum=200
	MaxHealthyPercentage *int64 `json:"maxHealthyPercentage,omitempty"`

	// ScaleInProtectedInstances is what to do with scale-in protected instances.
	// +optional
	// +kubebuilder:validation:Enum=Refresh;Ignore;Wait
	ScaleInProtectedInstances *string `json:"scaleInProtectedInstances,omitempty"`

	// StandbyInstances is what to do with standby instances.
	// +optional
	// +kubebuilder:validation:Enum=Terminate;Ignore;Wait
	StandbyInstances *string `json:"standbyInstances,omitempty"`
}

// MixedInstancesPolicy mixes instance types and purchase options in an ASG.
type MixedInstancesPolicy struct {
	// InstancesDistribution splits on-demand and Spot capacity.
	// +optional
	InstancesDistribution *InstancesDistribution `json:"instancesDistribution,omitempty"`

	// Overrides are the instance types to use.
	// +optional
	Overrides []Overrides `json:"overrides,omitempty"`
}

// InstancesDistribution splits on-demand and Spot capacity.
type InstancesDistribution struct {
	// OnDemandAllocationStrategy is prioritized or lowest-price.
	// +optional
	// +kubebuilder:validation:Enum=prioritized;lowest-price
	// +kubebuilder:default=prioritized
	OnDemandAllocationStrategy string `json:"onDemandAllocationStrategy,omitempty"`

	// SpotAllocationStrategy picks Spot pools.
	// +optional
	// +kubebuilder:validation:Enum=lowest-price;capacity-optimized;capacity-optimized-prioritized;price-capacity-optimized
	// +kubebuilder:default=lowest-price
	SpotAllocationStrategy string `json:"spotAllocationStrategy,omitempty"`

	// OnDemandBaseCapacity is the minimum on-demand capacity.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	OnDemandBaseCapacity *int64 `json:"onDemandBaseCapacity,omitempty"`

	// OnDemandPercentageAboveBaseCapacity is the on-demand percentage above the base.
	// +optional
	// +kubebuilder:default=100
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	OnDemandPercentageAboveBaseCapacity *int64 `json:"onDemandPercentageAboveBaseCapacity,omitempty"`
}

// Overrides is an instance type of a mixed instances policy.
type Overrides struct {
	// InstanceType is the EC2 instance type.
	// +required
	// +kubebuilder:validation:MinLength=1
	InstanceType string `json:"instanceType"`

	// WeightedCapacity is the capacity units this type counts for.
	// +optional
	WeightedCapacity *string `json:"weightedCapacity,omitempty"`
}

// SuspendProcessesTypes suspends ASG processes.
type SuspendProcessesTypes struct {
	// All suspends every process.
	// +optional
	All bool `json:"all,omitempty"`

	// Processes suspends individual processes.
	// +optional
	Processes *Processes `json:"processes,omitempty"`
}

// Processes lists the ASG processes that can be suspended.
type Processes struct {
	// Launch process.
	// +optional
	Launch *bool `json:"launch,omitempty"`
	// Terminate process.
	// +optional
	Terminate *bool `json:"terminate,omitempty"`
	// AddToLoadBalancer process.
	// +optional
	AddToLoadBalancer *bool `json:"addToLoadBalancer,omitempty"`
	// AlarmNotification process.
	// +optional
	AlarmNotification *bool `json:"alarmNotification,omitempty"`
	// AZRebalance process.
	// +optional
	AZRebalance *bool `json:"azRebalance,omitempty"`
	// HealthCheck process.
	// +optional
	HealthCheck *bool `json:"healthCheck,omitempty"`
	// InstanceRefresh process.
	// +optional
	InstanceRefresh *bool `json:"instanceRefresh,omitempty"`
	// ReplaceUnhealthy process.
	// +optional
	ReplaceUnhealthy *bool `json:"replaceUnhealthy,omitempty"`
	// ScheduledActions process.
	// +optional
	ScheduledActions *bool `json:"scheduledActions,omitempty"`
}

// AWSMachinePoolInstanceStatus is the status of one instance of the ASG.
type AWSMachinePoolInstanceStatus struct {
	// InstanceID of the EC2 instance.
	// +optional
	InstanceID string `json:"instanceID,omitempty"`

	// Version is the Kubernetes version of the instance.
	// +optional
	Version *string `json:"version,omitempty"`
}

// AWSMachinePoolStatus is the observed state of an AWSMachinePool.
type AWSMachinePoolStatus struct {
	// Ready is true when the ASG exists and is usable.
	// +optional
	Ready bool `json:"ready"`
	// Replicas is the number of instances in the ASG.
	// +optional
	Replicas int32 `json:"replicas"`
	// Conditions are the observations of the pool's current state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Instances holds the status of each instance.
	// +optional
	Instances []AWSMachinePoolInstanceStatus `json:"instances,omitempty"`
	// LaunchTemplateID is the ID of the launch template.
	// +optional
	LaunchTemplateID string `json:"launchTemplateID,omitempty"`
	// LaunchTemplateVersion is the version of the launch template in use.
	// +optional
	LaunchTemplateVersion *string `json:"launchTemplateVersion,omitempty"`
	// FailureReason is set on a terminal problem, as a succinct machine-readable value.
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`
	// FailureMessage is set on a terminal problem, as a human-readable message.
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`
	// ASGStatus is the ASG's status as AWS reports it.
	// +optional
	ASGStatus *string `json:"asgStatus,omitempty"`
	// InfrastructureMachineKind is the kind of the per-instance objects, if any.
	// +optional
	InfrastructureMachineKind string `json:"infrastructureMachineKind,omitempty"`
	// ObservedGeneration is the latest generation the controller observed.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=awsmachinepools,shortName=awsmp,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready",description="ASG is ready"
// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".status.replicas",description="Number of instances"
// +kubebuilder:printcolumn:name="MinSize",type="integer",JSONPath=".spec.minSize",description="Minimum size"
// +kubebuilder:printcolumn:name="MaxSize",type="integer",JSONPath=".spec.maxSize",description="Maximum size"
// +kubebuilder:printcolumn:name="LaunchTemplate ID",type="string",JSONPath=".status.launchTemplateID",description="Launch template ID"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"

// AWSMachinePool is an AWS Auto Scaling Group backing a MachinePool.
type AWSMachinePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec AWSMachinePoolSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status AWSMachinePoolStatus `json:"status,omitempty"`
}

// GetConditions returns the pool's conditions.
func (p *AWSMachinePool) GetConditions() []metav1.Condition { return p.Status.Conditions }

// SetConditions replaces the pool's conditions.
func (p *AWSMachinePool) SetConditions(c []metav1.Condition) { p.Status.Conditions = c }

// +kubebuilder:object:root=true

// AWSMachinePoolList is a list of AWSMachinePools.
type AWSMachinePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the pools.
	Items []AWSMachinePool `json:"items"`
}
