package awsapi

// Amazon EC2's types (API version 2016-11-15).

// EC2Meta starts every EC2 response.
type EC2Meta struct {
	RequestID string `xml:"requestId"`
}

// SetRequestID sets the response's request ID.
func (m *EC2Meta) SetRequestID(id string) { m.RequestID = id }

// Tag is an EC2 tag.
type Tag struct {
	Key   string `xml:"key"`
	Value string `xml:"value"`
}

// LaunchTemplate is a launch template.
type LaunchTemplate struct {
	LaunchTemplateID     string `xml:"launchTemplateId"`
	LaunchTemplateName   string `xml:"launchTemplateName"`
	CreateTime           string `xml:"createTime"`
	CreatedBy            string `xml:"createdBy"`
	DefaultVersionNumber int64  `xml:"defaultVersionNumber"`
	LatestVersionNumber  int64  `xml:"latestVersionNumber"`
	Tags                 []Tag  `xml:"tagSet>item"`
}

// LaunchTemplateData is a launch template version's data, as stored and
// as returned (the fields the simulation reads or keeps).
type LaunchTemplateData struct {
	ImageID               string                 `xml:"imageId,omitempty" json:"imageId,omitempty"`
	InstanceType          string                 `xml:"instanceType,omitempty" json:"instanceType,omitempty"`
	KeyName               string                 `xml:"keyName,omitempty" json:"keyName,omitempty"`
	UserData              string                 `xml:"userData,omitempty" json:"userData,omitempty"`
	IamInstanceProfile    *IamInstanceProfile    `xml:"iamInstanceProfile,omitempty" json:"iamInstanceProfile,omitempty"`
	BlockDeviceMappings   []BlockDeviceMapping   `xml:"blockDeviceMappingSet>item" json:"blockDeviceMappings,omitempty"`
	NetworkInterfaces     []NetworkInterface     `xml:"networkInterfaceSet>item" json:"networkInterfaces,omitempty"`
	SecurityGroupIDs      []string               `xml:"securityGroupIdSet>item" json:"securityGroupIds,omitempty"`
	InstanceMarketOptions *InstanceMarketOptions `xml:"instanceMarketOptions,omitempty" json:"instanceMarketOptions,omitempty"`
	MetadataOptions       *MetadataOptions       `xml:"metadataOptions,omitempty" json:"metadataOptions,omitempty"`
	TagSpecifications     []TagSpecification     `xml:"tagSpecificationSet>item" json:"tagSpecifications,omitempty"`
}

// IamInstanceProfile names an instance profile.
type IamInstanceProfile struct {
	Arn  string `xml:"arn,omitempty" json:"arn,omitempty"`
	Name string `xml:"name,omitempty" json:"name,omitempty"`
}

// BlockDeviceMapping is a block device of a launch template.
type BlockDeviceMapping struct {
	DeviceName string `xml:"deviceName,omitempty" json:"deviceName,omitempty"`
	Ebs        *Ebs   `xml:"ebs,omitempty" json:"ebs,omitempty"`
}

// Ebs is an EBS volume of a block device mapping.
type Ebs struct {
	VolumeSize          int64  `xml:"volumeSize,omitempty" json:"volumeSize,omitempty"`
	VolumeType          string `xml:"volumeType,omitempty" json:"volumeType,omitempty"`
	Encrypted           *bool  `xml:"encrypted,omitempty" json:"encrypted,omitempty"`
	DeleteOnTermination *bool  `xml:"deleteOnTermination,omitempty" json:"deleteOnTermination,omitempty"`
	Iops                int64  `xml:"iops,omitempty" json:"iops,omitempty"`
	Throughput          int64  `xml:"throughput,omitempty" json:"throughput,omitempty"`
}

// NetworkInterface is a network interface of a launch template.
type NetworkInterface struct {
	DeviceIndex              *int64   `xml:"deviceIndex,omitempty" json:"deviceIndex,omitempty"`
	SubnetID                 string   `xml:"subnetId,omitempty" json:"subnetId,omitempty"`
	AssociatePublicIPAddress *bool    `xml:"associatePublicIpAddress,omitempty" json:"associatePublicIpAddress,omitempty"`
	Groups                   []string `xml:"groupSet>groupId" json:"groups,omitempty"`
	DeleteOnTermination      *bool    `xml:"deleteOnTermination,omitempty" json:"deleteOnTermination,omitempty"`
}

// InstanceMarketOptions asks for spot instances.
type InstanceMarketOptions struct {
	MarketType  string       `xml:"marketType,omitempty" json:"marketType,omitempty"`
	SpotOptions *SpotOptions `xml:"spotOptions,omitempty" json:"spotOptions,omitempty"`
}

