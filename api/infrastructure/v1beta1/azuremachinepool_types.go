package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OrchestrationModeType is the VMSS orchestration mode.
// +kubebuilder:validation:Enum=Flexible;Uniform
type OrchestrationModeType string

const (
	// UniformOrchestrationMode is the VMSS Uniform mode (the default).
	UniformOrchestrationMode OrchestrationModeType = "Uniform"
	// FlexibleOrchestrationMode is the VMSS Flexible mode.
	FlexibleOrchestrationMode OrchestrationModeType = "Flexible"
)

// VMIdentity is the kind of managed identity of the VMs.
// +kubebuilder:validation:Enum=None;SystemAssigned;UserAssigned
type VMIdentity string

const (
	// VMIdentityNone: no managed identity.
	VMIdentityNone VMIdentity = "None"
	// VMIdentitySystemAssigned: a system-assigned managed identity.
	VMIdentitySystemAssigned VMIdentity = "SystemAssigned"
	// VMIdentityUserAssigned: user-assigned managed identities.
	VMIdentityUserAssigned VMIdentity = "UserAssigned"
)

// ProvisioningState is the provisioning state of an Azure resource.
type ProvisioningState string

// Azure provisioning states.
const (
	// Creating: the resource is being created.
	Creating ProvisioningState = "Creating"
	// Updating: the resource is being updated.
	Updating ProvisioningState = "Updating"
	// Succeeded: the last operation succeeded.
	Succeeded ProvisioningState = "Succeeded"
	// Failed: the last operation failed.
	Failed ProvisioningState = "Failed"
	// Deleting: the resource is being deleted.
	Deleting ProvisioningState = "Deleting"
	// Deleted: the resource is gone.
	Deleted ProvisioningState = "Deleted"
	// Canceled: the last operation was canceled.
	Canceled ProvisioningState = "Canceled"
)

// Azure-specific condition types, as CAPZ names them.
const (
	// ScaleSetRunningCondition reports whether the VMSS exists and is running.
	ScaleSetRunningCondition = "ScaleSetRunning"
	// ScaleSetModelUpdatedCondition reports whether every VM runs the VMSS's current model.
	ScaleSetModelUpdatedCondition = "ScaleSetModelUpdated"
	// ScaleSetDesiredReplicasCondition reports whether the VMSS has the desired capacity.
	ScaleSetDesiredReplicasCondition = "ScaleSetDesiredReplicas"
)

