package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ManagedMachineAMIType is the AMI type of an EKS managed node group.
// +kubebuilder:validation:Enum=AL2_x86_64;AL2_x86_64_GPU;AL2_ARM_64;CUSTOM;BOTTLEROCKET_ARM_64;BOTTLEROCKET_x86_64;BOTTLEROCKET_ARM_64_FIPS;BOTTLEROCKET_x86_64_FIPS;BOTTLEROCKET_ARM_64_NVIDIA;BOTTLEROCKET_x86_64_NVIDIA;WINDOWS_CORE_2019_x86_64;WINDOWS_FULL_2019_x86_64;WINDOWS_CORE_2022_x86_64;WINDOWS_FULL_2022_x86_64;AL2023_x86_64_STANDARD;AL2023_ARM_64_STANDARD;AL2023_x86_64_NEURON;AL2023_x86_64_NVIDIA;AL2023_ARM_64_NVIDIA
type ManagedMachineAMIType string

// ManagedMachinePoolCapacityType is the purchase option of a node group.
// +kubebuilder:validation:Enum=onDemand;spot
type ManagedMachinePoolCapacityType string

const (
	// ManagedMachinePoolCapacityTypeOnDemand is on-demand capacity (the default).
	ManagedMachinePoolCapacityTypeOnDemand ManagedMachinePoolCapacityType = "onDemand"
	// ManagedMachinePoolCapacityTypeSpot is Spot capacity.
	ManagedMachinePoolCapacityTypeSpot ManagedMachinePoolCapacityType = "spot"
)

// TaintEffect is the effect of an EKS node group taint.
// +kubebuilder:validation:Enum=no-schedule;no-execute;prefer-no-schedule
type TaintEffect string

const (
	// TaintEffectNoSchedule is Kubernetes' NoSchedule.
	TaintEffectNoSchedule TaintEffect = "no-schedule"
	// TaintEffectNoExecute is Kubernetes' NoExecute.
	TaintEffectNoExecute TaintEffect = "no-execute"
	// TaintEffectPreferNoSchedule is Kubernetes' PreferNoSchedule.
	TaintEffectPreferNoSchedule TaintEffect = "prefer-no-schedule"
)

// Taint is an EKS node group taint.
type Taint struct {
	// Key of the taint.
	// +required
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key"`
	// Value of the taint.
	// +optional
	Value string `json:"value,omitempty"`
	// Effect is no-schedule, no-execute or prefer-no-schedule.
	// +required
	Effect TaintEffect `json:"effect"`
}

// ManagedMachinePoolScaling is the size range of a node group.
// +kubebuilder:validation:XValidation:rule="!has(self.minSize) || !has(self.maxSize) || self.minSize <= self.maxSize",message="scaling.minSize must be less than or equal to scaling.maxSize",fieldPath=".minSize"
type ManagedMachinePoolScaling struct {
	// MinSize of the node group.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinSize *int32 `json:"minSize,omitempty"`
	// MaxSize of the node group.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxSize *int32 `json:"maxSize,omitempty"`
}

// ManagedRemoteAccess configures SSH access to the nodes.
type ManagedRemoteAccess struct {
	// SSHKeyName is the EC2 key pair.
	// +optional
	SSHKeyName *string `json:"sshKeyName,omitempty"`
	// SourceSecurityGroups may reach the nodes over SSH.
	// +optional
	SourceSecurityGroups []string `json:"sourceSecurityGroups,omitempty"`
	// Public allows SSH from anywhere.
	// +optional
	Public bool `json:"public,omitempty"`
}

// UpdateConfig bounds unavailability during node group updates: maxUnavailable or
// maxUnavailablePercentage, not both.
// +kubebuilder:validation:XValidation:rule="!(has(self.maxUnavailable) && has(self.maxUnavailablePercentage))",message="maxUnavailable and maxUnavailablePercentage are mutually exclusive",fieldPath=".maxUnavailablePercentage"
type UpdateConfig struct {
	// MaxUnavailable is the maximum number of nodes unavailable at once.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxUnavailable *int32 `json:"maxUnavailable,omitempty"`

	// MaxUnavailablePercentage is the maximum percentage of nodes unavailable at once.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	MaxUnavailablePercentage *int32 `json:"maxUnavailablePercentage,omitempty"`
}

// AnnotationEKSForceUpdate on an AWSManagedMachinePool set to "true" makes every
// UpdateNodegroupVersion mpool asks for a forced one (EKS's force: true: a node whose
// drain a PodDisruptionBudget blocks is terminated anyway), and retries at once, forced,
// an update EKS failed with PodEvictionFailure. CAPA has no such setting; remove the
// annotation once the update is through.
const AnnotationEKSForceUpdate = "mpool.dev/eks-force-update"

