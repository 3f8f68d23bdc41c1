// Package awsapi holds the wire types of the simulated cloud's AWS face: the
// AWS Query protocol's XML responses of Amazon EC2 Auto Scaling (API
// version 2011-01-01) and Amazon EC2 (2016-11-15), their error bodies and
// error codes, as the unmodified AWS SDK for Go v2 and the AWS CLI read
// them. It has no logic and imports no SDK; the translation onto the core
// is package awsface's.
//
// Auto Scaling answers <{Action}Response><{Action}Result>...</{Action}Result>
// <ResponseMetadata><RequestId/></ResponseMetadata></{Action}Response> with
// lists as <Name><member/></Name>; EC2 answers <{Action}Response><requestId/>
// ...</{Action}Response> with lowerCamel names and lists as <nameSet><item/>.
package awsapi

import "encoding/xml"

// Protocol constants.
const (
	AutoScalingVersion   = "2011-01-01"
	AutoScalingNamespace = "http://autoscaling.amazonaws.com/doc/2011-01-01/"
	EC2Version           = "2016-11-15"
	EC2Namespace         = "http://ec2.amazonaws.com/doc/2016-11-15/"
	// ServiceAutoScaling and ServiceEC2 are the services' signing names
	// (the SigV4 credential scope's service).
	ServiceAutoScaling = "autoscaling"
	ServiceEC2         = "ec2"
)

// Error codes of both services.
const (
	CodeSignatureDoesNotMatch       = "SignatureDoesNotMatch"
	CodeInvalidClientTokenID        = "InvalidClientTokenId"
	CodeIncompleteSignature         = "IncompleteSignature"
	CodeMissingAuthToken            = "MissingAuthenticationToken"
	CodeAuthFailure                 = "AuthFailure"
	CodeRequestExpired              = "RequestExpired"
	CodeInvalidAction               = "InvalidAction"
	CodeMissingAction               = "MissingAction"
	CodeValidationError             = "ValidationError"
	CodeAlreadyExists               = "AlreadyExists"
	CodeResourceInUse               = "ResourceInUse"
	CodeScalingActivityInProg       = "ScalingActivityInProgress"
	CodeLimitExceeded               = "LimitExceeded"
	CodeInvalidNextToken            = "InvalidNextToken"
	CodeThrottling                  = "Throttling"
	CodeInternalFailure             = "InternalFailure"
	CodeServiceUnavailable          = "ServiceUnavailable"
	CodeRequestLimitExceeded        = "RequestLimitExceeded"
	CodeInternalError               = "InternalError"
	CodeUnavailable                 = "Unavailable"
	CodeInvalidParameterValue       = "InvalidParameterValue"
	CodeInvalidParameter            = "InvalidParameter"
	CodeMissingParameter            = "MissingParameter"
	CodeInvalidParameterCombination = "InvalidParameterCombination"
	CodeInvalidAMIIDNotFound        = "InvalidAMIID.NotFound"
	CodeInvalidAMIIDMalformed       = "InvalidAMIID.Malformed"
	CodeInvalidInstanceIDNF         = "InvalidInstanceID.NotFound"
	CodeInvalidInstanceIDMal        = "InvalidInstanceID.Malformed"
	CodeLTNameNotFound              = "InvalidLaunchTemplateName.NotFoundException"
	CodeLTIDNotFound                = "InvalidLaunchTemplateId.NotFound"
	CodeLTIDMalformed               = "InvalidLaunchTemplateId.Malformed"
	CodeLTIDVersionNotFound         = "InvalidLaunchTemplateId.VersionNotFound"
	CodeLTNameAlreadyExists         = "InvalidLaunchTemplateName.AlreadyExistsException"
	CodeLTNameMalformed             = "InvalidLaunchTemplateName.MalformedException"
	CodeLTMaxVersionsExceeded       = "VersionLimitExceeded"
	CodeLTDefaultVersionDelete      = "InvalidLaunchTemplateVersion.DefaultVersion"
	CodeInvalidSubnetIDNF           = "InvalidSubnetID.NotFound"
	CodeInvalidVpcIDNF              = "InvalidVpcID.NotFound"
	CodeInvalidInstanceType         = "InvalidInstanceType"
	CodeVcpuLimitExceeded           = "VcpuLimitExceeded"
	CodeInvalidUserDataLimit        = "InvalidUserData.Malformed"
	CodeInvalidFilter               = "InvalidFilter"
	CodeInvalidPaginationToken      = "InvalidPaginationToken"
)

// ASGErrorResponse is Auto Scaling's error body.
type ASGErrorResponse struct {
	XMLName   xml.Name `xml:"ErrorResponse"`
	Xmlns     string   `xml:"xmlns,attr"`
	Error     ASGError `xml:"Error"`
	RequestID string   `xml:"RequestId"`
}

