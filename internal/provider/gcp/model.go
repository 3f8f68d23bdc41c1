package gcp

// Template is the GCP part of a pool's instance model (scalegroup.Model's
// Provider): what an instance template holds besides the machine type, the
// image, the zones and the user-data. Every field changes what an instance
// is, so it is part of the model hash.
type Template struct {
	// Network and Subnetwork are the instances' network interface
	// (partial URLs: projects/P/global/networks/N,
	// projects/P/regions/R/subnetworks/S; subnetwork "" is the network's
	// subnetwork of the region).
	Network    string `json:"network"`
	Subnetwork string `json:"subnetwork,omitempty"`
	// PublicIP gives the instances an external address.
	PublicIP bool `json:"publicIP,omitempty"`
	// BootDiskSizeGB and BootDiskType describe the boot disk.
	BootDiskSizeGB int64  `json:"bootDiskSizeGB"`
	BootDiskType   string `json:"bootDiskType"`
	// Disks are the additional disks.
	Disks []Disk `json:"disks,omitempty"`
	// NetworkTags are the instances' network tags, sorted.
	NetworkTags []string `json:"networkTags,omitempty"`
	// Metadata are the metadata items besides user-data.
	Metadata []MetadataItem `json:"metadata,omitempty"`
	// ServiceAccount and Scopes are the instances' identity.
	ServiceAccount string   `json:"serviceAccount"`
	Scopes         []string `json:"scopes,omitempty"`
	// Preemptible, ProvisioningModel and OnHostMaintenance schedule the
	// instances.
	Preemptible       bool   `json:"preemptible,omitempty"`
	ProvisioningModel string `json:"provisioningModel,omitempty"`
	OnHostMaintenance string `json:"onHostMaintenance,omitempty"`
	// CanIPForward lets the instances forward packets.
	CanIPForward bool `json:"canIPForward"`
	// Shielded is the Shielded VM configuration, nil for the platform's.
	Shielded *Shielded `json:"shielded,omitempty"`
	// Confidential is the confidential computing technology ("" for none).
	Confidential string `json:"confidential,omitempty"`
}

// Disk is an additional disk.
type Disk struct {
	Type   string `json:"type"`
	SizeGB int64  `json:"sizeGB"`
}

// MetadataItem is an instance metadata item.
type MetadataItem struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Shielded is a Shielded VM configuration.
type Shielded struct {
	SecureBoot          bool `json:"secureBoot"`
	VTPM                bool `json:"vtpm"`
	IntegrityMonitoring bool `json:"integrityMonitoring"`
}
