package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
)

// Kinds, finalizers and conditions of the GCP provider.
const (
	// GCPMachinePoolMachineKind is the kind of a GCP pool's per-instance objects.
	GCPMachinePoolMachineKind = "GCPMachinePoolMachine"
	// GCPMachinePoolFinalizer is added to GCPMachinePools.
	GCPMachinePoolFinalizer = "gcpmachinepool.infrastructure.cluster.x-k8s.io"
	// GCPMachinePoolMachineFinalizer is added to GCPMachinePoolMachines.
	GCPMachinePoolMachineFinalizer = "gcpmachinepoolmachine.infrastructure.cluster.x-k8s.io"
	// InstanceGroupReadyCondition reports whether the managed instance group exists and
	// is usable (the engine's ScaleGroupReady, under the GCP name).
	InstanceGroupReadyCondition = "InstanceGroupReady"
	// InstanceTemplateReadyCondition reports whether the instance template of the pool's
	// current model exists.
	InstanceTemplateReadyCondition = "InstanceTemplateReady"
)

// GCPDiskType is a Compute Engine persistent disk type.
// +kubebuilder:validation:Enum=pd-standard;pd-ssd;pd-balanced;hyperdisk-balanced;local-ssd
type GCPDiskType string

// GCPPolicy is Enabled or Disabled.
// +kubebuilder:validation:Enum=Enabled;Disabled
type GCPPolicy string

// GCPPolicy values.
const (
	// GCPPolicyEnabled turns the option on.
	GCPPolicyEnabled GCPPolicy = "Enabled"
	// GCPPolicyDisabled turns the option off.
	GCPPolicyDisabled GCPPolicy = "Disabled"
)

