package awsface

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface/awstest"
	"github.com/mpool-dev/mpool/sim/server"
	"github.com/mpool-dev/mpool/sim/server/servertest"
)

// awsTestEnv is a simulated cloud with clients of the real AWS SDK for Go
// v2 pointed at its AWS face.
type awsTestEnv struct {
	srv *server.Server
	url string
	asg *autoscaling.Client
	ec2 *ec2.Client
}

// awsConfig is the SDK configuration of the face tests' clients.
func awsConfig(url, key, secret string) aws.Config {
	return awstest.Config(url, AWSDefaultRegion, key, secret)
}

func newAWSEnv(t testing.TB, opts core.Options) *awsTestEnv {
	t.Helper()
	if opts.DefaultSimulation == nil {
		opts.DefaultSimulation = &core.Simulation{}
	}
	srv := startCloud(t, opts)
	u := srv.FaceURL(AWSFaceName)
	if !strings.HasPrefix(u, "http://") || u == srv.URL()+"/aws" {
		t.Fatalf("aws face URL %q: want a listener of its own", u)
	}
	cfg := awsConfig(u, AWSDefaultAccessKeyID, AWSDefaultSecretAccessKey)
	return &awsTestEnv{srv: srv, url: u, asg: autoscaling.NewFromConfig(cfg), ec2: ec2.NewFromConfig(cfg)}
}

const awsTestUserData = "#cloud-config\nruncmd: []\n"

// template creates a launch template of the CAPA AMI of version.
func (e *awsTestEnv) template(t testing.TB, name, version string) *ec2types.LaunchTemplate {
	t.Helper()
	out, err := e.ec2.CreateLaunchTemplate(context.Background(), &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(name),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{
			ImageId:            aws.String(AWSImageID(AWSDefaultRegion, AWSImageName(version))),
			InstanceType:       ec2types.InstanceTypeM5Large,
			KeyName:            aws.String("default"),
			UserData:           aws.String(base64.StdEncoding.EncodeToString([]byte(awsTestUserData))),
			IamInstanceProfile: &ec2types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String("nodes.cluster-api-provider-aws.sigs.k8s.io")},
			SecurityGroupIds:   []string{"sg-0123456789abcdef0"},
			MetadataOptions:    &ec2types.LaunchTemplateInstanceMetadataOptionsRequest{HttpTokens: ec2types.LaunchTemplateHttpTokensStateRequired, HttpPutResponseHopLimit: aws.Int32(2)},
			BlockDeviceMappings: []ec2types.LaunchTemplateBlockDeviceMappingRequest{{DeviceName: aws.String("/dev/sda1"),
				Ebs: &ec2types.LaunchTemplateEbsBlockDeviceRequest{VolumeSize: aws.Int32(50), VolumeType: ec2types.VolumeTypeGp3, Encrypted: aws.Bool(true)}}},
			TagSpecifications: []ec2types.LaunchTemplateTagSpecificationRequest{{ResourceType: ec2types.ResourceTypeInstance,
				Tags: []ec2types.Tag{{Key: aws.String("sigs.k8s.io/cluster-api-provider-aws/role"), Value: aws.String("node")}}}},
		},
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate,
			Tags: []ec2types.Tag{{Key: aws.String("owner"), Value: aws.String("mpool")}}}},
	})
	if err != nil {
		t.Fatalf("CreateLaunchTemplate %s: %v", name, err)
	}
	return out.LaunchTemplate
}

func (e *awsTestEnv) describe(t testing.TB, name string) astypes.AutoScalingGroup {
	t.Helper()
	out, err := e.asg.DescribeAutoScalingGroups(context.Background(), &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{name}})
	if err != nil {
		t.Fatalf("DescribeAutoScalingGroups %s: %v", name, err)
	}
	if len(out.AutoScalingGroups) != 1 {
		t.Fatalf("DescribeAutoScalingGroups %s: %d groups", name, len(out.AutoScalingGroups))
	}
	return out.AutoScalingGroups[0]
}