// SpotOptions are a spot request's options.
type SpotOptions struct {
	MaxPrice         string `xml:"maxPrice,omitempty" json:"maxPrice,omitempty"`
	SpotInstanceType string `xml:"spotInstanceType,omitempty" json:"spotInstanceType,omitempty"`
}

// MetadataOptions are the instance metadata service's options.
type MetadataOptions struct {
	HTTPTokens              string `xml:"httpTokens,omitempty" json:"httpTokens,omitempty"`
	HTTPPutResponseHopLimit int64  `xml:"httpPutResponseHopLimit,omitempty" json:"httpPutResponseHopLimit,omitempty"`
	HTTPEndpoint            string `xml:"httpEndpoint,omitempty" json:"httpEndpoint,omitempty"`
	InstanceMetadataTags    string `xml:"instanceMetadataTags,omitempty" json:"instanceMetadataTags,omitempty"`
	State                   string `xml:"state,omitempty" json:"state,omitempty"`
}

// TagSpecification tags resources a launch creates.
type TagSpecification struct {
	ResourceType string `xml:"resourceType" json:"resourceType"`
	Tags         []Tag  `xml:"tagSet>item" json:"tags,omitempty"`
}

// LaunchTemplateVersion is one version of a launch template.
type LaunchTemplateVersion struct {
	LaunchTemplateID   string             `xml:"launchTemplateId"`
	LaunchTemplateName string             `xml:"launchTemplateName"`
	VersionNumber      int64              `xml:"versionNumber"`
	VersionDescription string             `xml:"versionDescription,omitempty"`
	CreateTime         string             `xml:"createTime"`
	CreatedBy          string             `xml:"createdBy"`
	DefaultVersion     bool               `xml:"defaultVersion"`
	LaunchTemplateData LaunchTemplateData `xml:"launchTemplateData"`
}

// CreateLaunchTemplateResponse is CreateLaunchTemplate's, ModifyLaunchTemplate's
// and DeleteLaunchTemplate's response.
type CreateLaunchTemplateResponse struct {
	EC2Meta
	LaunchTemplate LaunchTemplate `xml:"launchTemplate"`
}

// CreateLaunchTemplateVersionResponse is CreateLaunchTemplateVersion's response.
type CreateLaunchTemplateVersionResponse struct {
	EC2Meta
	LaunchTemplateVersion LaunchTemplateVersion `xml:"launchTemplateVersion"`
}

// DescribeLaunchTemplatesResponse is DescribeLaunchTemplates' response.
type DescribeLaunchTemplatesResponse struct {
	EC2Meta
	LaunchTemplates []LaunchTemplate `xml:"launchTemplates>item"`
	NextToken       string           `xml:"nextToken,omitempty"`
}

// DescribeLaunchTemplateVersionsResponse is DescribeLaunchTemplateVersions'
// response.
type DescribeLaunchTemplateVersionsResponse struct {
	EC2Meta
	LaunchTemplateVersions []LaunchTemplateVersion `xml:"launchTemplateVersionSet>item"`
	NextToken              string                  `xml:"nextToken,omitempty"`
}

// DeletedVersion is a version DeleteLaunchTemplateVersions deleted.
type DeletedVersion struct {
	LaunchTemplateID   string `xml:"launchTemplateId"`
	LaunchTemplateName string `xml:"launchTemplateName"`
	VersionNumber      int64  `xml:"versionNumber"`
}

// UndeletedVersion is a version DeleteLaunchTemplateVersions did not delete.
type UndeletedVersion struct {
	LaunchTemplateID   string        `xml:"launchTemplateId"`
	LaunchTemplateName string        `xml:"launchTemplateName"`
	VersionNumber      int64         `xml:"versionNumber"`
	ResponseError      ResponseError `xml:"responseError"`
}

// ResponseError is the error of a version DeleteLaunchTemplateVersions did
// not delete (codes launchTemplateVersionDoesNotExist, unexpectedError, ...).
type ResponseError struct {
	Code    string `xml:"code"`
	Message string `xml:"message"`
}

// DeleteLaunchTemplateVersionsResponse is DeleteLaunchTemplateVersions'
// response. ResponseError's fields are lowercase on the wire.
type DeleteLaunchTemplateVersionsResponse struct {
	EC2Meta
	Deleted   []DeletedVersion   `xml:"successfullyDeletedLaunchTemplateVersionSet>item"`
	Undeleted []UndeletedVersion `xml:"unsuccessfullyDeletedLaunchTemplateVersionSet>item"`
}

// InstanceState is an EC2 instance's state.
type InstanceState struct {
	Code int32  `xml:"code"`
	Name string `xml:"name"`
}

// Placement is where an instance runs.
type Placement struct {
	AvailabilityZone string `xml:"availabilityZone"`
	Tenancy          string `xml:"tenancy"`
}

