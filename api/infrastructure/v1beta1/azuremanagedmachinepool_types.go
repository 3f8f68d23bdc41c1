package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kinds, finalizers and modes of the AKS part of the API.
const (
	// AzureManagedControlPlaneKind is the kind naming an AKS cluster.
	AzureManagedControlPlaneKind = "AzureManagedControlPlane"
	// AzureManagedMachinePoolMachineKind is the kind of an AKS pool's per-instance objects.
	AzureManagedMachinePoolMachineKind = "AzureManagedMachinePoolMachine"
	// AzureManagedMachinePoolFinalizer is added to AzureManagedMachinePools.
	AzureManagedMachinePoolFinalizer = "azuremanagedmachinepools.infrastructure.cluster.x-k8s.io"
	// AzureManagedMachinePoolMachineFinalizer is added to AzureManagedMachinePoolMachines.
	AzureManagedMachinePoolMachineFinalizer = "azuremanagedmachinepoolmachine.infrastructure.cluster.x-k8s.io"
	// NodePoolModeSystem is an agent pool that runs the cluster's system pods.
	NodePoolModeSystem = "System"
	// NodePoolModeUser is an agent pool for workloads only.
	NodePoolModeUser = "User"
)

// AzureManagedControlPlaneSpec names an AKS cluster that exists: mpool manages its agent
// pools (AzureManagedMachinePools) and never creates, changes or deletes the cluster
// itself. It is the subset of CAPZ's AzureManagedControlPlane that places an agent pool;
// the AKS cluster is named after the object, as CAPZ names it.
type AzureManagedControlPlaneSpec struct {
	// SubscriptionID is the Azure subscription of the AKS cluster.
	// +required
	// +kubebuilder:validation:MinLength=1
	SubscriptionID string `json:"subscriptionID"`

	// ResourceGroupName is the resource group of the AKS cluster.
	// +required
	// +kubebuilder:validation:MinLength=1
	ResourceGroupName string `json:"resourceGroupName"`

	// NodeResourceGroupName is the resource group AKS keeps the nodes' scale sets in
	// (default MC_<resourceGroupName>_<name>_<location>). mpool reads it; it does not
	// change it.
	// +optional
	NodeResourceGroupName string `json:"nodeResourceGroupName,omitempty"`

	// Location is the Azure region of the AKS cluster.
	// +required
	// +kubebuilder:validation:MinLength=1
	Location string `json:"location"`

	// Version is the cluster's Kubernetes version (v1.31.2). mpool reads it; it does not
	// upgrade the control plane.
	// +required
	// +kubebuilder:validation:Pattern=`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)([-0-9a-zA-Z_\.+]*)?$`
	Version string `json:"version"`

	// IdentityRef names the AzureClusterIdentity whose credentials the agent pools are
	// reached with; unset uses the manager's own.
	// +optional
	// +kubebuilder:validation:XValidation:rule="has(self.kind) && self.kind == 'AzureClusterIdentity'",message="identityRef.kind must be AzureClusterIdentity",fieldPath=".kind"
	// +kubebuilder:validation:XValidation:rule="has(self.name) && self.name != ''",message="identityRef.name must name an AzureClusterIdentity",fieldPath=".name"
	IdentityRef *corev1.ObjectReference `json:"identityRef,omitempty"`
}

// AzureManagedControlPlaneStatus is the observed state of an AzureManagedControlPlane.
type AzureManagedControlPlaneStatus struct {
	// Ready is true when the AKS cluster exists.
	// +optional
	Ready bool `json:"ready"`
	// Conditions are the observations of the control plane's current state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=azuremanagedcontrolplanes,shortName=amcp,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Location",type="string",JSONPath=".spec.location",description="Azure region"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".spec.version",description="Kubernetes version"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"

// AzureManagedControlPlane names an existing AKS cluster for the AzureManagedMachinePools
// of its Cluster, which names it as its spec.infrastructureRef. CAPZ serves this kind as
// the Cluster's controlPlaneRef (with an AzureManagedCluster as infrastructureRef), where
// it also creates the cluster; mpool serves the subset that places agent pools, in the
// infrastructure group its engine reads placements from.
type AzureManagedControlPlane struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec AzureManagedControlPlaneSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status AzureManagedControlPlaneStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// AzureManagedControlPlaneList is a list of AzureManagedControlPlanes.
type AzureManagedControlPlaneList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the control planes.
	Items []AzureManagedControlPlane `json:"items"`
}

