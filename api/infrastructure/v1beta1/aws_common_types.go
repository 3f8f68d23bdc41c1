package v1beta1

import (
	"encoding/json"
	"fmt"
)

// AWS-specific condition types, as CAPA names them.
const (
	// ASGReadyCondition reports whether the Auto Scaling Group exists and is usable.
	ASGReadyCondition = "ASGReady"
	// LaunchTemplateReadyCondition reports whether the launch template is current.
	LaunchTemplateReadyCondition = "LaunchTemplateReady"
	// EKSNodegroupReadyCondition reports whether the EKS managed node group is active.
	EKSNodegroupReadyCondition = "EKSNodegroupReady"
)

// AWSResourceReference references an AWS resource by ID or by filters. In a manifest it
// may also be written as a plain string, which means the ID (CAPA's examples write
// subnets that way).
type AWSResourceReference struct {
	// ID of the resource.
	// +optional
	ID *string `json:"id,omitempty"`

	// ARN of the resource. Deprecated in CAPA; kept for compatibility.
	// +optional
	ARN *string `json:"arn,omitempty"`

	// Filters select the resource by tags and attributes.
	// +optional
	Filters []Filter `json:"filters,omitempty"`
}

// UnmarshalJSON accepts either the object form or a plain string ID.
func (r *AWSResourceReference) UnmarshalJSON(b []byte) error {
	var id string
	if err := json.Unmarshal(b, &id); err == nil {
		*r = AWSResourceReference{ID: &id}
		return nil
	}
	type plain AWSResourceReference
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return fmt.Errorf("decoding AWS resource reference: %w", err)
	}
	*r = AWSResourceReference(p)
	return nil
}

// Filter is an EC2 describe filter.
type Filter struct {
	// Name of the filter, for example tag:Name.
	// +required
	Name string `json:"name"`

	// Values the filter matches.
	// +required
	Values []string `json:"values"`
}

// AZSubnetType selects subnets by their kind when availabilityZones is set.
// +kubebuilder:validation:Enum=public;private;all
type AZSubnetType string

// AMIReference selects the AMI of a launch template.
type AMIReference struct {
	// ID of the AMI.
	// +optional
	ID *string `json:"id,omitempty"`

	// EKSOptimizedLookupType looks up an EKS-optimised AMI; the values are
	// CAPA's.
	// +optional
	// +kubebuilder:validation:Enum=AmazonLinux;AmazonLinuxGPU;AmazonLinux2023;AmazonLinux2023GPU
	EKSOptimizedLookupType *string `json:"eksLookupType,omitempty"`
}

// Volume is an EBS volume.
type Volume struct {
	// DeviceName is the device name, for example /dev/sdb.
	// +optional
	DeviceName string `json:"deviceName,omitempty"`

	// Size is the volume size in GiB (at least 8).
	// +required
	// +kubebuilder:validation:Minimum=8
	Size int64 `json:"size"`

	// Type is the EBS volume type.
	// +optional
	// +kubebuilder:validation:Enum=standard;io1;io2;gp2;gp3;sc1;st1
	Type string `json:"type,omitempty"`

	// IOPS is the provisioned IOPS.
	// +optional
	// +kubebuilder:validation:Minimum=0
	IOPS int64 `json:"iops,omitempty"`

	// Throughput in MiB/s (gp3 only).
	// +optional
	// +kubebuilder:validation:Minimum=0
	Throughput *int64 `json:"throughput,omitempty"`

	// Encrypted encrypts the volume.
	// +optional
	Encrypted *bool `json:"encrypted,omitempty"`

	// EncryptionKey is the KMS key used to encrypt the volume.
	// +optional
	EncryptionKey string `json:"encryptionKey,omitempty"`
}

// SpotMarketOptions requests Spot instances.
type SpotMarketOptions struct {
	// MaxPrice is the most to pay per hour; unset means the on-demand price.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	MaxPrice *string `json:"maxPrice,omitempty"`
}