// AzureMachinePoolSpec is the desired state of an AzureMachinePool: one Virtual Machine
// Scale Set. It has every field of CAPZ's v1beta1 AzureMachinePool spec, so that CAPZ's
// manifests apply with nothing pruned (api/apitest checks it against a list of CAPZ's
// fields); the few mpool stores but does not act on say so, and README's "Beside upstream
// Cluster API" lists them.
type AzureMachinePoolSpec struct {
	// Location is the Azure region of the scale set. Required to provision; the schema
	// accepts its absence so that partial manifests (as in the CAPZ book) apply, and the
	// controller reports the missing field in a condition.
	// +optional
	// +kubebuilder:validation:MinLength=1
	Location string `json:"location,omitempty"`

	// Template is the model of every VM in the scale set. Required to provision, like
	// location.
	// +optional
	Template AzureMachinePoolMachineTemplate `json:"template,omitempty"`

	// AdditionalTags are extra tags set on the scale set and its VMs.
	// +optional
	AdditionalTags Tags `json:"additionalTags,omitempty"`

	// ProviderID is the scale set's identification ID.
	// +optional
	ProviderID string `json:"providerID,omitempty"`

	// ProviderIDList holds the providerID of every VM in the scale set.
	// +optional
	// +kubebuilder:validation:MaxItems=10000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	ProviderIDList []string `json:"providerIDList,omitempty"`

	// Identity is the kind of managed identity of the VMs. Defaults to None.
	// +optional
	// +kubebuilder:default=None
	Identity VMIdentity `json:"identity,omitempty"`

	// SystemAssignedIdentityRole is the role assigned to the system-assigned identity.
	//
	// Stored, not acted on: mpool gives the VMs the identity (identity SystemAssigned) but
	// creates no role assignment; assign the role yourself (CAPZ creates it). It is kept so
	// that the objects CAPZ's defaulting webhook filled in apply unchanged.
	// +optional
	SystemAssignedIdentityRole *SystemAssignedIdentityRole `json:"systemAssignedIdentityRole,omitempty"`

	// UserAssignedIdentities are the user-assigned identities of the VMs.
	// +optional
	UserAssignedIdentities []UserAssignedIdentity `json:"userAssignedIdentities,omitempty"`

	// RoleAssignmentName is the name of the role assignment of the system-assigned
	// identity. Deprecated: use systemAssignedIdentityRole.name. Stored, not acted on, like
	// systemAssignedIdentityRole.
	// +optional
	RoleAssignmentName string `json:"roleAssignmentName,omitempty"`

	// Strategy is how VMs are replaced when the model changes.
	// +optional
	// +kubebuilder:default={type: RollingUpdate, rollingUpdate: {deletePolicy: Oldest, maxSurge: 1, maxUnavailable: 0}}
	Strategy MachinePoolDeploymentStrategy `json:"strategy,omitempty"`

	// NodeDrainTimeout bounds draining a VM's Node before deleting it. Zero means wait
	// forever.
	//
	// Stored, not acted on: the field of older CAPZ releases, which CAPZ's current schema
	// no longer has. The drain is bounded by the MachinePool's
	// spec.template.spec.nodeDrainTimeout, as for every provider.
	// +optional
	NodeDrainTimeout *metav1.Duration `json:"nodeDrainTimeout,omitempty"`

	// OrchestrationMode of the scale set: Uniform (default) or Flexible.
	//
	// Flexible needs Kubernetes v1.26 or later, as in CAPZ, whose webhook refuses it
	// by reading the owner MachinePool's spec.template.spec.version. That check spans
	// two objects, so no rule in this CRD (CEL sees only the object itself) can make it:
	// mpool's validating webhook does (internal/admission/flexibleversion), on the
	// creation of either object, so that whichever of the pair is created second is
	// refused. It judges creations only, reads the other object from the manager's
	// cache (two creations in the same instant can both be admitted), and lets a
	// creation through when it cannot be reached: the provider enforces the rule too,
	// on every change, refusing to provision such a pool and saying why in a condition.
	// +optional
	// +kubebuilder:default=Uniform
	OrchestrationMode OrchestrationModeType `json:"orchestrationMode,omitempty"`

	// PlatformFaultDomainCount is the number of fault domains of the scale set.
	// +optional
	// +kubebuilder:validation:Minimum=1
	PlatformFaultDomainCount *int32 `json:"platformFaultDomainCount,omitempty"`

	// ZoneBalance spreads VMs evenly across zones.
	// +optional
	ZoneBalance *bool `json:"zoneBalance,omitempty"`
}