// AKSTaint is an agent pool taint, in CAPZ's shape.
type AKSTaint struct {
	// Effect is NoSchedule, NoExecute or PreferNoSchedule.
	// +required
	// +kubebuilder:validation:Enum=NoSchedule;NoExecute;PreferNoSchedule
	Effect string `json:"effect"`
	// Key of the taint.
	// +required
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key"`
	// Value of the taint.
	// +optional
	Value string `json:"value"`
}

// AKSKubeletConfig is the subset of kubelet settings AKS takes per agent pool, in
// CAPZ's shape.
type AKSKubeletConfig struct {
	// CPUManagerPolicy is none or static.
	// +optional
	// +kubebuilder:validation:Enum=none;static
	CPUManagerPolicy *string `json:"cpuManagerPolicy,omitempty"`
	// CPUCfsQuota enables CFS quota enforcement for containers with CPU limits.
	// +optional
	CPUCfsQuota *bool `json:"cpuCfsQuota,omitempty"`
	// CPUCfsQuotaPeriod is the CFS quota period, ending in "ms".
	// +optional
	CPUCfsQuotaPeriod *string `json:"cpuCfsQuotaPeriod,omitempty"`
	// ImageGcHighThreshold is the disk usage percentage that always runs image garbage collection.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	ImageGcHighThreshold *int32 `json:"imageGcHighThreshold,omitempty"`
	// ImageGcLowThreshold is the disk usage percentage below which image garbage collection never runs.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	ImageGcLowThreshold *int32 `json:"imageGcLowThreshold,omitempty"`
	// TopologyManagerPolicy is none, best-effort, restricted or single-numa-node.
	// +optional
	// +kubebuilder:validation:Enum=none;best-effort;restricted;single-numa-node
	TopologyManagerPolicy *string `json:"topologyManagerPolicy,omitempty"`
	// AllowedUnsafeSysctls are unsafe sysctls or patterns (ending in *) pods may set.
	// +optional
	AllowedUnsafeSysctls []string `json:"allowedUnsafeSysctls,omitempty"`
	// FailSwapOn fails the kubelet's start when swap is on.
	// +optional
	FailSwapOn *bool `json:"failSwapOn,omitempty"`
	// ContainerLogMaxSizeMB is the size of a container log file before it is rotated.
	// +optional
	ContainerLogMaxSizeMB *int32 `json:"containerLogMaxSizeMB,omitempty"`
	// ContainerLogMaxFiles is the number of container log files kept, at least 2.
	// +optional
	// +kubebuilder:validation:Minimum=2
	ContainerLogMaxFiles *int32 `json:"containerLogMaxFiles,omitempty"`
	// PodMaxPids is the maximum number of processes per pod (-1: unlimited).
	// +optional
	// +kubebuilder:validation:Minimum=-1
	PodMaxPids *int32 `json:"podMaxPids,omitempty"`
}

// AKSLinuxOSConfig is the subset of CAPZ's linuxOSConfig mpool serves: its sysctls are
// not served (refused at admission as an unknown field).
type AKSLinuxOSConfig struct {
	// SwapFileSizeMB is the size of the swap file created on each node.
	// +optional
	// +kubebuilder:validation:Minimum=1
	SwapFileSizeMB *int32 `json:"swapFileSizeMB,omitempty"`
	// TransparentHugePageDefrag is always, defer, defer+madvise, madvise or never.
	// +optional
	// +kubebuilder:validation:Enum=always;defer;defer+madvise;madvise;never
	TransparentHugePageDefrag *string `json:"transparentHugePageDefrag,omitempty"`
	// TransparentHugePageEnabled is always, madvise or never.
	// +optional
	// +kubebuilder:validation:Enum=always;madvise;never
	TransparentHugePageEnabled *string `json:"transparentHugePageEnabled,omitempty"`
}