// EC2Instance is an instance as DescribeInstances returns it.
type EC2Instance struct {
	InstanceID         string              `xml:"instanceId"`
	ImageID            string              `xml:"imageId"`
	InstanceState      InstanceState       `xml:"instanceState"`
	PrivateDNSName     string              `xml:"privateDnsName"`
	DNSName            string              `xml:"dnsName"`
	KeyName            string              `xml:"keyName,omitempty"`
	AmiLaunchIndex     int32               `xml:"amiLaunchIndex"`
	InstanceType       string              `xml:"instanceType"`
	LaunchTime         string              `xml:"launchTime"`
	Placement          Placement           `xml:"placement"`
	SubnetID           string              `xml:"subnetId"`
	VpcID              string              `xml:"vpcId"`
	PrivateIPAddress   string              `xml:"privateIpAddress"`
	Architecture       string              `xml:"architecture"`
	RootDeviceType     string              `xml:"rootDeviceType"`
	RootDeviceName     string              `xml:"rootDeviceName"`
	VirtualizationType string              `xml:"virtualizationType"`
	Hypervisor         string              `xml:"hypervisor"`
	InstanceLifecycle  string              `xml:"instanceLifecycle,omitempty"`
	IamInstanceProfile *IamInstanceProfile `xml:"iamInstanceProfile,omitempty"`
	Tags               []Tag               `xml:"tagSet>item"`
	// MetadataOptions are the instance's metadata service options.
	MetadataOptions *InstanceMetadataOptions `xml:"metadataOptions,omitempty"`
}

// Reservation is a launch's instances.
type Reservation struct {
	ReservationID string        `xml:"reservationId"`
	OwnerID       string        `xml:"ownerId"`
	RequesterID   string        `xml:"requesterId,omitempty"`
	Instances     []EC2Instance `xml:"instancesSet>item"`
}

// DescribeInstancesResponse is DescribeInstances' response.
type DescribeInstancesResponse struct {
	EC2Meta
	Reservations []Reservation `xml:"reservationSet>item"`
	NextToken    string        `xml:"nextToken,omitempty"`
}

// Image is an AMI.
type Image struct {
	ImageID            string `xml:"imageId"`
	ImageLocation      string `xml:"imageLocation"`
	ImageState         string `xml:"imageState"`
	ImageOwnerID       string `xml:"imageOwnerId"`
	CreationDate       string `xml:"creationDate"`
	IsPublic           bool   `xml:"isPublic"`
	Architecture       string `xml:"architecture"`
	ImageType          string `xml:"imageType"`
	Name               string `xml:"name"`
	Description        string `xml:"description"`
	RootDeviceType     string `xml:"rootDeviceType"`
	RootDeviceName     string `xml:"rootDeviceName"`
	VirtualizationType string `xml:"virtualizationType"`
	Hypervisor         string `xml:"hypervisor"`
	PlatformDetails    string `xml:"platformDetails"`
	EnaSupport         bool   `xml:"enaSupport"`
}

// DescribeImagesResponse is DescribeImages' response.
type DescribeImagesResponse struct {
	EC2Meta
	Images    []Image `xml:"imagesSet>item"`
	NextToken string  `xml:"nextToken,omitempty"`
}

// Subnet is a subnet.
type Subnet struct {
	SubnetID                string `xml:"subnetId"`
	SubnetArn               string `xml:"subnetArn"`
	State                   string `xml:"state"`
	VpcID                   string `xml:"vpcId"`
	OwnerID                 string `xml:"ownerId"`
	CidrBlock               string `xml:"cidrBlock"`
	AvailableIPAddressCount int32  `xml:"availableIpAddressCount"`
	AvailabilityZone        string `xml:"availabilityZone"`
	AvailabilityZoneID      string `xml:"availabilityZoneId"`
	DefaultForAz            bool   `xml:"defaultForAz"`
	MapPublicIPOnLaunch     bool   `xml:"mapPublicIpOnLaunch"`
	Tags                    []Tag  `xml:"tagSet>item"`
}

// DescribeSubnetsResponse is DescribeSubnets' response.
type DescribeSubnetsResponse struct {
	EC2Meta
	Subnets   []Subnet `xml:"subnetSet>item"`
	NextToken string   `xml:"nextToken,omitempty"`
}

// Vpc is a VPC.
type Vpc struct {
	VpcID           string `xml:"vpcId"`
	OwnerID         string `xml:"ownerId"`
	State           string `xml:"state"`
	CidrBlock       string `xml:"cidrBlock"`
	DhcpOptionsID   string `xml:"dhcpOptionsId"`
	InstanceTenancy string `xml:"instanceTenancy"`
	IsDefault       bool   `xml:"isDefault"`
	Tags            []Tag  `xml:"tagSet>item"`
}

// DescribeVpcsResponse is DescribeVpcs' response.
type DescribeVpcsResponse struct {
	EC2Meta
	Vpcs      []Vpc  `xml:"vpcSet>item"`
	NextToken string `xml:"nextToken,omitempty"`
}

