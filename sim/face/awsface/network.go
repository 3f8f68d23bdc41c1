package awsface

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/mpool-dev/mpool/sim/wire/awsapi"
)

// Operation names of the EC2 network reads (network.go).
const (
	OpAWSDescribeNetworkInterfaces = "aws.ec2.DescribeNetworkInterfaces"
	OpAWSDescribeDhcpOptions       = "aws.ec2.DescribeDhcpOptions"
)

// awsDhcpOptionsID is the ID of the DHCP options set of an account's
// region's default VPC (DescribeVpcs' dhcpOptionsId).
func awsDhcpOptionsID(account, region string) string {
	return "dopt-" + AWSHex(17, "dopt", account, region)
}

// awsDomainName is the default VPC's DHCP domain name, as AWS's default
// options set has it: ec2.internal in us-east-1, <region>.compute.internal
// elsewhere.
func awsDomainName(region string) string {
	if region == "us-east-1" {
		return "ec2.internal"
	}
	return region + ".compute.internal"
}

// describeNetworkInterfaces serves DescribeNetworkInterfaces: each live
// instance of the scope's Auto Scaling groups has its primary interface
// (eni- derived from the instance ID, device index 0, in-use, its subnet,
// address and host name, the security groups of the launch template
// version it was launched from), by NetworkInterfaceId.N and the filters
// network-interface-id, attachment.instance-id, subnet-id, vpc-id,
// availability-zone and status. CAPA reads an instance's security groups
// so (attachment.instance-id).
func (h *awsHandler) describeNetworkInterfaces(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	f := ec2Filters(req)
	ids := qList(req.form, "NetworkInterfaceId")
	sc := h.scope(req)
	templates := h.templates(AWSScope(req.account, req.region))
	found := map[string]bool{}
	out := &awsapi.DescribeNetworkInterfacesResponse{NetworkInterfaces: []awsapi.EC2NetworkInterface{}}
	for g := range scopeGroups(sc) {
		for _, in := range g.Instances {
			ip := readAWSInstance(in)
			eni := "eni-" + AWSHex(17, "eni", in.ID)
			if len(ids) > 0 && !slices.Contains(ids, eni) {
				continue
			}
			if !f.match("network-interface-id", eni) || !f.match("attachment.instance-id", in.ID) || !f.match("subnet-id", ip.SubnetID) ||
				!f.match("vpc-id", ip.VpcID) || !f.match("availability-zone", in.Zone) || !f.match("status", "in-use") {
				continue
			}
			found[eni] = true
			var groups []awsapi.GroupIdentifier
			if d := launchData(templates, ip); d != nil {
				for _, sg := range d.SecurityGroupIDs {
					groups = append(groups, awsapi.GroupIdentifier{GroupID: sg})
				}
			}
			out.NetworkInterfaces = append(out.NetworkInterfaces, awsapi.EC2NetworkInterface{
				NetworkInterfaceID: eni, SubnetID: ip.SubnetID, VpcID: ip.VpcID, AvailabilityZone: in.Zone, OwnerID: req.account,
				Status: "in-use", InterfaceType: "interface", PrivateIPAddress: in.PrivateIP, PrivateDNSName: in.Hostname,
				SourceDestCheck: true, Groups: groups,
				Attachment: awsapi.NetworkInterfaceAttachment{AttachmentID: "eni-attach-" + AWSHex(17, "eni-attach", in.ID), InstanceID: in.ID,
					InstanceOwnerID: req.account, Status: "attached", DeleteOnTermination: true},
			})
		}
	}
	for _, id := range ids {
		if !found[id] {
			h.writeError(w, req, http.StatusBadRequest, "InvalidNetworkInterfaceID.NotFound", fmt.Sprintf("The networkInterface ID '%s' does not exist", id))
			return
		}
	}
	h.writeResult(w, req, out)
}

// describeDhcpOptions serves DescribeDhcpOptions: the default VPC's
// options set (domain-name as AWS's default set has it,
// domain-name-servers AmazonProvidedDNS), by DhcpOptionsId.N and the
// filters dhcp-options-id and key.
func (h *awsHandler) describeDhcpOptions(w http.ResponseWriter, r *http.Request) {
	req := awsReq(r)
	f := ec2Filters(req)
	id := awsDhcpOptionsID(req.account, req.region)
	for _, want := range qList(req.form, "DhcpOptionsId") {
		if want != id {
			h.writeError(w, req, http.StatusBadRequest, "InvalidDhcpOptionID.NotFound", fmt.Sprintf("The dhcpOption ID '%s' does not exist", want))
			return
		}
	}
	out := &awsapi.DescribeDhcpOptionsResponse{DhcpOptions: []awsapi.DhcpOptions{}}
	if f.match("dhcp-options-id", id) && f.match("key", "domain-name", "domain-name-servers") && f.matchTags(nil) {
		out.DhcpOptions = append(out.DhcpOptions, awsapi.DhcpOptions{DhcpOptionsID: id, OwnerID: req.account,
			DhcpConfigurations: []awsapi.DhcpConfiguration{
				{Key: "domain-name", Values: []awsapi.DhcpValue{{Value: awsDomainName(req.region)}}},
				{Key: "domain-name-servers", Values: []awsapi.DhcpValue{{Value: "AmazonProvidedDNS"}}},
			}})
	}
	h.writeResult(w, req, out)
}

// launchData is the data of the launch template version an instance was
// launched from, nil when it is gone (or the instance named none).
func launchData(templates map[string]*awsTemplate, ip awsInstancePayload) *awsapi.LaunchTemplateData {
	if ip.LaunchTemplate == nil {
		return nil
	}
	t := findTemplateIn(templates, ip.LaunchTemplate.LaunchTemplateID, ip.LaunchTemplate.LaunchTemplateName)
	if t == nil {
		return nil
	}
	if v := t.version(t.resolve(ip.LaunchTemplate.Version)); v != nil {
		return &v.Data
	}
	return nil
}

// instanceMetadataOptions are an instance's metadata options as
// DescribeInstances shows them: its launch template version's where given,
// else EC2's defaults (IMDS enabled, tokens optional, hop limit 1, IPv6
// endpoint and tags in metadata disabled), applied.
func instanceMetadataOptions(d *awsapi.LaunchTemplateData) *awsapi.InstanceMetadataOptions {
	o := &awsapi.InstanceMetadataOptions{State: "applied", HTTPTokens: "optional", HTTPPutResponseHopLimit: 1,
		HTTPEndpoint: "enabled", HTTPProtocolIPv6: "disabled", InstanceMetadataTags: "disabled"}
	if d == nil || d.MetadataOptions == nil {
		return o
	}
	m := d.MetadataOptions
	if m.HTTPTokens != "" {
		o.HTTPTokens = m.HTTPTokens
	}
	if m.HTTPPutResponseHopLimit != 0 {
		o.HTTPPutResponseHopLimit = m.HTTPPutResponseHopLimit
	}
	if m.HTTPEndpoint != "" {
		o.HTTPEndpoint = m.HTTPEndpoint
	}
	if m.InstanceMetadataTags != "" {
		o.InstanceMetadataTags = m.InstanceMetadataTags
	}
	return o
}