// GCPMachinePoolSpec is the desired state of a GCPMachinePool: one managed instance
// group (zonal for one zone, regional for several) and the instance templates of its
// model. Its fields are CAPG's GCPMachinePool's (CAPG PR #1506, after GCPMachine), plus
// the zones and the rolling update strategy mpool's engine applies: the group's own
// update policy stays opportunistic, the engine surges, drains and deletes.
// +kubebuilder:validation:XValidation:rule="!has(self.confidentialCompute) || self.confidentialCompute == 'Disabled' || (has(self.onHostMaintenance) && self.onHostMaintenance == 'Terminate')",message="confidentialCompute needs onHostMaintenance Terminate: set spec.onHostMaintenance to Terminate or confidentialCompute to Disabled",fieldPath=".onHostMaintenance"
// +kubebuilder:validation:XValidation:rule="!has(self.provisioningModel) || self.provisioningModel != 'Spot' || !has(self.onHostMaintenance) || self.onHostMaintenance == 'Terminate'",message="Spot instances cannot migrate: set spec.onHostMaintenance to Terminate or leave it unset",fieldPath=".onHostMaintenance"
type GCPMachinePoolSpec struct {
	// ProviderIDList holds the providerID (gce://PROJECT/ZONE/INSTANCE) of every instance
	// of the group.
	// +optional
	// +kubebuilder:validation:MaxItems=10000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	ProviderIDList []string `json:"providerIDList,omitempty"`

	// InstanceType is the machine type of the instances, for example n2-standard-2.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
	InstanceType string `json:"instanceType"`

	// Zones are the zones of the group: one zone makes a zonal managed instance group,
	// several a regional one spread across them. Unset, the MachinePool's failure
	// domains, else the GCPCluster's failureDomains, else the region's zone "<region>-a".
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MinLength=1
	// +listType=set
	Zones []string `json:"zones,omitempty"`

	// Subnet is the subnetwork of the instances (a name in the GCPCluster's region, or a
	// full reference). Unset, the network's subnetwork of the region.
	// +optional
	// +kubebuilder:validation:MinLength=1
	Subnet *string `json:"subnet,omitempty"`

	// ImageFamily is the full reference to an image family
	// (projects/PROJECT/global/images/family/FAMILY).
	// +optional
	// +kubebuilder:validation:MinLength=1
	ImageFamily *string `json:"imageFamily,omitempty"`

	// Image is the full reference to an image; it takes precedence over imageFamily.
	// Neither set, CAPG's reference image family of the MachinePool's Kubernetes version.
	// +optional
	// +kubebuilder:validation:MinLength=1
	Image *string `json:"image,omitempty"`

	// AdditionalLabels are labels set on the instances besides the provider's (the
	// cluster's and role's); the pool's value wins over the GCPCluster's.
	// +optional
	AdditionalLabels map[string]string `json:"additionalLabels,omitempty"`

	// AdditionalMetadata are metadata items set on the instances besides user-data.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +kubebuilder:validation:XValidation:rule="self.all(m, m.key != 'user-data')",message="user-data is the bootstrap data the provider sets: remove it from spec.additionalMetadata"
	AdditionalMetadata []GCPMetadataItem `json:"additionalMetadata,omitempty"`

	// PublicIP gives the instances an external IP address.
	// +optional
	PublicIP *bool `json:"publicIP,omitempty"`

	// AdditionalNetworkTags are network tags of the instances besides the cluster's.
	// +optional
	// +listType=set
	AdditionalNetworkTags []string `json:"additionalNetworkTags,omitempty"`

	// RootDeviceSize is the size of the boot disk in GB. Defaults to 30.
	// +optional
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=65536
	RootDeviceSize int64 `json:"rootDeviceSize,omitempty"`

	// RootDeviceType is the boot disk's type. Defaults to pd-standard.
	// +optional
	RootDeviceType *GCPDiskType `json:"rootDeviceType,omitempty"`

	// AdditionalDisks are non-boot disks attached to every instance.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	AdditionalDisks []GCPAttachedDiskSpec `json:"additionalDisks,omitempty"`

	// ServiceAccount is the instances' service account and its scopes. Defaults to
	// email "default" with the cloud-platform scope.
	// +optional
	ServiceAccount *GCPServiceAccount `json:"serviceAccounts,omitempty"`

	// Preemptible makes the instances preemptible.
	// +optional
	Preemptible bool `json:"preemptible,omitempty"`

	// ProvisioningModel is Standard (default) or Spot.
	// +optional
	// +kubebuilder:validation:Enum=Standard;Spot
	ProvisioningModel *string `json:"provisioningModel,omitempty"`

	// IPForwarding lets the instances forward packets. Defaults to Enabled.
	// +optional
	// +kubebuilder:default=Enabled
	IPForwarding *GCPPolicy `json:"ipForwarding,omitempty"`

	// ShieldedInstanceConfig is the Shielded VM configuration of the instances.
	// +optional
	ShieldedInstanceConfig *GCPShieldedInstanceConfig `json:"shieldedInstanceConfig,omitempty"`

	// OnHostMaintenance is what a maintenance event does to an instance: Migrate (the
	// platform's default) or Terminate.
	// +optional
	// +kubebuilder:validation:Enum=Migrate;Terminate
	OnHostMaintenance *string `json:"onHostMaintenance,omitempty"`

	// ConfidentialCompute makes the instances Confidential VMs (Enabled,
	// AMDEncryptedVirtualization, AMDEncryptedVirtualizationNestedPaging,
	// IntelTrustedDomainExtensions) or not (Disabled); anything but Disabled needs
	// onHostMaintenance Terminate.
	// +optional
	// +kubebuilder:validation:Enum=Enabled;Disabled;AMDEncryptedVirtualization;AMDEncryptedVirtualizationNestedPaging;IntelTrustedDomainExtensions
	ConfidentialCompute *string `json:"confidentialCompute,omitempty"`

	// Strategy is how instances are replaced when the model changes: mpool's engine
	// surges within maxSurge, drains and deletes within maxUnavailable, in deletePolicy's
	// order; the MachinePool's minReadySeconds applies.
	// +optional
	// +kubebuilder:default={type: RollingUpdate, rollingUpdate: {deletePolicy: Oldest, maxSurge: 1, maxUnavailable: 0}}
	Strategy MachinePoolDeploymentStrategy `json:"strategy,omitempty"`
}

// GCPMetadataItem is one instance metadata item.
type GCPMetadataItem struct {
	// Key of the item.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9-_]+$`
	Key string `json:"key"`
	// Value of the item.
	// +optional
	Value *string `json:"value,omitempty"`
}

// GCPAttachedDiskSpec is a non-boot disk of an instance.
type GCPAttachedDiskSpec struct {
	// DeviceType is the disk's type. Defaults to pd-standard.
	// +optional
	DeviceType *GCPDiskType `json:"deviceType,omitempty"`
	// Size is the disk's size in GB. Defaults to 30; local-ssd disks are 375.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65536
	Size *int64 `json:"size,omitempty"`
}

// GCPServiceAccount is the service account of the instances and its OAuth scopes.
type GCPServiceAccount struct {
	// Email of the service account ("default": the project's Compute Engine default
	// service account).
	// +optional
	Email string `json:"email,omitempty"`
	// Scopes are the OAuth scopes of the instances' tokens.
	// +optional
	Scopes []string `json:"scopes,omitempty"`
}

