package azure

// VMModel is the Azure part of a scale set's model, scalegroup.Model.Provider
// for AzureMachinePools: every field changes what a VM is, so the model hash
// covers it (its JSON encoding). The Adapter fills it from the
// AzureMachinePool and its AzureCluster; the ScaleGroup maps it onto the
// scale set's virtualMachineProfile (Uniform) or the VM profile of a
// Flexible scale set. It holds no Azure SDK type.
//
// scalegroup.Model's common fields: InstanceType is the vmSize, Image is
// Image.String(), Zones are the scale set's zones, Version is the Kubernetes
// version (tagged on the scale set, TagKubernetesVersion), CustomData
// is the VMs' customData, Tags are the scale set's tags.
type VMModel struct {
	// OrchestrationMode is Uniform or Flexible (fixed at creation: Azure
	// refuses to change it).
	OrchestrationMode string `json:"orchestrationMode"`
	// ComputerNamePrefix is the prefix of the VMs' host names (Uniform:
	// prefix + 6 base-36 digits; Flexible: prefix + 6 hex digits).
	ComputerNamePrefix string `json:"computerNamePrefix"`
	// AdminUsername is the Linux admin user ("capi", as CAPZ).
	AdminUsername string `json:"adminUsername"`
	// SSHPublicKey is the admin user's authorized key (OpenSSH format).
	SSHPublicKey string `json:"sshPublicKey,omitempty"`
	// Image is the OS image.
	Image Image `json:"image"`
	// OSDisk is the OS disk.
	OSDisk OSDisk `json:"osDisk"`
	// DataDisks are the data disks.
	DataDisks []DataDisk `json:"dataDisks,omitempty"`
	// SubnetID is the resource ID of the subnet of the VMs' primary NIC.
	SubnetID string `json:"subnetID,omitempty"`
	// NetworkInterfaces, when set, replace the single default NIC.
	NetworkInterfaces []NetworkInterface `json:"networkInterfaces,omitempty"`
	// AcceleratedNetworking of the default NIC, nil for Azure's default.
	AcceleratedNetworking *bool `json:"acceleratedNetworking,omitempty"`
	// Identity is the VMs' managed identity.
	Identity Identity `json:"identity"`
	// Spot makes the VMs Spot VMs, nil for regular priority.
	Spot *Spot `json:"spot,omitempty"`
	// Security is the VMs' security profile, nil for Azure's defaults.
	Security *Security `json:"security,omitempty"`
	// Extensions are the VM extensions. ProtectedSettings hold secrets:
	// never log a VMModel.
	Extensions []Extension `json:"extensions,omitempty"`
	// BootDiagnostics is the boot diagnostics storage: "" (disabled),
	// "Managed", or a user storage account URI.
	BootDiagnostics string `json:"bootDiagnostics,omitempty"`
	// PlatformFaultDomainCount of the scale set, 0 for Azure's default.
	PlatformFaultDomainCount int32 `json:"platformFaultDomainCount,omitempty"`
	// ZoneBalance spreads VMs evenly across zones.
	ZoneBalance *bool `json:"zoneBalance,omitempty"`
	// UltraSSDEnabled enables (or disables) Ultra SSD disks, nil for
	// Azure's default.
	UltraSSDEnabled *bool `json:"ultraSSDEnabled,omitempty"`
}

// Image is an OS image: a resource ID, a shared or compute gallery image,
// or a Marketplace image (Publisher/Offer/SKU/Version).
type Image struct {
	// ID is an image or gallery image version's resource ID.
	ID string `json:"id,omitempty"`
	// Publisher, Offer, SKU and Version name a Marketplace image (or, with
	// Gallery, a community/compute gallery image's plan).
	Publisher string `json:"publisher,omitempty"`
	Offer     string `json:"offer,omitempty"`
	SKU       string `json:"sku,omitempty"`
	Version   string `json:"version,omitempty"`
	// Gallery names a compute gallery (community gallery) image: Gallery,
	// Name and Version.
	Gallery string `json:"gallery,omitempty"`
	Name    string `json:"name,omitempty"`
	// ThirdParty images carry a purchase plan (Publisher, Offer, SKU).
	ThirdParty bool `json:"thirdParty,omitempty"`
}