// AzureMachinePoolMachineTemplate is the model of the VMs of a scale set.
type AzureMachinePoolMachineTemplate struct {
	// VMSize is the VM size, for example Standard_D2s_v3.
	// +required
	// +kubebuilder:validation:MinLength=1
	VMSize string `json:"vmSize"`

	// Image is the OS image. Defaults to a Cluster API reference image for the version.
	// +optional
	Image *Image `json:"image,omitempty"`

	// OSDisk is the OS disk.
	// +required
	OSDisk OSDisk `json:"osDisk"`

	// DataDisks are extra disks attached to every VM.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	DataDisks []DataDisk `json:"dataDisks,omitempty"`

	// SSHPublicKey is the base64-encoded SSH public key of the VMs.
	// +optional
	SSHPublicKey string `json:"sshPublicKey"`

	// AcceleratedNetworking enables accelerated networking. Deprecated: use
	// networkInterfaces[].acceleratedNetworking.
	// +optional
	AcceleratedNetworking *bool `json:"acceleratedNetworking,omitempty"`

	// AdditionalCapabilities enables or disables capabilities of the VMs.
	// +optional
	AdditionalCapabilities *AdditionalCapabilities `json:"additionalCapabilities,omitempty"`

	// Diagnostics configures boot diagnostics.
	// +optional
	Diagnostics *Diagnostics `json:"diagnostics,omitempty"`

	// TerminateNotificationTimeout enables terminate notifications with this timeout in
	// minutes (5 to 15).
	// +optional
	// +kubebuilder:validation:Minimum=5
	// +kubebuilder:validation:Maximum=15
	TerminateNotificationTimeout *int32 `json:"terminateNotificationTimeout,omitempty"`

	// SecurityProfile configures the VMs' security settings.
	// +optional
	SecurityProfile *SecurityProfile `json:"securityProfile,omitempty"`

	// SpotVMOptions makes the VMs Spot VMs.
	// +optional
	SpotVMOptions *SpotVMOptions `json:"spotVMOptions,omitempty"`

	// SubnetName is the subnet of the VMs. Deprecated: use networkInterfaces[].subnetName.
	// +optional
	SubnetName string `json:"subnetName,omitempty"`

	// VMExtensions are VM extensions installed on every VM.
	// +optional
	VMExtensions []VMExtension `json:"vmExtensions,omitempty"`

	// DisableVMBootstrapExtension, in CAPZ, leaves out the extension that reports a VM's
	// kubeadm bootstrap failing (unset counts as true there, false opts back in).
	//
	// Stored, not acted on: mpool never installs that extension (it follows a VM's Node
	// joining instead), so unset and true behave as in CAPZ and false installs nothing.
	// +optional
	DisableVMBootstrapExtension *bool `json:"disableVMBootstrapExtension,omitempty"`

	// NetworkInterfaces are the VMs' network interfaces.
	// +optional
	NetworkInterfaces []NetworkInterface `json:"networkInterfaces,omitempty"`
}

// Image is an OS image: one of id, sharedGallery, marketplace or computeGallery.
type Image struct {
	// ID is an Azure resource ID of an image.
	// +optional
	ID *string `json:"id,omitempty"`

	// SharedGallery is an image in a shared image gallery.
	// +optional
	SharedGallery *AzureSharedGalleryImage `json:"sharedGallery,omitempty"`

	// Marketplace is a marketplace image.
	// +optional
	Marketplace *AzureMarketplaceImage `json:"marketplace,omitempty"`

	// ComputeGallery is an image in an Azure compute gallery.
	// +optional
	ComputeGallery *AzureComputeGalleryImage `json:"computeGallery,omitempty"`
}

// ImagePlan is a marketplace purchase plan.
type ImagePlan struct {
	// Publisher of the image.
	// +kubebuilder:validation:MinLength=1
	Publisher string `json:"publisher"`
	// Offer of the image.
	// +kubebuilder:validation:MinLength=1
	Offer string `json:"offer"`
	// SKU of the image.
	// +kubebuilder:validation:MinLength=1
	SKU string `json:"sku"`
}

// AzureMarketplaceImage is a marketplace image.
type AzureMarketplaceImage struct {
	ImagePlan `json:",inline"`

	// Version of the image.
	// +kubebuilder:validation:MinLength=1
	Version string `json:"version"`

	// ThirdPartyImage says the image needs a purchase plan.
	// +optional
	// +kubebuilder:default=false
	ThirdPartyImage bool `json:"thirdPartyImage"`
}

// AzureSharedGalleryImage is an image in a shared image gallery.
type AzureSharedGalleryImage struct {
	// SubscriptionID of the gallery.
	// +kubebuilder:validation:MinLength=1
	SubscriptionID string `json:"subscriptionID"`
	// ResourceGroup of the gallery.
	// +kubebuilder:validation:MinLength=1
	ResourceGroup string `json:"resourceGroup"`
	// Name of the image.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Gallery name.
	// +kubebuilder:validation:MinLength=1
	Gallery string `json:"gallery"`
	// Version of the image.
	// +kubebuilder:validation:MinLength=1
	Version string `json:"version"`
	// Publisher of a third-party image: with offer and sku, the purchase plan the scale
	// set is created with.
	// +optional
	Publisher *string `json:"publisher,omitempty"`
	// Offer of a third-party image.
	// +optional
	Offer *string `json:"offer,omitempty"`
	// SKU of a third-party image.
	// +optional
	SKU *string `json:"sku,omitempty"`
}