// AWSManagedMachinePoolSpec is the desired state of an AWSManagedMachinePool: one EKS
// managed node group.
//
// With spec.awsLaunchTemplate, what EKS refuses beside a launch template is refused at
// admission, as CAPA's webhook and EKS's launch template rules do: the instance type and
// the root disk are the template's (awsLaunchTemplate.instanceType, .rootVolume), SSH
// access is the template's key pair and security groups (not spec.remoteAccess), the IAM
// instance profile is EKS's (from spec.roleName), Spot is spec.capacityType, and a custom
// AMI (awsLaunchTemplate.ami.id) has no EKS release version (spec.amiVersion). A node
// group keeps the launch template it was created with (or none), under the same name.
// +kubebuilder:validation:XValidation:rule="!has(self.awsLaunchTemplate) || !has(self.instanceType)",message="spec.instanceType cannot be set with spec.awsLaunchTemplate: set spec.awsLaunchTemplate.instanceType instead",fieldPath=".instanceType"
// +kubebuilder:validation:XValidation:rule="!has(self.awsLaunchTemplate) || !has(self.diskSize)",message="spec.diskSize cannot be set with spec.awsLaunchTemplate: set spec.awsLaunchTemplate.rootVolume.size instead",fieldPath=".diskSize"
// +kubebuilder:validation:XValidation:rule="!has(self.awsLaunchTemplate) || !has(self.remoteAccess)",message="spec.remoteAccess cannot be set with spec.awsLaunchTemplate (EKS refuses remote access with a launch template): set spec.awsLaunchTemplate.sshKeyName and additionalSecurityGroups instead",fieldPath=".remoteAccess"
// +kubebuilder:validation:XValidation:rule="!has(self.awsLaunchTemplate) || !has(self.awsLaunchTemplate.iamInstanceProfile) || size(self.awsLaunchTemplate.iamInstanceProfile) == 0",message="spec.awsLaunchTemplate.iamInstanceProfile is prohibited in an EKS managed node group's launch template: EKS sets the instance profile of the node role (spec.roleName)",fieldPath=".awsLaunchTemplate.iamInstanceProfile"
// +kubebuilder:validation:XValidation:rule="!has(self.awsLaunchTemplate) || !has(self.awsLaunchTemplate.spotMarketOptions)",message="spec.awsLaunchTemplate.spotMarketOptions is prohibited in an EKS managed node group's launch template: set spec.capacityType: spot instead",fieldPath=".awsLaunchTemplate.spotMarketOptions"
// +kubebuilder:validation:XValidation:rule="!has(self.awsLaunchTemplate) || !has(self.awsLaunchTemplate.ami) || !has(self.awsLaunchTemplate.ami.id) || !has(self.amiVersion)",message="spec.amiVersion cannot be set with a custom AMI (spec.awsLaunchTemplate.ami.id): EKS has no release version for it",fieldPath=".amiVersion"
// +kubebuilder:validation:XValidation:rule="has(self.awsLaunchTemplate) == has(oldSelf.awsLaunchTemplate)",message="spec.awsLaunchTemplate cannot be added to or removed from an existing node group: EKS keeps the launch template a node group was created with (or none); create a new pool instead",fieldPath=".awsLaunchTemplate"
// +kubebuilder:validation:XValidation:rule="!has(self.awsLaunchTemplate) || !has(oldSelf.awsLaunchTemplate) || (has(self.awsLaunchTemplate.name) == has(oldSelf.awsLaunchTemplate.name) && (!has(self.awsLaunchTemplate.name) || self.awsLaunchTemplate.name == oldSelf.awsLaunchTemplate.name))",message="spec.awsLaunchTemplate.name is immutable: EKS updates a node group only to versions of the launch template it was created with",fieldPath=".awsLaunchTemplate.name"
type AWSManagedMachinePoolSpec struct {
	// EKSNodegroupName is the node group's name; generated when empty. Immutable.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="eksNodegroupName is immutable"
	EKSNodegroupName string `json:"eksNodegroupName,omitempty"`

	// AvailabilityZones are the zones of the node group. Immutable.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="availabilityZones is immutable"
	AvailabilityZones []string `json:"availabilityZones,omitempty"`

	// AvailabilityZoneSubnetType selects public, private or all subnets of the zones.
	// +optional
	AvailabilityZoneSubnetType *AZSubnetType `json:"availabilityZoneSubnetType,omitempty"`

	// SubnetIDs are the subnets of the node group. Immutable.
	// +optional
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="subnetIDs is immutable"
	SubnetIDs []string `json:"subnetIDs,omitempty"`

	// AdditionalTags are extra tags set on the node group.
	// +optional
	AdditionalTags Tags `json:"additionalTags,omitempty"`

	// RoleAdditionalPolicies are extra IAM policies attached to the node role.
	// +optional
	RoleAdditionalPolicies []string `json:"roleAdditionalPolicies,omitempty"`

	// RoleName is the IAM role of the nodes. Immutable.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="roleName is immutable"
	RoleName string `json:"roleName,omitempty"`

	// RolePath is the IAM path of the node role.
	// +optional
	RolePath string `json:"rolePath,omitempty"`

	// RolePermissionsBoundary is the permissions boundary of the node role.
	// +optional
	RolePermissionsBoundary string `json:"rolePermissionsBoundary,omitempty"`

	// AMIVersion is the AMI release version, for example 1.29.0-20240213.
	// +optional
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:Pattern=`^(\d+\.\d+\.\d+)-\d{8}$`
	AMIVersion *string `json:"amiVersion,omitempty"`

	// AMIType is the AMI type. Defaults to AL2_x86_64. Immutable.
	// +optional
	// +kubebuilder:default=AL2_x86_64
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="amiType is immutable"
	AMIType *ManagedMachineAMIType `json:"amiType,omitempty"`

	// Labels are Kubernetes labels set on the nodes.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// Taints are set on the nodes.
	// +optional
	Taints []Taint `json:"taints,omitempty"`

	// DiskSize is the root disk size in GiB. Immutable.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="diskSize is immutable"
	DiskSize *int32 `json:"diskSize,omitempty"`

	// InstanceType is the EC2 instance type. Immutable.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="instanceType is immutable"
	InstanceType *string `json:"instanceType,omitempty"`

	// Scaling is the size range of the node group.
	// +optional
	Scaling *ManagedMachinePoolScaling `json:"scaling,omitempty"`

	// RemoteAccess configures SSH access. Immutable.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="remoteAccess is immutable"
	RemoteAccess *ManagedRemoteAccess `json:"remoteAccess,omitempty"`

	// ProviderIDList holds the providerID of every node of the group.
	// +optional
	// +kubebuilder:validation:MaxItems=10000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	ProviderIDList []string `json:"providerIDList,omitempty"`

	// CapacityType is onDemand (default) or spot. Immutable.
	// +optional
	// +kubebuilder:default=onDemand
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="capacityType is immutable"
	CapacityType *ManagedMachinePoolCapacityType `json:"capacityType,omitempty"`

	// UpdateConfig bounds unavailability during updates.
	// +optional
	UpdateConfig *UpdateConfig `json:"updateConfig,omitempty"`

	// AWSLaunchTemplate, when set, runs the node group from a launch template mpool
	// creates (named awsLaunchTemplate.name, else "<AWSManagedControlPlane>-<pool>") and
	// versions: a change of it is a new template version, which EKS rolls the nodes to.
	// Added or removed only with a new node group; see the spec's rules for what it
	// excludes.
	// +optional
	AWSLaunchTemplate *AWSLaunchTemplate `json:"awsLaunchTemplate,omitempty"`
}