// AzureManagedMachinePoolSpec is the desired state of an AzureManagedMachinePool: one
// agent pool of an AKS cluster, in CAPZ's v1beta1 shape. What AKS cannot change on an
// existing agent pool is refused on update naming the field, as CAPZ's webhook does;
// what mpool does not serve (enableUltraSSD, kubeletDiskType,
// asoManagedClustersAgentPoolPatches) is refused naming the field, and
// linuxOSConfig.sysctls is an unknown field (refused by strict field validation, as
// kubectl's default, dropped otherwise).
// +kubebuilder:validation:XValidation:rule="!has(self.scaleSetPriority) || self.scaleSetPriority == 'Spot' || !has(self.spotMaxPrice)",message="spec.spotMaxPrice needs spec.scaleSetPriority Spot",fieldPath=".spotMaxPrice"
// +kubebuilder:validation:XValidation:rule="!has(self.scaleSetPriority) || self.scaleSetPriority != 'Spot' || self.mode != 'System'",message="spec.scaleSetPriority Spot is not allowed for a System pool (AKS runs system pods on regular VMs): use mode User",fieldPath=".scaleSetPriority"
// +kubebuilder:validation:XValidation:rule="!has(self.osType) || self.osType != 'Windows' || self.mode != 'System'",message="spec.osType Windows is not allowed for a System pool: AKS's system pools run Linux",fieldPath=".osType"
// +kubebuilder:validation:XValidation:rule="!has(self.osType) || self.osType != 'Windows'",message="spec.osType Windows is not served by mpool's AKS provider yet: use Linux",fieldPath=".osType"
// +kubebuilder:validation:XValidation:rule="!has(self.nodePublicIPPrefixID) || (has(self.enableNodePublicIP) && self.enableNodePublicIP)",message="spec.nodePublicIPPrefixID needs spec.enableNodePublicIP: true",fieldPath=".nodePublicIPPrefixID"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.name) || (has(self.name) && self.name == oldSelf.name)",message="spec.name is immutable: AKS cannot rename an agent pool",fieldPath=".name"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.osType) || (has(self.osType) && self.osType == oldSelf.osType)",message="spec.osType is immutable: AKS cannot change it on an existing agent pool",fieldPath=".osType"
// +kubebuilder:validation:XValidation:rule="self.sku == oldSelf.sku",message="spec.sku is immutable: AKS cannot change an agent pool's VM size; create a new pool instead",fieldPath=".sku"
// +kubebuilder:validation:XValidation:rule="has(self.osDiskSizeGB) == has(oldSelf.osDiskSizeGB) && (!has(self.osDiskSizeGB) || self.osDiskSizeGB == oldSelf.osDiskSizeGB)",message="spec.osDiskSizeGB is immutable: AKS cannot change it on an existing agent pool",fieldPath=".osDiskSizeGB"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.osDiskType) || (has(self.osDiskType) && self.osDiskType == oldSelf.osDiskType)",message="spec.osDiskType is immutable: AKS cannot change it on an existing agent pool",fieldPath=".osDiskType"
// +kubebuilder:validation:XValidation:rule="has(self.availabilityZones) == has(oldSelf.availabilityZones) && (!has(self.availabilityZones) || self.availabilityZones == oldSelf.availabilityZones)",message="spec.availabilityZones is immutable: AKS cannot change an agent pool's zones",fieldPath=".availabilityZones"
// +kubebuilder:validation:XValidation:rule="has(self.maxPods) == has(oldSelf.maxPods) && (!has(self.maxPods) || self.maxPods == oldSelf.maxPods)",message="spec.maxPods is immutable: AKS cannot change it on an existing agent pool",fieldPath=".maxPods"
// +kubebuilder:validation:XValidation:rule="has(self.scaleSetPriority) == has(oldSelf.scaleSetPriority) && (!has(self.scaleSetPriority) || self.scaleSetPriority == oldSelf.scaleSetPriority)",message="spec.scaleSetPriority is immutable: AKS cannot change it on an existing agent pool",fieldPath=".scaleSetPriority"
// +kubebuilder:validation:XValidation:rule="has(self.enableNodePublicIP) == has(oldSelf.enableNodePublicIP) && (!has(self.enableNodePublicIP) || self.enableNodePublicIP == oldSelf.enableNodePublicIP)",message="spec.enableNodePublicIP is immutable: AKS cannot change it on an existing agent pool",fieldPath=".enableNodePublicIP"
// +kubebuilder:validation:XValidation:rule="has(self.nodePublicIPPrefixID) == has(oldSelf.nodePublicIPPrefixID) && (!has(self.nodePublicIPPrefixID) || self.nodePublicIPPrefixID == oldSelf.nodePublicIPPrefixID)",message="spec.nodePublicIPPrefixID is immutable: AKS cannot change it on an existing agent pool",fieldPath=".nodePublicIPPrefixID"
// +kubebuilder:validation:XValidation:rule="has(self.kubeletConfig) == has(oldSelf.kubeletConfig) && (!has(self.kubeletConfig) || self.kubeletConfig == oldSelf.kubeletConfig)",message="spec.kubeletConfig is immutable: AKS cannot change it on an existing agent pool",fieldPath=".kubeletConfig"
// +kubebuilder:validation:XValidation:rule="has(self.linuxOSConfig) == has(oldSelf.linuxOSConfig) && (!has(self.linuxOSConfig) || self.linuxOSConfig == oldSelf.linuxOSConfig)",message="spec.linuxOSConfig is immutable: AKS cannot change it on an existing agent pool",fieldPath=".linuxOSConfig"
// +kubebuilder:validation:XValidation:rule="has(self.subnetName) == has(oldSelf.subnetName) && (!has(self.subnetName) || self.subnetName == oldSelf.subnetName)",message="spec.subnetName is immutable: AKS cannot move an agent pool to another subnet",fieldPath=".subnetName"
// +kubebuilder:validation:XValidation:rule="has(self.enableFIPS) == has(oldSelf.enableFIPS) && (!has(self.enableFIPS) || self.enableFIPS == oldSelf.enableFIPS)",message="spec.enableFIPS is immutable: AKS cannot change it on an existing agent pool",fieldPath=".enableFIPS"
// +kubebuilder:validation:XValidation:rule="has(self.enableEncryptionAtHost) == has(oldSelf.enableEncryptionAtHost) && (!has(self.enableEncryptionAtHost) || self.enableEncryptionAtHost == oldSelf.enableEncryptionAtHost)",message="spec.enableEncryptionAtHost is immutable: AKS cannot change it on an existing agent pool",fieldPath=".enableEncryptionAtHost"
type AzureManagedMachinePoolSpec struct {
	// AdditionalTags are extra tags set on the agent pool.
	// +optional
	AdditionalTags Tags `json:"additionalTags,omitempty"`

	// Name is the agent pool's name (default: the object's name): a lowercase letter,
	// then at most 11 lowercase letters and digits, as AKS requires. Immutable.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9]{0,11}$`
	Name *string `json:"name,omitempty"`

	// Mode is System or User. A System pool runs the cluster's system pods and keeps at
	// least one node.
	// +required
	// +kubebuilder:validation:Enum=System;User
	Mode string `json:"mode"`

	// SKU is the VM size of the nodes. Immutable.
	// +required
	// +kubebuilder:validation:MinLength=1
	SKU string `json:"sku"`

	// OSDiskSizeGB is the OS disk size of every node; 0 takes the VM size's default.
	// Immutable.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2048
	OSDiskSizeGB *int32 `json:"osDiskSizeGB,omitempty"`

	// AvailabilityZones are the zones of the nodes. Immutable.
	// +optional
	AvailabilityZones []string `json:"availabilityZones,omitempty"`

	// NodeLabels are Kubernetes labels set on the nodes.
	// +optional
	NodeLabels map[string]string `json:"nodeLabels,omitempty"`

	// Taints are set on the nodes.
	// +optional
	Taints []AKSTaint `json:"taints,omitempty"`

	// Scaling turns AKS's cluster autoscaler on for the pool, within minSize and maxSize.
	// +optional
	Scaling *ManagedMachinePoolScaling `json:"scaling,omitempty"`

	// MaxPods is the kubelet's --max-pods. Immutable.
	// +optional
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=250
	MaxPods *int32 `json:"maxPods,omitempty"`

	// OsDiskType is Managed (default) or Ephemeral. Immutable.
	// +optional
	// +kubebuilder:validation:Enum=Ephemeral;Managed
	// +kubebuilder:default=Managed
	OsDiskType *string `json:"osDiskType,omitempty"`

	// OSType is Linux (default). Windows is not served by mpool yet. Immutable.
	// +optional
	// +kubebuilder:validation:Enum=Linux;Windows
	// +kubebuilder:default:=Linux
	OSType *string `json:"osType,omitempty"`

	// EnableNodePublicIP gives every node a public IP address. Immutable.
	// +optional
	EnableNodePublicIP *bool `json:"enableNodePublicIP,omitempty"`

	// NodePublicIPPrefixID is the public IP prefix the nodes' addresses come from.
	// Immutable.
	// +optional
	NodePublicIPPrefixID *string `json:"nodePublicIPPrefixID,omitempty"`

	// ScaleSetPriority is Regular (default) or Spot. Immutable.
	// +optional
	// +kubebuilder:validation:Enum=Regular;Spot
	ScaleSetPriority *string `json:"scaleSetPriority,omitempty"`

	// ScaleDownMode is Delete (default) or Deallocate: what the autoscaler does with
	// the nodes it removes.
	// +optional
	// +kubebuilder:validation:Enum=Deallocate;Delete
	// +kubebuilder:default=Delete
	ScaleDownMode *string `json:"scaleDownMode,omitempty"`

	// SpotMaxPrice is the most to pay per hour for a Spot node, or -1 for up to the
	// regular price.
	// +optional
	SpotMaxPrice *resource.Quantity `json:"spotMaxPrice,omitempty"`

	// KubeletConfig are the nodes' kubelet settings. Immutable.
	// +optional
	KubeletConfig *AKSKubeletConfig `json:"kubeletConfig,omitempty"`

	// LinuxOSConfig are the nodes' Linux settings. Immutable.
	// +optional
	LinuxOSConfig *AKSLinuxOSConfig `json:"linuxOSConfig,omitempty"`

	// SubnetName is the subnet of the cluster's virtual network the nodes run in.
	// Immutable.
	// +optional
	SubnetName *string `json:"subnetName,omitempty"`

	// EnableFIPS runs a FIPS-enabled node image. Immutable.
	// +optional
	EnableFIPS *bool `json:"enableFIPS,omitempty"`

	// EnableEncryptionAtHost encrypts the nodes' disks at the host. Immutable.
	// +optional
	EnableEncryptionAtHost *bool `json:"enableEncryptionAtHost,omitempty"`

	// EnableUltraSSD is CAPZ's; not served by mpool (refused).
	// +optional
	// +kubebuilder:validation:XValidation:rule="false",message="spec.enableUltraSSD is not served by mpool's AKS provider: remove it"
	EnableUltraSSD *bool `json:"enableUltraSSD,omitempty"`

	// KubeletDiskType is CAPZ's; not served by mpool (refused).
	// +optional
	// +kubebuilder:validation:XValidation:rule="false",message="spec.kubeletDiskType is not served by mpool's AKS provider: remove it"
	KubeletDiskType *string `json:"kubeletDiskType,omitempty"`

	// ASOManagedClustersAgentPoolPatches is CAPZ's; not served by mpool (refused).
	// +optional
	// +kubebuilder:validation:XValidation:rule="false",message="spec.asoManagedClustersAgentPoolPatches is not served by mpool's AKS provider: remove it"
	ASOManagedClustersAgentPoolPatches []string `json:"asoManagedClustersAgentPoolPatches,omitempty"`

	// ProviderIDList holds the providerID of every node of the pool.
	// +optional
	// +kubebuilder:validation:MaxItems=10000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	ProviderIDList []string `json:"providerIDList,omitempty"`
}