// AzureComputeGalleryImage is an image in an Azure compute gallery.
type AzureComputeGalleryImage struct {
	// Gallery name (or community gallery public name).
	// +kubebuilder:validation:MinLength=1
	Gallery string `json:"gallery"`
	// Name of the image.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Version of the image.
	// +kubebuilder:validation:MinLength=1
	Version string `json:"version"`
	// SubscriptionID of a private gallery.
	// +optional
	SubscriptionID *string `json:"subscriptionID,omitempty"`
	// ResourceGroup of a private gallery.
	// +optional
	ResourceGroup *string `json:"resourceGroup,omitempty"`
	// Plan of a third-party image: the purchase plan the scale set is created with.
	// +optional
	Plan *ImagePlan `json:"plan,omitempty"`
}

// OSDisk is a VM's OS disk.
// +kubebuilder:validation:XValidation:rule="self.osType.lowerAscii() != 'windows'",message="osType Windows is not supported: mpool's Azure provider runs Linux scale sets only; use osType Linux with a Linux image",fieldPath=".osType"
type OSDisk struct {
	// OSType is Linux or Windows, as in CAPZ's schema; mpool refuses Windows, since its
	// Azure provider runs Linux scale sets only.
	// +required
	// +kubebuilder:validation:MinLength=1
	OSType string `json:"osType"`

	// DiskSizeGB is the disk size in GB (at least 1).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=32767
	DiskSizeGB *int32 `json:"diskSizeGB,omitempty"`

	// ManagedDisk holds the managed disk parameters.
	// +optional
	ManagedDisk *ManagedDiskParameters `json:"managedDisk,omitempty"`

	// DiffDiskSettings configures an ephemeral OS disk.
	// +optional
	DiffDiskSettings *DiffDiskSettings `json:"diffDiskSettings,omitempty"`

	// CachingType is the disk's caching: None, ReadOnly or ReadWrite.
	// +optional
	// +kubebuilder:validation:Enum=None;ReadOnly;ReadWrite
	CachingType string `json:"cachingType,omitempty"`
}

// DataDisk is an extra disk of a VM.
type DataDisk struct {
	// NameSuffix is appended to the VM name to name the disk.
	// +required
	// +kubebuilder:validation:MinLength=1
	NameSuffix string `json:"nameSuffix"`

	// DiskSizeGB is the disk size in GB (at least 1).
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=32767
	DiskSizeGB int32 `json:"diskSizeGB"`

	// ManagedDisk holds the managed disk parameters.
	// +optional
	ManagedDisk *ManagedDiskParameters `json:"managedDisk,omitempty"`

	// Lun is the disk's logical unit number.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Lun *int32 `json:"lun,omitempty"`

	// CachingType is the disk's caching: None, ReadOnly or ReadWrite.
	// +optional
	// +kubebuilder:validation:Enum=None;ReadOnly;ReadWrite
	CachingType string `json:"cachingType,omitempty"`
}

// ManagedDiskParameters are the parameters of a managed disk.
type ManagedDiskParameters struct {
	// StorageAccountType is the disk's storage type, for example Premium_LRS.
	// +optional
	StorageAccountType string `json:"storageAccountType,omitempty"`

	// DiskEncryptionSet encrypts the disk with a customer-managed key.
	// +optional
	DiskEncryptionSet *DiskEncryptionSetParameters `json:"diskEncryptionSet,omitempty"`

	// SecurityProfile is the disk's security profile (confidential VMs).
	//
	// Stored, not acted on: neither mpool nor CAPZ sets it on a scale set's disks (CAPZ
	// only on single VMs, AzureMachines).
	// +optional
	SecurityProfile *VMDiskSecurityProfile `json:"securityProfile,omitempty"`
}

// DiskEncryptionSetParameters references a disk encryption set.
type DiskEncryptionSetParameters struct {
	// ID is the disk encryption set's resource ID.
	// +optional
	ID string `json:"id,omitempty"`
}