// AWSManagedMachinePoolStatus is the observed state of an AWSManagedMachinePool.
type AWSManagedMachinePoolStatus struct {
	// Ready is true when the node group is active.
	// +optional
	Ready bool `json:"ready"`
	// Replicas is the number of nodes of the group.
	// +optional
	Replicas int32 `json:"replicas"`
	// LaunchTemplateID is the ID of the launch template mpool made from
	// spec.awsLaunchTemplate, if any.
	// +optional
	LaunchTemplateID *string `json:"launchTemplateID,omitempty"`
	// LaunchTemplateVersion is the launch template version the node group launches
	// new nodes from.
	// +optional
	LaunchTemplateVersion *string `json:"launchTemplateVersion,omitempty"`
	// FailureReason is set on a terminal problem, as a succinct machine-readable value.
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`
	// FailureMessage is set on a terminal problem, as a human-readable message.
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`
	// Conditions are the observations of the pool's current state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// InfrastructureMachineKind is the kind of the per-instance objects, if any.
	// +optional
	InfrastructureMachineKind string `json:"infrastructureMachineKind,omitempty"`
	// ObservedGeneration is the latest generation the controller observed.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=awsmanagedmachinepools,shortName=awsmmp,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready",description="Node group is ready"
// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".status.replicas",description="Number of nodes"
// +kubebuilder:printcolumn:name="InstanceType",type="string",JSONPath=".spec.instanceType",description="Instance type"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"

// AWSManagedMachinePool is an EKS managed node group backing a MachinePool.
type AWSManagedMachinePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec AWSManagedMachinePoolSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status AWSManagedMachinePoolStatus `json:"status,omitempty"`
}

// GetConditions returns the pool's conditions.
func (p *AWSManagedMachinePool) GetConditions() []metav1.Condition { return p.Status.Conditions }

// SetConditions replaces the pool's conditions.
func (p *AWSManagedMachinePool) SetConditions(c []metav1.Condition) { p.Status.Conditions = c }

// +kubebuilder:object:root=true

// AWSManagedMachinePoolList is a list of AWSManagedMachinePools.
type AWSManagedMachinePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the pools.
	Items []AWSManagedMachinePool `json:"items"`
}