// String is the image as one reference, the model's Image.
func (i Image) String() string {
	switch {
	case i.ID != "":
		return i.ID
	case i.Gallery != "":
		return "gallery:" + i.Gallery + "/" + i.Name + "/" + i.Version
	default:
		return i.Publisher + ":" + i.Offer + ":" + i.SKU + ":" + i.Version
	}
}

// OSDisk is a VM's OS disk.
type OSDisk struct {
	// OSType is Linux or Windows.
	OSType string `json:"osType"`
	// SizeGB is the disk size, 0 for the image's.
	SizeGB int32 `json:"sizeGB,omitempty"`
	// StorageAccountType is the managed disk's type (Premium_LRS, ...).
	StorageAccountType string `json:"storageAccountType,omitempty"`
	// Caching is None, ReadOnly or ReadWrite.
	Caching string `json:"caching,omitempty"`
	// EphemeralPlacement, when set, makes the disk ephemeral (Local,
	// with CacheDisk or ResourceDisk placement).
	EphemeralPlacement string `json:"ephemeralPlacement,omitempty"`
	// DiskEncryptionSetID encrypts the disk with a customer-managed key.
	DiskEncryptionSetID string `json:"diskEncryptionSetID,omitempty"`
}

// DataDisk is a VM's data disk.
type DataDisk struct {
	NameSuffix         string `json:"nameSuffix"`
	SizeGB             int32  `json:"sizeGB"`
	Lun                int32  `json:"lun"`
	Caching            string `json:"caching,omitempty"`
	StorageAccountType string `json:"storageAccountType,omitempty"`
	// DiskEncryptionSetID encrypts the disk with a customer-managed key.
	DiskEncryptionSetID string `json:"diskEncryptionSetID,omitempty"`
}

// NetworkInterface is one NIC of the VMs.
type NetworkInterface struct {
	SubnetID              string `json:"subnetID"`
	PrivateIPConfigs      int    `json:"privateIPConfigs,omitempty"`
	AcceleratedNetworking *bool  `json:"acceleratedNetworking,omitempty"`
}

// Identity is the VMs' managed identity: Type None, SystemAssigned or
// UserAssigned (with the identities' resource IDs).
type Identity struct {
	Type         string   `json:"type"`
	UserAssigned []string `json:"userAssigned,omitempty"`
}

// Spot are a Spot VM's options.
type Spot struct {
	// MaxPrice in US dollars, "" for -1 (pay up to the on-demand price).
	MaxPrice string `json:"maxPrice,omitempty"`
	// EvictionPolicy is Deallocate or Delete ("" for Deallocate).
	EvictionPolicy string `json:"evictionPolicy,omitempty"`
}

// Security is a VM's security profile.
type Security struct {
	EncryptionAtHost *bool  `json:"encryptionAtHost,omitempty"`
	SecurityType     string `json:"securityType,omitempty"`
	SecureBoot       *bool  `json:"secureBoot,omitempty"`
	VTPM             *bool  `json:"vTPM,omitempty"`
}

// Extension is a VM extension.
type Extension struct {
	Name              string            `json:"name"`
	Publisher         string            `json:"publisher"`
	Version           string            `json:"version"`
	Settings          map[string]string `json:"settings,omitempty"`
	ProtectedSettings map[string]string `json:"protectedSettings,omitempty"`
}

// ScaleSetSettings are the scale set's settings that Azure applies in place
// without touching the VMs: scalegroup.Model.InPlace for AzureMachinePools,
// not part of the model hash.
type ScaleSetSettings struct {
	// TerminateNotificationTimeout enables scheduled events' terminate
	// notification, with this many minutes (5 to 15); 0 disables it.
	TerminateNotificationTimeout int32 `json:"terminateNotificationTimeout,omitempty"`
}
