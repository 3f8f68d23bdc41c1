package awsface

import (
	"context"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface/awstest"
)

// TestAWSNetworkReads: the reads CAPA v2.13.0's AWSMachine controller sends
// for a pool instance's AWSMachine. DescribeInstances shows the instance's
// metadata options (else CAPA calls ModifyInstanceMetadataOptions to set
// what it believes missing); DescribeNetworkInterfaces with the
// filter attachment.instance-id answers the instance's primary interface
// with the security groups of its launch template version (so CAPA sees
// them in place and changes nothing); DescribeVpcs' dhcpOptionsId is
// answered by DescribeDhcpOptions with AWS's default domain name.
func TestAWSNetworkReads(t *testing.T) {
	e := newAWSEnv(t, core.Options{})
	ctx := context.Background()
	_, g := e.startGroup(t, "net", 0, 4, 1)
	id := aws.ToString(g.Instances[0].InstanceId)

	out, err := e.ec2.DescribeNetworkInterfaces(ctx, &ec2.DescribeNetworkInterfacesInput{
		Filters: []ec2types.Filter{{Name: aws.String("attachment.instance-id"), Values: []string{id}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.NetworkInterfaces) != 1 {
		t.Fatalf("%d network interfaces of %s, want 1", len(out.NetworkInterfaces), id)
	}
	eni := out.NetworkInterfaces[0]
	if eni.Attachment == nil || aws.ToString(eni.Attachment.InstanceId) != id || aws.ToInt32(eni.Attachment.DeviceIndex) != 0 {
		t.Errorf("attachment %+v, want device 0 of %s", eni.Attachment, id)
	}
	if len(eni.Groups) != 1 || aws.ToString(eni.Groups[0].GroupId) != "sg-0123456789abcdef0" {
		t.Errorf("groups %+v, want the launch template's sg-0123456789abcdef0", eni.Groups)
	}
	if aws.ToString(eni.PrivateDnsName) == "" || aws.ToString(eni.PrivateIpAddress) == "" {
		t.Errorf("interface without an address: %+v", eni)
	}
	byID, err := e.ec2.DescribeNetworkInterfaces(ctx, &ec2.DescribeNetworkInterfacesInput{NetworkInterfaceIds: []string{aws.ToString(eni.NetworkInterfaceId)}})
	if err != nil || len(byID.NetworkInterfaces) != 1 {
		t.Errorf("by ID: %v, %v", byID, err)
	}
	none, err := e.ec2.DescribeNetworkInterfaces(ctx, &ec2.DescribeNetworkInterfacesInput{
		Filters: []ec2types.Filter{{Name: aws.String("attachment.instance-id"), Values: []string{"i-0123456789abcdef0"}}},
	})
	if err != nil || len(none.NetworkInterfaces) != 0 {
		t.Errorf("another instance's: %v, %v; want none", none, err)
	}

	// The launch template's metadata options (tokens required, hop limit
	// 2), EC2's defaults for the rest: what CAPA copies into the
	// AWSMachine and compares the instance with.
	insts, err := e.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	mo := insts.Reservations[0].Instances[0].MetadataOptions
	if mo == nil || mo.HttpTokens != ec2types.HttpTokensStateRequired || aws.ToInt32(mo.HttpPutResponseHopLimit) != 2 ||
		mo.HttpEndpoint != ec2types.InstanceMetadataEndpointStateEnabled || mo.HttpProtocolIpv6 != ec2types.InstanceMetadataProtocolStateDisabled ||
		mo.InstanceMetadataTags != ec2types.InstanceMetadataTagsStateDisabled || mo.State != ec2types.InstanceMetadataOptionsStateApplied {
		t.Errorf("metadata options %+v, want the template's tokens and hop limit, EC2's defaults otherwise, applied", mo)
	}

	vpcs, err := e.ec2.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{VpcIds: []string{AWSDefaultVPCID(AWSDefaultAccountID, AWSDefaultRegion)}})
	if err != nil {
		t.Fatal(err)
	}
	dhcp, err := e.ec2.DescribeDhcpOptions(ctx, &ec2.DescribeDhcpOptionsInput{DhcpOptionsIds: []string{aws.ToString(vpcs.Vpcs[0].DhcpOptionsId)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(dhcp.DhcpOptions) != 1 {
		t.Fatalf("%d DHCP options sets, want 1", len(dhcp.DhcpOptions))
	}
	domain := ""
	for _, c := range dhcp.DhcpOptions[0].DhcpConfigurations {
		if aws.ToString(c.Key) == "domain-name" && len(c.Values) == 1 {
			domain = aws.ToString(c.Values[0].Value)
		}
	}
	if domain != "ec2.internal" {
		t.Errorf("domain-name %q, want ec2.internal (us-east-1's default)", domain)
	}
	_, err = e.ec2.DescribeDhcpOptions(ctx, &ec2.DescribeDhcpOptionsInput{DhcpOptionsIds: []string{"dopt-0123456789abcdef0"}})
	awstest.APIError(t, err, "InvalidDhcpOptionID.NotFound")
}

// TestAWSEC2TerminateInstances: the request CAPA v2.13.0 sends when it
// deletes a pool instance's AWSMachine (EC2 TerminateInstances with one
// InstanceId of an Auto Scaling group) shuts the instance down, and the
// group, its desired capacity unchanged, replaces it; an unknown or
// malformed instance ID fails the request.
func TestAWSEC2TerminateInstances(t *testing.T) {
	e := newAWSEnv(t, core.Options{})
	ctx := context.Background()
	_, g := e.startGroup(t, "term", 0, 4, 2)
	victim := aws.ToString(g.Instances[0].InstanceId)

	out, err := e.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{victim}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.TerminatingInstances) != 1 {
		t.Fatalf("%d state changes, want 1", len(out.TerminatingInstances))
	}
	c := out.TerminatingInstances[0]
	if aws.ToString(c.InstanceId) != victim || c.PreviousState.Name != ec2types.InstanceStateNameRunning || c.CurrentState.Name != ec2types.InstanceStateNameShuttingDown {
		t.Errorf("state change %s %s -> %s, want %s running -> shutting-down", aws.ToString(c.InstanceId), c.PreviousState.Name, c.CurrentState.Name, victim)
	}
	g = e.waitGroup(t, "term", "replaced the terminated instance", func(g astypes.AutoScalingGroup) bool {
		ids := []string{}
		for _, in := range g.Instances {
			ids = append(ids, aws.ToString(in.InstanceId))
		}
		return inService(2)(g) && !slices.Contains(ids, victim)
	})
	if aws.ToInt32(g.DesiredCapacity) != 2 {
		t.Errorf("desired capacity %d after the termination, want 2 (unchanged)", aws.ToInt32(g.DesiredCapacity))
	}

	_, err = e.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{"i-0123456789abcdef0"}})
	awstest.APIError(t, err, "InvalidInstanceID.NotFound")
	_, err = e.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{"not-an-instance"}})
	awstest.APIError(t, err, "InvalidInstanceID.Malformed")
}