// AvailabilityZone is a zone of a region.
type AvailabilityZone struct {
	ZoneName           string `xml:"zoneName"`
	ZoneID             string `xml:"zoneId"`
	ZoneState          string `xml:"zoneState"`
	RegionName         string `xml:"regionName"`
	ZoneType           string `xml:"zoneType"`
	OptInStatus        string `xml:"optInStatus"`
	GroupName          string `xml:"groupName"`
	NetworkBorderGroup string `xml:"networkBorderGroup"`
}

// DescribeAvailabilityZonesResponse is DescribeAvailabilityZones' response.
type DescribeAvailabilityZonesResponse struct {
	EC2Meta
	AvailabilityZones []AvailabilityZone `xml:"availabilityZoneInfo>item"`
}

// InstanceStateChange is one instance's state change, as
// TerminateInstances answers it.
type InstanceStateChange struct {
	InstanceID    string        `xml:"instanceId"`
	CurrentState  InstanceState `xml:"currentState"`
	PreviousState InstanceState `xml:"previousState"`
}

// TerminateInstancesResponse is EC2 TerminateInstances' response.
type TerminateInstancesResponse struct {
	EC2Meta
	Instances []InstanceStateChange `xml:"instancesSet>item"`
}

// NetworkInterfaceAttachment is how a network interface is attached to an
// instance.
type NetworkInterfaceAttachment struct {
	AttachmentID        string `xml:"attachmentId"`
	InstanceID          string `xml:"instanceId"`
	InstanceOwnerID     string `xml:"instanceOwnerId"`
	DeviceIndex         int32  `xml:"deviceIndex"`
	Status              string `xml:"status"`
	DeleteOnTermination bool   `xml:"deleteOnTermination"`
}

// GroupIdentifier is a security group as a network interface names it.
type GroupIdentifier struct {
	GroupID   string `xml:"groupId"`
	GroupName string `xml:"groupName,omitempty"`
}

// EC2NetworkInterface is a network interface as DescribeNetworkInterfaces
// returns it.
type EC2NetworkInterface struct {
	NetworkInterfaceID string                     `xml:"networkInterfaceId"`
	SubnetID           string                     `xml:"subnetId"`
	VpcID              string                     `xml:"vpcId"`
	AvailabilityZone   string                     `xml:"availabilityZone"`
	OwnerID            string                     `xml:"ownerId"`
	Status             string                     `xml:"status"`
	InterfaceType      string                     `xml:"interfaceType"`
	PrivateIPAddress   string                     `xml:"privateIpAddress"`
	PrivateDNSName     string                     `xml:"privateDnsName"`
	SourceDestCheck    bool                       `xml:"sourceDestCheck"`
	Groups             []GroupIdentifier          `xml:"groupSet>item"`
	Attachment         NetworkInterfaceAttachment `xml:"attachment"`
	Tags               []Tag                      `xml:"tagSet>item"`
}

// DescribeNetworkInterfacesResponse is DescribeNetworkInterfaces'
// response.
type DescribeNetworkInterfacesResponse struct {
	EC2Meta
	NetworkInterfaces []EC2NetworkInterface `xml:"networkInterfaceSet>item"`
	NextToken         string                `xml:"nextToken,omitempty"`
}

// DhcpValue is one value of a DHCP option.
type DhcpValue struct {
	Value string `xml:"value"`
}

// DhcpConfiguration is one DHCP option and its values.
type DhcpConfiguration struct {
	Key    string      `xml:"key"`
	Values []DhcpValue `xml:"valueSet>item"`
}

// DhcpOptions is a DHCP options set.
type DhcpOptions struct {
	DhcpOptionsID      string              `xml:"dhcpOptionsId"`
	OwnerID            string              `xml:"ownerId"`
	DhcpConfigurations []DhcpConfiguration `xml:"dhcpConfigurationSet>item"`
	Tags               []Tag               `xml:"tagSet>item"`
}

// DescribeDhcpOptionsResponse is DescribeDhcpOptions' response.
type DescribeDhcpOptionsResponse struct {
	EC2Meta
	DhcpOptions []DhcpOptions `xml:"dhcpOptionsSet>item"`
	NextToken   string        `xml:"nextToken,omitempty"`
}

// InstanceMetadataOptions are an instance's metadata service options, as
// DescribeInstances returns them.
type InstanceMetadataOptions struct {
	State                   string `xml:"state"`
	HTTPTokens              string `xml:"httpTokens"`
	HTTPPutResponseHopLimit int64  `xml:"httpPutResponseHopLimit"`
	HTTPEndpoint            string `xml:"httpEndpoint"`
	HTTPProtocolIPv6        string `xml:"httpProtocolIpv6"`
	InstanceMetadataTags    string `xml:"instanceMetadataTags"`
}