// GCPShieldedInstanceConfig is the Shielded VM configuration of the instances.
type GCPShieldedInstanceConfig struct {
	// SecureBoot of the instances (default Disabled).
	// +optional
	SecureBoot GCPPolicy `json:"secureBoot,omitempty"`
	// VirtualizedTrustedPlatformModule of the instances (default Enabled).
	// +optional
	VirtualizedTrustedPlatformModule GCPPolicy `json:"virtualizedTrustedPlatformModule,omitempty"`
	// IntegrityMonitoring of the instances (default Enabled).
	// +optional
	IntegrityMonitoring GCPPolicy `json:"integrityMonitoring,omitempty"`
}

// GCPMachinePoolStatus is the observed state of a GCPMachinePool.
type GCPMachinePoolStatus struct {
	// Ready is true when the managed instance group exists and is usable.
	// +optional
	Ready bool `json:"ready"`
	// Replicas is the number of live instances of the group.
	// +optional
	Replicas int32 `json:"replicas"`
	// Conditions are the observations of the pool's current state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// InstanceTemplate is the name of the instance template the group creates new
	// instances from.
	// +optional
	InstanceTemplate string `json:"instanceTemplate,omitempty"`
	// FailureReason is set on a terminal problem, as a succinct machine-readable value.
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`
	// FailureMessage is set on a terminal problem, as a human-readable message.
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`
	// InfrastructureMachineKind is the kind of the per-instance objects
	// (GCPMachinePoolMachine).
	// +optional
	InfrastructureMachineKind string `json:"infrastructureMachineKind,omitempty"`
	// ObservedGeneration is the latest generation the controller observed.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=gcpmachinepools,shortName=gcpmp,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready",description="Managed instance group is ready"
// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".status.replicas",description="Number of instances"
// +kubebuilder:printcolumn:name="InstanceType",type="string",JSONPath=".spec.instanceType",description="Machine type"
// +kubebuilder:printcolumn:name="Template",type="string",priority=1,JSONPath=".status.instanceTemplate",description="Instance template"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"

// GCPMachinePool is a Compute Engine managed instance group backing a MachinePool.
type GCPMachinePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec GCPMachinePoolSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status GCPMachinePoolStatus `json:"status,omitempty"`
}

// GetConditions returns the pool's conditions.
func (p *GCPMachinePool) GetConditions() []metav1.Condition { return p.Status.Conditions }

// SetConditions replaces the pool's conditions.
func (p *GCPMachinePool) SetConditions(c []metav1.Condition) { p.Status.Conditions = c }

// +kubebuilder:object:root=true

// GCPMachinePoolList is a list of GCPMachinePools.
type GCPMachinePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the pools.
	Items []GCPMachinePool `json:"items"`
}

// GCPMachinePoolMachineSpec is the desired state of one instance of a managed instance
// group.
type GCPMachinePoolMachineSpec struct {
	// ProviderID is the instance's providerID (gce://PROJECT/ZONE/INSTANCE); it matches
	// its Node's spec.providerID.
	// +required
	// +kubebuilder:validation:MinLength=1
	ProviderID string `json:"providerID"`
	// InstanceID is the instance's name.
	// +optional
	InstanceID string `json:"instanceID,omitempty"`
}

// GCPMachinePoolMachineStatus is the observed state of one instance of a managed
// instance group.
type GCPMachinePoolMachineStatus struct {
	// NodeRef is a reference to the instance's Node.
	// +optional
	NodeRef *corev1.ObjectReference `json:"nodeRef,omitempty"`
	// Version is the Kubernetes version the instance runs.
	// +optional
	Version string `json:"version,omitempty"`
	// CurrentAction is the managed instance's current action as the group reports it
	// (CREATING, NONE, DELETING, ...).
	// +optional
	CurrentAction string `json:"currentAction,omitempty"`
	// Zone of the instance.
	// +optional
	Zone string `json:"zone,omitempty"`
	// LatestModelApplied is true when the instance runs the pool's current instance
	// template.
	// +optional
	LatestModelApplied bool `json:"latestModelApplied"`
	// Ready is true when the instance is running and its Node is Ready.
	// +optional
	Ready bool `json:"ready"`
	// FailureReason is set on a terminal problem, as a succinct machine-readable value.
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`
	// FailureMessage is set on a terminal problem, as a human-readable message.
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`
	// Conditions are the observations of the instance's current state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=gcpmachinepoolmachines,shortName=gcpmpm,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".status.version",description="Kubernetes version"
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready",description="Instance is ready"
// +kubebuilder:printcolumn:name="Action",type="string",JSONPath=".status.currentAction",description="Managed instance's current action"
// +kubebuilder:printcolumn:name="LatestModel",type="boolean",JSONPath=".status.latestModelApplied",description="Instance runs the current instance template"
// +kubebuilder:printcolumn:name="ProviderID",type="string",priority=1,JSONPath=".spec.providerID",description="Provider ID"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"

// GCPMachinePoolMachine is one instance of a GCPMachinePool's managed instance group.
// Deleting it drains the instance and deletes it with the group's deleteInstances. CAPG's
// proposal names no per-instance kind; this one says what an instance of a pool has of
// its own, as CAPZ's AzureMachinePoolMachine does.
type GCPMachinePoolMachine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec GCPMachinePoolMachineSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status GCPMachinePoolMachineStatus `json:"status,omitempty"`
}