// AzureManagedMachinePoolStatus is the observed state of an AzureManagedMachinePool.
type AzureManagedMachinePoolStatus struct {
	// Ready is true when the agent pool exists and no operation runs on it.
	// +optional
	Ready bool `json:"ready"`
	// Replicas is the number of nodes of the pool.
	// +optional
	Replicas int32 `json:"replicas"`
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
	// InfrastructureMachineKind is the kind of the per-instance objects.
	// +optional
	InfrastructureMachineKind string `json:"infrastructureMachineKind,omitempty"`
	// ObservedGeneration is the latest generation the controller observed.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// LongRunningOperationStates are the agent pool's operations in
	// progress that mpool started (CAPZ's field): a manager restarted
	// mid-operation resumes the poller from its data.
	// +optional
	LongRunningOperationStates []Future `json:"longRunningOperationStates,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=azuremanagedmachinepools,shortName=ammp,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready",description="Agent pool is ready"
// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".status.replicas",description="Number of nodes"
// +kubebuilder:printcolumn:name="Mode",type="string",JSONPath=".spec.mode",description="System or User"
// +kubebuilder:printcolumn:name="SKU",type="string",JSONPath=".spec.sku",description="VM size"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"
// +kubebuilder:validation:XValidation:rule="has(self.spec.name) || self.metadata.name.matches('^[a-z][a-z0-9]{0,11}$')",message="spec.name is required when metadata.name is not a valid agent pool name (a lowercase letter, then at most 11 lowercase letters and digits)",fieldPath=".spec.name"

// AzureManagedMachinePool is an agent pool of an AKS cluster backing a MachinePool.
type AzureManagedMachinePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec AzureManagedMachinePoolSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status AzureManagedMachinePoolStatus `json:"status,omitempty"`
}

// GetConditions returns the pool's conditions.
func (p *AzureManagedMachinePool) GetConditions() []metav1.Condition { return p.Status.Conditions }

// SetConditions replaces the pool's conditions.
func (p *AzureManagedMachinePool) SetConditions(c []metav1.Condition) { p.Status.Conditions = c }

// +kubebuilder:object:root=true

// AzureManagedMachinePoolList is a list of AzureManagedMachinePools.
type AzureManagedMachinePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the pools.
	Items []AzureManagedMachinePool `json:"items"`
}

// AzureManagedMachinePoolMachineSpec is the desired state of one node of an AKS agent
// pool.
type AzureManagedMachinePoolMachineSpec struct {
	// ProviderID is the node's providerID (azure:///subscriptions/.../virtualMachines/N);
	// it matches its Node's spec.providerID.
	// +required
	// +kubebuilder:validation:MinLength=1
	ProviderID string `json:"providerID"`

	// InstanceID is the AKS machine's name (the node's name, aks-<pool>-<n>-vmss000000).
	// +optional
	InstanceID string `json:"instanceID,omitempty"`
}

// AzureManagedMachinePoolMachineStatus is the observed state of one node of an AKS
// agent pool.
type AzureManagedMachinePoolMachineStatus struct {
	// NodeRef is a reference to the machine's Node.
	// +optional
	NodeRef *corev1.ObjectReference `json:"nodeRef,omitempty"`
	// Version is the Kubernetes version the machine runs.
	// +optional
	Version string `json:"version,omitempty"`
	// ProvisioningState is the machine's state as mpool reports it (Creating,
	// Succeeded, Failed, Deleting).
	// +optional
	ProvisioningState string `json:"provisioningState,omitempty"`
	// AvailabilityZone of the machine.
	// +optional
	AvailabilityZone string `json:"availabilityZone,omitempty"`
	// LatestModelApplied is true when the machine runs the agent pool's current
	// Kubernetes version and node image.
	// +optional
	LatestModelApplied bool `json:"latestModelApplied"`
	// Ready is true when the machine runs and its Node is Ready.
	// +optional
	Ready bool `json:"ready"`
	// FailureReason is set on a terminal problem, as a succinct machine-readable value.
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`
	// FailureMessage is set on a terminal problem, as a human-readable message.
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`
	// Conditions are the observations of the machine's current state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=azuremanagedmachinepoolmachines,shortName=ammpm,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".status.version",description="Kubernetes version"
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready",description="Machine is ready"
// +kubebuilder:printcolumn:name="State",type="string",JSONPath=".status.provisioningState",description="Provisioning state"
// +kubebuilder:printcolumn:name="ProviderID",type="string",priority=1,JSONPath=".spec.providerID",description="Provider ID"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"

// AzureManagedMachinePoolMachine is one node (AKS machine) of an AzureManagedMachinePool's
// agent pool; deleting it drains that node and removes it with the agent pool's
// deleteMachines. CAPZ keeps no per-instance object for AKS agent pools (its
// MachinePool Machines are for AzureMachinePools); mpool's engine reports every pool's
// instances this way.
type AzureManagedMachinePoolMachine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec AzureManagedMachinePoolMachineSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status AzureManagedMachinePoolMachineStatus `json:"status,omitempty"`
}

// GetConditions returns the machine's conditions.
func (m *AzureManagedMachinePoolMachine) GetConditions() []metav1.Condition {
	return m.Status.Conditions
}

// SetConditions replaces the machine's conditions.
func (m *AzureManagedMachinePoolMachine) SetConditions(c []metav1.Condition) {
	m.Status.Conditions = c
}

// +kubebuilder:object:root=true

// AzureManagedMachinePoolMachineList is a list of AzureManagedMachinePoolMachines.
type AzureManagedMachinePoolMachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the machines.
	Items []AzureManagedMachinePoolMachine `json:"items"`
}

func init() {
	SchemeBuilder.Register(&AzureManagedControlPlane{}, &AzureManagedControlPlaneList{},
		&AzureManagedMachinePool{}, &AzureManagedMachinePoolList{},
		&AzureManagedMachinePoolMachine{}, &AzureManagedMachinePoolMachineList{})
}