// InstanceMetadataOptions configure the instance metadata service.
type InstanceMetadataOptions struct {
	// HTTPEndpoint enables or disables the metadata service.
	// +optional
	// +kubebuilder:validation:Enum=enabled;disabled
	// +kubebuilder:default=enabled
	HTTPEndpoint string `json:"httpEndpoint,omitempty"`

	// HTTPPutResponseHopLimit is the hop limit of metadata PUT responses.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +kubebuilder:default=1
	HTTPPutResponseHopLimit int64 `json:"httpPutResponseHopLimit,omitempty"`

	// HTTPTokens is optional or required (IMDSv2).
	// +optional
	// +kubebuilder:validation:Enum=optional;required
	// +kubebuilder:default=optional
	HTTPTokens string `json:"httpTokens,omitempty"`

	// InstanceMetadataTags enables or disables instance tags in the metadata.
	// +optional
	// +kubebuilder:validation:Enum=enabled;disabled
	// +kubebuilder:default=disabled
	InstanceMetadataTags string `json:"instanceMetadataTags,omitempty"`
}

// AWSLaunchTemplate is the launch template of an Auto Scaling Group.
type AWSLaunchTemplate struct {
	// Name of the launch template.
	// +optional
	Name string `json:"name,omitempty"`

	// IamInstanceProfile is the IAM instance profile of the instances.
	// +optional
	IamInstanceProfile string `json:"iamInstanceProfile,omitempty"`

	// AMI of the instances.
	// +optional
	AMI AMIReference `json:"ami,omitempty"`

	// ImageLookupFormat is the AMI name format used for lookups.
	// +optional
	ImageLookupFormat string `json:"imageLookupFormat,omitempty"`

	// ImageLookupOrg is the AWS organisation that owns the looked-up AMI.
	// +optional
	ImageLookupOrg string `json:"imageLookupOrg,omitempty"`

	// ImageLookupBaseOS is the base OS of the looked-up AMI.
	// +optional
	ImageLookupBaseOS string `json:"imageLookupBaseOS,omitempty"`

	// InstanceType is the EC2 instance type, for example m5.large.
	// +optional
	InstanceType string `json:"instanceType,omitempty"`

	// RootVolume is the root volume.
	// +optional
	RootVolume *Volume `json:"rootVolume,omitempty"`

	// NonRootVolumes are extra volumes.
	// +optional
	NonRootVolumes []Volume `json:"nonRootVolumes,omitempty"`

	// SSHKeyName is the EC2 key pair of the instances.
	// +optional
	SSHKeyName *string `json:"sshKeyName,omitempty"`

	// VersionNumber is the launch template version in use.
	// +optional
	VersionNumber *int64 `json:"versionNumber,omitempty"`

	// AdditionalSecurityGroups are extra security groups of the instances.
	// +optional
	AdditionalSecurityGroups []AWSResourceReference `json:"additionalSecurityGroups,omitempty"`

	// SpotMarketOptions request Spot instances.
	// +optional
	SpotMarketOptions *SpotMarketOptions `json:"spotMarketOptions,omitempty"`

	// InstanceMetadataOptions configure the instance metadata service.
	// +optional
	InstanceMetadataOptions *InstanceMetadataOptions `json:"instanceMetadataOptions,omitempty"`

	// PrivateDNSName configures the instances' private DNS names.
	// +optional
	PrivateDNSName *PrivateDNSName `json:"privateDnsName,omitempty"`

	// CapacityReservationID targets a capacity reservation.
	// +optional
	CapacityReservationID *string `json:"capacityReservationId,omitempty"`
}

// PrivateDNSName configures an instance's private DNS name.
type PrivateDNSName struct {
	// EnableResourceNameDNSAAAARecord answers DNS AAAA queries for the instance name.
	// +optional
	EnableResourceNameDNSAAAARecord *bool `json:"enableResourceNameDnsAAAARecord,omitempty"`

	// EnableResourceNameDNSARecord answers DNS A queries for the instance name.
	// +optional
	EnableResourceNameDNSARecord *bool `json:"enableResourceNameDnsARecord,omitempty"`

	// HostnameType is ip-name or resource-name.
	// +optional
	// +kubebuilder:validation:Enum=ip-name;resource-name
	HostnameType *string `json:"hostnameType,omitempty"`
}