// ASGError is the error of an ASGErrorResponse: Type Sender or Receiver.
type ASGError struct {
	Type    string `xml:"Type"`
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

// EC2ErrorResponse is EC2's error body.
type EC2ErrorResponse struct {
	XMLName   xml.Name   `xml:"Response"`
	Errors    []EC2Error `xml:"Errors>Error"`
	RequestID string     `xml:"RequestID"`
}

// EC2Error is one error of an EC2ErrorResponse.
type EC2Error struct {
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

// ResponseMetadata ends every Auto Scaling response.
type ResponseMetadata struct {
	RequestID string `xml:"RequestId"`
}

// Auto Scaling.

// LaunchTemplateSpecification names a launch template and a version.
type LaunchTemplateSpecification struct {
	LaunchTemplateID   string `xml:"LaunchTemplateId,omitempty"`
	LaunchTemplateName string `xml:"LaunchTemplateName,omitempty"`
	Version            string `xml:"Version,omitempty"`
}

// TagDescription is a tag of an Auto Scaling group.
type TagDescription struct {
	ResourceID        string `xml:"ResourceId"`
	ResourceType      string `xml:"ResourceType"`
	Key               string `xml:"Key"`
	Value             string `xml:"Value"`
	PropagateAtLaunch bool   `xml:"PropagateAtLaunch"`
}

// Instance is an instance of an Auto Scaling group.
type Instance struct {
	InstanceID           string                       `xml:"InstanceId"`
	InstanceType         string                       `xml:"InstanceType,omitempty"`
	AvailabilityZone     string                       `xml:"AvailabilityZone"`
	LifecycleState       string                       `xml:"LifecycleState"`
	HealthStatus         string                       `xml:"HealthStatus"`
	LaunchTemplate       *LaunchTemplateSpecification `xml:"LaunchTemplate,omitempty"`
	ProtectedFromScaleIn bool                         `xml:"ProtectedFromScaleIn"`
	ImageID              string                       `xml:"ImageId,omitempty"`
}

// SuspendedProcess is a suspended process of a group.
type SuspendedProcess struct {
	ProcessName      string `xml:"ProcessName"`
	SuspensionReason string `xml:"SuspensionReason"`
}

// AutoScalingGroup is a group as DescribeAutoScalingGroups returns it.
type AutoScalingGroup struct {
	AutoScalingGroupName             string                       `xml:"AutoScalingGroupName"`
	AutoScalingGroupARN              string                       `xml:"AutoScalingGroupARN"`
	LaunchTemplate                   *LaunchTemplateSpecification `xml:"LaunchTemplate,omitempty"`
	MixedInstancesPolicy             *MixedInstancesPolicy        `xml:"MixedInstancesPolicy,omitempty"`
	MinSize                          int32                        `xml:"MinSize"`
	MaxSize                          int32                        `xml:"MaxSize"`
	DesiredCapacity                  int32                        `xml:"DesiredCapacity"`
	DefaultCooldown                  int32                        `xml:"DefaultCooldown"`
	AvailabilityZones                []string                     `xml:"AvailabilityZones>member"`
	HealthCheckType                  string                       `xml:"HealthCheckType"`
	HealthCheckGracePeriod           int32                        `xml:"HealthCheckGracePeriod"`
	Instances                        []Instance                   `xml:"Instances>member"`
	CreatedTime                      string                       `xml:"CreatedTime"`
	SuspendedProcesses               []SuspendedProcess           `xml:"SuspendedProcesses>member"`
	VPCZoneIdentifier                string                       `xml:"VPCZoneIdentifier,omitempty"`
	Status                           string                       `xml:"Status,omitempty"`
	Tags                             []TagDescription             `xml:"Tags>member"`
	TerminationPolicies              []string                     `xml:"TerminationPolicies>member"`
	NewInstancesProtectedFromScaleIn bool                         `xml:"NewInstancesProtectedFromScaleIn"`
	ServiceLinkedRoleARN             string                       `xml:"ServiceLinkedRoleARN"`
	CapacityRebalance                bool                         `xml:"CapacityRebalance"`
	DefaultInstanceWarmup            *int32                       `xml:"DefaultInstanceWarmup,omitempty"`
}

// DescribeAutoScalingGroupsResult is DescribeAutoScalingGroups' result.
type DescribeAutoScalingGroupsResult struct {
	AutoScalingGroups []AutoScalingGroup `xml:"AutoScalingGroups>member"`
	NextToken         string             `xml:"NextToken,omitempty"`
}

// Activity is a scaling activity.
type Activity struct {
	ActivityID           string `xml:"ActivityId"`
	AutoScalingGroupName string `xml:"AutoScalingGroupName"`
	AutoScalingGroupARN  string `xml:"AutoScalingGroupARN,omitempty"`
	Description          string `xml:"Description"`
	Cause                string `xml:"Cause"`
	StartTime            string `xml:"StartTime"`
	EndTime              string `xml:"EndTime,omitempty"`
	StatusCode           string `xml:"StatusCode"`
	StatusMessage        string `xml:"StatusMessage,omitempty"`
	Progress             int32  `xml:"Progress"`
	Details              string `xml:"Details"`
}

// ActivityResult is the result of TerminateInstanceInAutoScalingGroup.
type ActivityResult struct {
	Activity Activity `xml:"Activity"`
}

// DescribeScalingActivitiesResult is DescribeScalingActivities' result.
type DescribeScalingActivitiesResult struct {
	Activities []Activity `xml:"Activities>member"`
	NextToken  string     `xml:"NextToken,omitempty"`
}

// EC2.

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
	// MetadataOptions are the instance's (network.go).
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