// waitGroup polls the group until cond holds (bounded, 5s).
func (e *awsTestEnv) waitGroup(t testing.TB, name, what string, cond func(astypes.AutoScalingGroup) bool) astypes.AutoScalingGroup {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		g := e.describe(t, name)
		if cond(g) {
			return g
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %s never %s: %+v", name, what, g)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func inService(n int) func(astypes.AutoScalingGroup) bool {
	return func(g astypes.AutoScalingGroup) bool {
		c := 0
		for _, in := range g.Instances {
			if in.LifecycleState == astypes.LifecycleStateInService {
				c++
			}
		}
		return c == n && len(g.Instances) == n
	}
}

func (e *awsTestEnv) createGroup(t testing.TB, name string, lt *ec2types.LaunchTemplate, version string, min, max, desired int32, subnets ...string) {
	t.Helper()
	if len(subnets) == 0 {
		for _, z := range []string{"a", "b", "c"} {
			subnets = append(subnets, AWSDefaultSubnetIDs(AWSDefaultAccountID, AWSDefaultRegion)[AWSDefaultRegion+z])
		}
	}
	_, err := e.asg.CreateAutoScalingGroup(context.Background(), &autoscaling.CreateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(name),
		LaunchTemplate:       &astypes.LaunchTemplateSpecification{LaunchTemplateId: lt.LaunchTemplateId, Version: aws.String(version)},
		MinSize:              aws.Int32(min), MaxSize: aws.Int32(max), DesiredCapacity: aws.Int32(desired),
		VPCZoneIdentifier:     aws.String(strings.Join(subnets, ",")),
		CapacityRebalance:     aws.Bool(true),
		DefaultInstanceWarmup: aws.Int32(120),
		Tags: []astypes.Tag{{Key: aws.String("kubernetes.io/cluster/demo"), Value: aws.String("owned"), PropagateAtLaunch: aws.Bool(true)},
			{Key: aws.String("unpropagated"), Value: aws.String("x"), PropagateAtLaunch: aws.Bool(false)}},
	})
	if err != nil {
		t.Fatalf("CreateAutoScalingGroup %s: %v", name, err)
	}
}