// VMDiskSecurityProfile is the security profile of a managed disk.
type VMDiskSecurityProfile struct {
	// DiskEncryptionSet encrypts the disk and VM guest state.
	// +optional
	DiskEncryptionSet *DiskEncryptionSetParameters `json:"diskEncryptionSet,omitempty"`

	// SecurityEncryptionType is VMGuestStateOnly or DiskWithVMGuestState.
	// +optional
	// +kubebuilder:validation:Enum=VMGuestStateOnly;DiskWithVMGuestState
	SecurityEncryptionType string `json:"securityEncryptionType,omitempty"`
}

// DiffDiskSettings configures an ephemeral OS disk.
type DiffDiskSettings struct {
	// Option is the ephemeral disk option; only Local is supported.
	// +required
	// +kubebuilder:validation:Enum=Local
	Option string `json:"option"`

	// Placement is where the ephemeral disk lives: CacheDisk, ResourceDisk or NvmeDisk.
	// +optional
	// +kubebuilder:validation:Enum=CacheDisk;ResourceDisk;NvmeDisk
	Placement *string `json:"placement,omitempty"`
}

// AdditionalCapabilities are capabilities enabled or disabled on a VM.
type AdditionalCapabilities struct {
	// UltraSSDEnabled enables or disables Ultra SSD disks on the VMs. Unset, it is enabled
	// when a data disk's storageAccountType is UltraSSD_LRS and left to Azure otherwise,
	// as in CAPZ.
	// +optional
	UltraSSDEnabled *bool `json:"ultraSSDEnabled,omitempty"`
}

// SpotVMOptions makes VMs Spot VMs.
type SpotVMOptions struct {
	// MaxPrice is the most to pay per hour, in US dollars.
	// +optional
	MaxPrice *resource.Quantity `json:"maxPrice,omitempty"`

	// EvictionPolicy is Deallocate or Delete.
	// +optional
	// +kubebuilder:validation:Enum=Deallocate;Delete
	EvictionPolicy *string `json:"evictionPolicy,omitempty"`
}

// SecurityProfile holds a VM's security settings.
type SecurityProfile struct {
	// EncryptionAtHost encrypts the VM's disks and caches at the host.
	// +optional
	EncryptionAtHost *bool `json:"encryptionAtHost,omitempty"`

	// SecurityType is TrustedLaunch or ConfidentialVM.
	// +optional
	// +kubebuilder:validation:Enum=ConfidentialVM;TrustedLaunch
	SecurityType string `json:"securityType,omitempty"`

	// UefiSettings holds secure boot and vTPM settings.
	// +optional
	UefiSettings *UefiSettings `json:"uefiSettings,omitempty"`
}

// UefiSettings holds secure boot and vTPM settings.
type UefiSettings struct {
	// SecureBootEnabled enables secure boot.
	// +optional
	SecureBootEnabled *bool `json:"secureBootEnabled,omitempty"`

	// VTpmEnabled enables the virtual TPM.
	// +optional
	VTpmEnabled *bool `json:"vTpmEnabled,omitempty"`
}

// Diagnostics configures VM diagnostics.
type Diagnostics struct {
	// Boot configures boot diagnostics.
	// +optional
	Boot *BootDiagnostics `json:"boot,omitempty"`
}

// BootDiagnostics configures boot diagnostics.
type BootDiagnostics struct {
	// StorageAccountType is Managed, UserManaged or Disabled.
	// +required
	// +kubebuilder:validation:Enum=Managed;UserManaged;Disabled
	StorageAccountType string `json:"storageAccountType"`

	// UserManaged is the storage account used with UserManaged.
	// +optional
	UserManaged *UserManagedBootDiagnostics `json:"userManaged,omitempty"`
}

// UserManagedBootDiagnostics is a user-managed boot diagnostics storage account.
type UserManagedBootDiagnostics struct {
	// StorageAccountURI is the storage account's URI.
	// +required
	// +kubebuilder:validation:MaxLength=1024
	StorageAccountURI string `json:"storageAccountURI"`
}

// VMExtension is a VM extension.
type VMExtension struct {
	// Name of the extension.
	// +required
	Name string `json:"name"`
	// Publisher of the extension.
	// +required
	Publisher string `json:"publisher"`
	// Version of the extension.
	// +required
	Version string `json:"version"`
	// Settings of the extension.
	// +optional
	Settings Tags `json:"settings,omitempty"`
	// ProtectedSettings of the extension.
	// +optional
	ProtectedSettings Tags `json:"protectedSettings,omitempty"`
}