// GetConditions returns the instance's conditions.
func (m *GCPMachinePoolMachine) GetConditions() []metav1.Condition { return m.Status.Conditions }

// SetConditions replaces the instance's conditions.
func (m *GCPMachinePoolMachine) SetConditions(c []metav1.Condition) { m.Status.Conditions = c }

// +kubebuilder:object:root=true

// GCPMachinePoolMachineList is a list of GCPMachinePoolMachines.
type GCPMachinePoolMachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the instances.
	Items []GCPMachinePoolMachine `json:"items"`
}

// GCPClusterSpec is the part of CAPG's GCPCluster that places a cluster's pools: the
// project, region and network, and the credentials that reach them. mpool provisions
// nothing for it.
type GCPClusterSpec struct {
	// Project is the project of the cluster's resources.
	// +required
	// +kubebuilder:validation:Pattern=`^[a-z][-a-z0-9]{4,28}[a-z0-9]$`
	Project string `json:"project"`
	// Region is the region of the cluster, e.g. us-central1.
	// +required
	// +kubebuilder:validation:Pattern=`^[a-z]+-[a-z]+[0-9]+$`
	Region string `json:"region"`
	// ControlPlaneEndpoint is the endpoint of the workload cluster's API server. mpool
	// does not manage control planes and keeps whatever is set.
	// +optional
	ControlPlaneEndpoint clusterv1.APIEndpoint `json:"controlPlaneEndpoint,omitempty"`
	// Network is the cluster's VPC network.
	// +optional
	Network GCPNetworkSpec `json:"network,omitempty"`
	// FailureDomains are the zones pools spread across when they name none.
	// +optional
	// +listType=set
	FailureDomains []string `json:"failureDomains,omitempty"`
	// AdditionalLabels are labels set on every resource the provider creates.
	// +optional
	AdditionalLabels map[string]string `json:"additionalLabels,omitempty"`
	// CredentialsRef names a Secret whose key "credentials" holds a service account key
	// (JSON) the provider uses for this cluster. Unset, the manager's own credentials.
	// +optional
	CredentialsRef *GCPObjectReference `json:"credentialsRef,omitempty"`
}

// GCPNetworkSpec is a GCPCluster's network.
type GCPNetworkSpec struct {
	// Name of the VPC network. Defaults to "default".
	// +optional
	// +kubebuilder:validation:MinLength=1
	Name *string `json:"name,omitempty"`
	// HostProject is the Shared VPC's host project, when the network is in another
	// project.
	// +optional
	HostProject *string `json:"hostProject,omitempty"`
}

// GCPObjectReference names an object in a namespace.
type GCPObjectReference struct {
	// Namespace of the object.
	// +required
	// +kubebuilder:validation:MinLength=1
	Namespace string `json:"namespace"`
	// Name of the object.
	// +required
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// GCPClusterStatus is the observed state of a GCPCluster.
type GCPClusterStatus struct {
	// Ready is true when the cluster's infrastructure is usable. mpool does not manage
	// it; a pool needs only the spec.
	// +optional
	Ready bool `json:"ready"`
	// Conditions are the observations of the cluster's current state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=gcpclusters,shortName=gcpc,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Project",type="string",JSONPath=".spec.project",description="GCP project"
// +kubebuilder:printcolumn:name="Region",type="string",JSONPath=".spec.region",description="GCP region"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"

// GCPCluster is where in Compute Engine a cluster's machines live: project, region and
// network, and the credentials that reach them.
type GCPCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec GCPClusterSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status GCPClusterStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// GCPClusterList is a list of GCPClusters.
type GCPClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the GCPClusters.
	Items []GCPCluster `json:"items"`
}

func init() {
	SchemeBuilder.Register(&GCPMachinePool{}, &GCPMachinePoolList{}, &GCPMachinePoolMachine{}, &GCPMachinePoolMachineList{},
		&GCPCluster{}, &GCPClusterList{})
}