// TestAWSAutoScalingGroupLifecycle drives an Auto Scaling group through the
// real SDK: template, group, boot, instance identities, scale,
// terminate, a new template version, deletion.
func TestAWSAutoScalingGroupLifecycle(t *testing.T) {
	e := newAWSEnv(t, core.Options{})
	ctx := context.Background()
	lt := e.template(t, "pool0", "v1.31.2")
	if aws.ToInt64(lt.DefaultVersionNumber) != 1 || aws.ToInt64(lt.LatestVersionNumber) != 1 || !strings.HasPrefix(aws.ToString(lt.LaunchTemplateId), "lt-") {
		t.Fatalf("launch template %+v", lt)
	}
	e.createGroup(t, "pool0", lt, "$Latest", 1, 6, 3)
	g := e.waitGroup(t, "pool0", "had 3 instances in service", inService(3))
	if aws.ToInt32(g.DesiredCapacity) != 3 || !aws.ToBool(g.CapacityRebalance) || aws.ToInt32(g.DefaultInstanceWarmup) != 120 ||
		len(g.AvailabilityZones) != 3 || !strings.Contains(aws.ToString(g.AutoScalingGroupARN), ":autoScalingGroupName/pool0") || len(g.Tags) != 2 {
		t.Fatalf("group %+v", g)
	}
	zones := map[string]bool{}
	for _, in := range g.Instances {
		zones[aws.ToString(in.AvailabilityZone)] = true
		if in.LaunchTemplate == nil || aws.ToString(in.LaunchTemplate.Version) != "1" || aws.ToString(in.LaunchTemplate.LaunchTemplateId) != aws.ToString(lt.LaunchTemplateId) ||
			aws.ToString(in.InstanceType) != "m5.large" || aws.ToString(in.HealthStatus) != "Healthy" || len(aws.ToString(in.InstanceId)) != 19 {
			t.Fatalf("instance %+v", in)
		}
	}
	if len(zones) != 3 {
		t.Fatalf("instances in zones %v, want balanced over 3", zones)
	}

	// Instance identities: providerID, host name, address, metadata.
	cg0, err := e.srv.Cloud().Scope(AWSFaceName, AWSScope(AWSDefaultAccountID, AWSDefaultRegion)).GetGroup("pool0")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range cg0.Instances {
		wantHost := "ip-" + strings.ReplaceAll(in.PrivateIP, ".", "-") + ".ec2.internal"
		switch {
		case in.ProviderID != "aws:///"+in.Zone+"/"+in.ID:
			t.Errorf("providerID %q", in.ProviderID)
		case in.Hostname != wantHost || !strings.HasPrefix(in.PrivateIP, "10.0."):
			t.Errorf("host name %q, IP %q", in.Hostname, in.PrivateIP)
		case in.Metadata[core.MetaLocalHostname] != wantHost || in.Metadata[core.MetaInstanceID] != in.ID || in.Metadata[core.MetaRegion] != AWSDefaultRegion ||
			in.Metadata[core.MetaAvailabilityZone] != in.Zone || in.Metadata["instance_type"] != "m5.large":
			t.Errorf("metadata %v", in.Metadata)
		case in.ModelHash != aws.ToString(lt.LaunchTemplateId)+":1":
			t.Errorf("model hash %q", in.ModelHash)
		}
		if in.Zone == "us-east-1a" && !strings.HasPrefix(in.PrivateIP, "10.0.") {
			t.Errorf("us-east-1a instance %s outside 10.0.0.0/20: %s", in.ID, in.PrivateIP)
		}
	}
	if cg0.Model.Extra[core.ExtraVersion] != "v1.31.2" || string(mustCustomData(t, e, "pool0")) != awsTestUserData {
		t.Fatalf("model %+v", cg0.Model)
	}

	// EC2's view: reservations, tags, states; filters and paging.
	di, err := e.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:aws:autoscaling:groupName"), Values: []string{"pool0"}},
		{Name: aws.String("instance-state-name"), Values: []string{"running"}}}})
	if err != nil || len(di.Reservations) != 3 {
		t.Fatalf("DescribeInstances: %v, %+v", err, di)
	}
	in0 := di.Reservations[0].Instances[0]
	if aws.ToString(in0.PrivateDnsName) == "" || aws.ToString(in0.SubnetId) == "" || aws.ToString(in0.VpcId) != AWSDefaultVPCID(AWSDefaultAccountID, AWSDefaultRegion) ||
		!hasEC2Tag(in0.Tags, "kubernetes.io/cluster/demo", "owned") || !hasEC2Tag(in0.Tags, "sigs.k8s.io/cluster-api-provider-aws/role", "node") || hasEC2Tag(in0.Tags, "unpropagated", "x") {
		t.Fatalf("instance %+v", in0)
	}
	var pages, seen int
	p := ec2.NewDescribeInstancesPaginator(e.ec2, &ec2.DescribeInstancesInput{MaxResults: aws.Int32(5), Filters: []ec2types.Filter{{Name: aws.String("tag-key"), Values: []string{"kubernetes.io/cluster/*"}}}})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		seen += len(page.Reservations)
	}
	if pages != 1 || seen != 3 {
		t.Fatalf("paged DescribeInstances: %d pages, %d instances", pages, seen)
	}

	// Scale out and in.
	if _, err := e.asg.SetDesiredCapacity(ctx, &autoscaling.SetDesiredCapacityInput{AutoScalingGroupName: aws.String("pool0"), DesiredCapacity: aws.Int32(5)}); err != nil {
		t.Fatal(err)
	}
	e.waitGroup(t, "pool0", "had 5 instances in service", inService(5))

	// A new version: $Latest groups launch from it; old instances keep theirs.
	v2, err := e.ec2.CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{
		LaunchTemplateId: lt.LaunchTemplateId, SourceVersion: aws.String("1"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(AWSImageID(AWSDefaultRegion, AWSImageName("v1.32.1")))},
	})
	if err != nil || aws.ToInt64(v2.LaunchTemplateVersion.VersionNumber) != 2 || v2.LaunchTemplateVersion.LaunchTemplateData.InstanceType != ec2types.InstanceTypeM5Large {
		t.Fatalf("CreateLaunchTemplateVersion: %v %+v", err, v2)
	}
	// Terminate one instance without decrementing: it is replaced from v2.
	victim := aws.ToString(e.describe(t, "pool0").Instances[0].InstanceId)
	act, err := e.asg.TerminateInstanceInAutoScalingGroup(ctx, &autoscaling.TerminateInstanceInAutoScalingGroupInput{InstanceId: aws.String(victim), ShouldDecrementDesiredCapacity: aws.Bool(false)})
	if err != nil || !strings.Contains(aws.ToString(act.Activity.Description), victim) || act.Activity.StatusCode != astypes.ScalingActivityStatusCodeInProgress {
		t.Fatalf("TerminateInstanceInAutoScalingGroup: %v %+v", err, act)
	}
	g = e.waitGroup(t, "pool0", "replaced the instance from version 2", func(g astypes.AutoScalingGroup) bool {
		v2n := 0
		for _, in := range g.Instances {
			if aws.ToString(in.LaunchTemplate.Version) == "2" && in.LifecycleState == astypes.LifecycleStateInService {
				v2n++
			}
		}
		return v2n == 1 && inService(5)(g)
	})
	// Terminate with decrement.
	if _, err := e.asg.TerminateInstanceInAutoScalingGroup(ctx, &autoscaling.TerminateInstanceInAutoScalingGroupInput{InstanceId: g.Instances[0].InstanceId, ShouldDecrementDesiredCapacity: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	if g := e.waitGroup(t, "pool0", "had 4 instances", inService(4)); aws.ToInt32(g.DesiredCapacity) != 4 {
		t.Fatalf("desired %d after a decrementing terminate", aws.ToInt32(g.DesiredCapacity))
	}
	acts, err := e.asg.DescribeScalingActivities(ctx, &autoscaling.DescribeScalingActivitiesInput{AutoScalingGroupName: aws.String("pool0")})
	if err != nil || len(acts.Activities) < 7 {
		t.Fatalf("DescribeScalingActivities: %v, %d activities", err, len(acts.Activities))
	}

	// Template versions: describe, default, delete.
	dv, err := e.ec2.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateId: lt.LaunchTemplateId, Versions: []string{"$Latest", "$Default"}})
	if err != nil || len(dv.LaunchTemplateVersions) != 2 || aws.ToInt64(dv.LaunchTemplateVersions[0].VersionNumber) != 2 || !aws.ToBool(dv.LaunchTemplateVersions[1].DefaultVersion) ||
		aws.ToString(dv.LaunchTemplateVersions[1].LaunchTemplateData.UserData) == "" {
		t.Fatalf("DescribeLaunchTemplateVersions: %v %+v", err, dv)
	}
	if _, err := e.ec2.ModifyLaunchTemplate(ctx, &ec2.ModifyLaunchTemplateInput{LaunchTemplateId: lt.LaunchTemplateId, DefaultVersion: aws.String("2")}); err != nil {
		t.Fatal(err)
	}
	del, err := e.ec2.DeleteLaunchTemplateVersions(ctx, &ec2.DeleteLaunchTemplateVersionsInput{LaunchTemplateId: lt.LaunchTemplateId, Versions: []string{"1", "2"}})
	if err != nil || len(del.SuccessfullyDeletedLaunchTemplateVersions) != 1 || len(del.UnsuccessfullyDeletedLaunchTemplateVersions) != 1 {
		t.Fatalf("DeleteLaunchTemplateVersions: %v %+v", err, del)
	}
	dl, err := e.ec2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{"pool0"}})
	if err != nil || len(dl.LaunchTemplates) != 1 || aws.ToInt64(dl.LaunchTemplates[0].DefaultVersionNumber) != 2 || !hasEC2Tag(dl.LaunchTemplates[0].Tags, "owner", "mpool") {
		t.Fatalf("DescribeLaunchTemplates: %v %+v", err, dl)
	}

	// Deletion: refused with instances, forced, "Delete in progress", gone.
	_, err = e.asg.DeleteAutoScalingGroup(ctx, &autoscaling.DeleteAutoScalingGroupInput{AutoScalingGroupName: aws.String("pool0")})
	awstest.APIError(t, err, "ResourceInUse")
	slow := 300 * time.Millisecond
	if _, err := e.srv.Cloud().Scope(AWSFaceName, AWSScope(AWSDefaultAccountID, AWSDefaultRegion)).SetSimulation("pool0", core.SimulationPatch{DeleteDelay: &slow}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.asg.DeleteAutoScalingGroup(ctx, &autoscaling.DeleteAutoScalingGroupInput{AutoScalingGroupName: aws.String("pool0"), ForceDelete: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	if g := e.describe(t, "pool0"); aws.ToString(g.Status) != "Delete in progress" || g.Instances[0].LifecycleState != astypes.LifecycleStateTerminating {
		t.Fatalf("deleting group %+v", g)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, err := e.asg.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{"pool0"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.AutoScalingGroups) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the group was never deleted")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func hasEC2Tag(tags []ec2types.Tag, k, v string) bool {
	for _, t := range tags {
		if aws.ToString(t.Key) == k && aws.ToString(t.Value) == v {
			return true
		}
	}
	return false
}

func mustCustomData(t testing.TB, e *awsTestEnv, name string) []byte {
	t.Helper()
	cd, err := e.srv.Cloud().Scope(AWSFaceName, AWSScope(AWSDefaultAccountID, AWSDefaultRegion)).CustomData(name)
	if err != nil {
		t.Fatal(err)
	}
	return cd
}

// startCloud starts a Server with the AWS face (unless opts.Faces has one
// of its name) that boots in 100ms by default.
func startCloud(t testing.TB, opts core.Options) *server.Server {
	t.Helper()
	return servertest.Start(t, opts, &AWSFace{})
}