// NetworkInterface is a VM network interface.
type NetworkInterface struct {
	// SubnetName is the subnet of the interface.
	// +optional
	SubnetName string `json:"subnetName,omitempty"`

	// PrivateIPConfigs is the number of private IP configurations.
	// +optional
	// +kubebuilder:validation:Minimum=1
	PrivateIPConfigs int `json:"privateIPConfigs,omitempty"`

	// AcceleratedNetworking enables accelerated networking on the interface.
	// +optional
	AcceleratedNetworking *bool `json:"acceleratedNetworking,omitempty"`
}

// SystemAssignedIdentityRole is the role of a system-assigned identity.
type SystemAssignedIdentityRole struct {
	// Name of the role assignment.
	// +optional
	Name string `json:"name,omitempty"`
	// Scope of the role assignment.
	// +optional
	Scope string `json:"scope,omitempty"`
	// DefinitionID of the role.
	// +optional
	DefinitionID string `json:"definitionID,omitempty"`
}

// UserAssignedIdentity is a user-assigned managed identity.
type UserAssignedIdentity struct {
	// ProviderID is the identity's resource ID (azure:///subscriptions/...).
	// +required
	// +kubebuilder:validation:MinLength=1
	ProviderID string `json:"providerID"`
}

// Future is a long-running cloud operation in progress.
type Future struct {
	// Type of the operation, for example PUT or DELETE.
	// +required
	Type string `json:"type"`
	// ResourceGroup of the resource.
	// +optional
	ResourceGroup string `json:"resourceGroup,omitempty"`
	// ServiceName is the service that started the operation.
	// +required
	ServiceName string `json:"serviceName"`
	// Name of the resource.
	// +required
	Name string `json:"name"`
	// Data is the serialised poller state.
	// +required
	Data string `json:"data"`
}

// AzureMachinePoolInstanceStatus is the status of one VM of the scale set.
type AzureMachinePoolInstanceStatus struct {
	// Version is the Kubernetes version of the VM.
	// +optional
	Version string `json:"version,omitempty"`
	// ProvisioningState of the VM.
	// +optional
	ProvisioningState *ProvisioningState `json:"provisioningState,omitempty"`
	// ProviderID of the VM.
	// +optional
	ProviderID string `json:"providerID,omitempty"`
	// InstanceID of the VM within the scale set.
	// +optional
	InstanceID string `json:"instanceID,omitempty"`
	// InstanceName of the VM.
	// +optional
	InstanceName string `json:"instanceName,omitempty"`
	// LatestModelApplied is true when the VM runs the scale set's current model.
	// +optional
	LatestModelApplied bool `json:"latestModelApplied"`
}

// AzureMachinePoolStatus is the observed state of an AzureMachinePool.
type AzureMachinePoolStatus struct {
	// Ready is true when the scale set exists and is usable.
	// +optional
	Ready bool `json:"ready"`
	// Replicas is the number of VMs in the scale set.
	// +optional
	Replicas int32 `json:"replicas"`
	// Instances holds the status of each VM.
	// +optional
	Instances []AzureMachinePoolInstanceStatus `json:"instances,omitempty"`
	// Image is the image the scale set's model uses.
	// +optional
	Image *Image `json:"image,omitempty"`
	// Version is the Kubernetes version of the scale set's model.
	// +optional
	Version string `json:"version,omitempty"`
	// ProvisioningState of the scale set.
	// +optional
	ProvisioningState *ProvisioningState `json:"provisioningState,omitempty"`
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
	// LongRunningOperationStates are the cloud operations in progress.
	// +optional
	LongRunningOperationStates []Future `json:"longRunningOperationStates,omitempty"`
	// InfrastructureMachineKind is the kind of the per-VM objects (AzureMachinePoolMachine).
	// +optional
	InfrastructureMachineKind string `json:"infrastructureMachineKind,omitempty"`
	// ObservedGeneration is the latest generation the controller observed.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=azuremachinepools,shortName=amp,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".status.replicas",description="Number of VMs"
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready",description="Scale set is ready"
// +kubebuilder:printcolumn:name="State",type="string",JSONPath=".status.provisioningState",description="Scale set provisioning state"
// +kubebuilder:printcolumn:name="Cluster",type="string",priority=1,JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster"
// +kubebuilder:printcolumn:name="VMSize",type="string",priority=1,JSONPath=".spec.template.vmSize",description="VM size"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"

// AzureMachinePool is an Azure Virtual Machine Scale Set backing a MachinePool.
type AzureMachinePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec AzureMachinePoolSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status AzureMachinePoolStatus `json:"status,omitempty"`
}

