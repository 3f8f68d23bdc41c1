package aws

// LaunchTemplate is the AWS part of an Auto Scaling Group's model,
// scalegroup.Model.Provider for AWSMachinePools: the launch template's
// fields mpool sets. Every field changes what an instance is, so the model
// hash covers it (its JSON encoding); each model is one launch-template
// version. The Adapter fills it from the AWSMachinePool and its AWSCluster;
// the ScaleGroup maps it onto RequestLaunchTemplateData. It holds no AWS
// SDK type.
//
// scalegroup.Model's common fields: InstanceType is the instance type,
// Image is AMI.String(), Zones are the ASG's availability zones, Version is
// the Kubernetes version (the AMI lookup's), CustomData is the user data,
// Tags are the ASG's tags, propagated to its instances at launch.
type LaunchTemplate struct {
	// AMI is the image: an ID, or a lookup resolved at Apply.
	AMI AMI `json:"ami"`
	// IAMInstanceProfile is the instances' IAM instance profile (a name,
	// or an ARN), "" for none.
	IAMInstanceProfile string `json:"iamInstanceProfile,omitempty"`
	// RootVolume replaces the AMI's root volume settings, nil for the
	// AMI's.
	RootVolume *Volume `json:"rootVolume,omitempty"`
	// NonRootVolumes are extra EBS volumes.
	NonRootVolumes []Volume `json:"nonRootVolumes,omitempty"`
	// SSHKeyName is the EC2 key pair, "" for none.
	SSHKeyName string `json:"sshKeyName,omitempty"`
	// SecurityGroupIDs are the instances' security groups (sg-...).
	SecurityGroupIDs []string `json:"securityGroupIDs,omitempty"`
	// Spot requests Spot instances, nil for on-demand.
	Spot *Spot `json:"spot,omitempty"`
	// Metadata configures the instance metadata service, nil for AWS's
	// defaults.
	Metadata *Metadata `json:"metadata,omitempty"`
	// PrivateDNSName configures the instances' host names, nil for the
	// subnet's defaults.
	PrivateDNSName *PrivateDNSName `json:"privateDNSName,omitempty"`
	// CapacityReservationID targets a capacity reservation, "" for none.
	CapacityReservationID string `json:"capacityReservationID,omitempty"`
}

// AMI is the image of a launch template: an ID, or CAPA's lookup by
// Kubernetes version (the model's Version): the newest image (by
// CreationDate) owned by Owner whose name matches Format with {{.BaseOS}}
// and {{.K8sVersion}} substituted.
type AMI struct {
	// ID is the AMI's ID (ami-...); when set the lookup fields are empty.
	ID string `json:"id,omitempty"`
	// Owner is the account owning the looked-up image, or several,
	// comma-separated.
	Owner string `json:"owner,omitempty"`
	// Format is the looked-up image's name pattern.
	Format string `json:"format,omitempty"`
	// BaseOS is the looked-up image's base OS (ubuntu-24.04, ...).
	BaseOS string `json:"baseOS,omitempty"`
}

// String is the image as one reference, the model's Image: the ID, or
// "lookup:<owner>/<format>/<baseOS>".
func (a AMI) String() string {
	if a.ID != "" {
		return a.ID
	}
	return "lookup:" + a.Owner + "/" + a.Format + "/" + a.BaseOS
}

// Volume is an EBS volume.
type Volume struct {
	// DeviceName is the device, "" for the AMI's root device (root volume
	// only).
	DeviceName string `json:"deviceName,omitempty"`
	// SizeGiB is the volume size.
	SizeGiB int32 `json:"sizeGiB"`
	// Type is the EBS volume type (gp3, ...), "" for AWS's default.
	Type string `json:"type,omitempty"`
	// IOPS is the provisioned IOPS, 0 for the type's default.
	IOPS int32 `json:"iops,omitempty"`
	// Throughput is the throughput in MiB/s (gp3), 0 for the default.
	Throughput int32 `json:"throughput,omitempty"`
	// Encrypted encrypts the volume, nil for the account's default.
	Encrypted *bool `json:"encrypted,omitempty"`
	// KMSKeyID is the key encrypting the volume, "" for the default key.
	KMSKeyID string `json:"kmsKeyID,omitempty"`
}

// Spot are the Spot market options.
type Spot struct {
	// MaxPrice is the most to pay per hour, "" for the on-demand price.
	MaxPrice string `json:"maxPrice,omitempty"`
}

// Metadata configures the instance metadata service.
type Metadata struct {
	// HTTPEndpoint is enabled or disabled.
	HTTPEndpoint string `json:"httpEndpoint,omitempty"`
	// HTTPPutResponseHopLimit is the PUT response hop limit, 0 for AWS's.
	HTTPPutResponseHopLimit int32 `json:"httpPutResponseHopLimit,omitempty"`
	// HTTPTokens is optional or required (IMDSv2).
	HTTPTokens string `json:"httpTokens,omitempty"`
	// InstanceMetadataTags is enabled or disabled.
	InstanceMetadataTags string `json:"instanceMetadataTags,omitempty"`
}

// PrivateDNSName configures an instance's host name.
type PrivateDNSName struct {
	// EnableResourceNameDNSAAAARecord answers AAAA queries for the
	// instance's resource name, nil for the subnet's default.
	EnableResourceNameDNSAAAARecord *bool `json:"enableResourceNameDNSAAAARecord,omitempty"`
	// EnableResourceNameDNSARecord answers A queries for the instance's
	// resource name, nil for the subnet's default.
	EnableResourceNameDNSARecord *bool `json:"enableResourceNameDNSARecord,omitempty"`
	// HostnameType is ip-name or resource-name, "" for the subnet's.
	HostnameType string `json:"hostnameType,omitempty"`
}

// GroupSettings are the Auto Scaling Group's settings that AWS applies in
// place, without replacing instances: scalegroup.Model.InPlace for
// AWSMachinePools, not part of the model hash.
type GroupSettings struct {
	// MinSize and MaxSize are the pool's bounds. The ASG's own bounds
	// widen to include the capacity the engine asks for while it surges
	// or removes instances: MinSize = min(MinSize, capacity), MaxSize =
	// max(MaxSize, capacity).
	MinSize int32 `json:"minSize"`
	MaxSize int32 `json:"maxSize"`
	// SubnetIDs are the ASG's subnets (its VPCZoneIdentifier); empty puts
	// the instances in the model's Zones of the default VPC.
	SubnetIDs []string `json:"subnetIDs,omitempty"`
	// CapacityRebalance enables Spot capacity rebalancing.
	CapacityRebalance bool `json:"capacityRebalance,omitempty"`
	// DefaultCooldownSeconds is the time between scaling activities.
	DefaultCooldownSeconds int32 `json:"defaultCooldownSeconds,omitempty"`
	// DefaultInstanceWarmupSeconds is the time before a new instance
	// counts in the ASG's metrics; 0 leaves it unset.
	DefaultInstanceWarmupSeconds int32 `json:"defaultInstanceWarmupSeconds,omitempty"`
	// SuspendedProcesses are the ASG processes kept suspended (Launch,
	// AZRebalance, ...), sorted; those not listed are resumed.
	SuspendedProcesses []string `json:"suspendedProcesses,omitempty"`
	// LifecycleHooks are the ASG's lifecycle hooks (hooks.go).
	LifecycleHooks []LifecycleHook `json:"lifecycleHooks,omitempty"`
	// MixedInstances is the ASG's mixed instances policy, nil for none
	// (mixed.go: in place, see MixedInstances).
	MixedInstances *MixedInstances `json:"mixedInstances,omitempty"`
}
