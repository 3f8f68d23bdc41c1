package awsapi

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