// GetConditions returns the pool's conditions.
func (p *AzureMachinePool) GetConditions() []metav1.Condition { return p.Status.Conditions }

// SetConditions replaces the pool's conditions.
func (p *AzureMachinePool) SetConditions(c []metav1.Condition) { p.Status.Conditions = c }

// +kubebuilder:object:root=true

// AzureMachinePoolList is a list of AzureMachinePools.
type AzureMachinePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the pools.
	Items []AzureMachinePool `json:"items"`
}

// AzureMachinePoolMachineSpec is the desired state of one VM of a scale set.
type AzureMachinePoolMachineSpec struct {
	// ProviderID is the VM's providerID; it matches its Node's spec.providerID.
	// +required
	// +kubebuilder:validation:MinLength=1
	ProviderID string `json:"providerID"`

	// InstanceID is the VM's ID within the scale set.
	// +optional
	InstanceID string `json:"instanceID,omitempty"`
}

// AzureMachinePoolMachineStatus is the observed state of one VM of a scale set.
type AzureMachinePoolMachineStatus struct {
	// NodeRef is a reference to the VM's Node.
	// +optional
	NodeRef *corev1.ObjectReference `json:"nodeRef,omitempty"`
	// Version is the Kubernetes version the VM runs.
	// +optional
	Version string `json:"version,omitempty"`
	// ProvisioningState of the VM.
	// +optional
	ProvisioningState *ProvisioningState `json:"provisioningState,omitempty"`
	// InstanceName of the VM.
	// +optional
	InstanceName string `json:"instanceName,omitempty"`
	// FailureReason is set on a terminal problem, as a succinct machine-readable value.
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`
	// FailureMessage is set on a terminal problem, as a human-readable message.
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`
	// Conditions are the observations of the VM's current state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// LongRunningOperationStates are the cloud operations in progress.
	// +optional
	LongRunningOperationStates []Future `json:"longRunningOperationStates,omitempty"`
	// LatestModelApplied is true when the VM runs the scale set's current model.
	// +optional
	LatestModelApplied bool `json:"latestModelApplied"`
	// Ready is true when the VM is running and its Node is Ready.
	// +optional
	Ready bool `json:"ready"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=azuremachinepoolmachines,shortName=ampm,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".status.version",description="Kubernetes version"
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready",description="VM is ready"
// +kubebuilder:printcolumn:name="State",type="string",JSONPath=".status.provisioningState",description="VM provisioning state"
// +kubebuilder:printcolumn:name="LatestModel",type="boolean",JSONPath=".status.latestModelApplied",description="VM runs the current model"
// +kubebuilder:printcolumn:name="ProviderID",type="string",priority=1,JSONPath=".spec.providerID",description="Provider ID"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"

// AzureMachinePoolMachine is one VM of an AzureMachinePool's scale set. Deleting it drains
// and deletes that VM.
type AzureMachinePoolMachine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec AzureMachinePoolMachineSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status AzureMachinePoolMachineStatus `json:"status,omitempty"`
}

// GetConditions returns the machine's conditions.
func (m *AzureMachinePoolMachine) GetConditions() []metav1.Condition { return m.Status.Conditions }

// SetConditions replaces the machine's conditions.
func (m *AzureMachinePoolMachine) SetConditions(c []metav1.Condition) { m.Status.Conditions = c }

// +kubebuilder:object:root=true

// AzureMachinePoolMachineList is a list of AzureMachinePoolMachines.
type AzureMachinePoolMachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the machines.
	Items []AzureMachinePoolMachine `json:"items"`
}
