package awsface

import (
	"context"
	"encoding/base64"
	"fmt"
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

func healthOf(g astypes.AutoScalingGroup, id string) string {
	for _, in := range g.Instances {
		if aws.ToString(in.InstanceId) == id {
			return aws.ToString(in.HealthStatus)
		}
	}
	return "gone"
}

func lifecycleStates(g astypes.AutoScalingGroup) map[string]astypes.LifecycleState {
	out := map[string]astypes.LifecycleState{}
	for _, in := range g.Instances {
		out[aws.ToString(in.InstanceId)] = in.LifecycleState
	}
	return out
}

// onlyInstance returns the group's one instance in state, failing
// otherwise.
func onlyInstance(t *testing.T, g astypes.AutoScalingGroup, state astypes.LifecycleState) string {
	t.Helper()
	id := ""
	for i, s := range lifecycleStates(g) {
		if s == state {
			if id != "" {
				t.Fatalf("two instances %s: %v", state, lifecycleStates(g))
			}
			id = i
		}
	}
	if id == "" {
		t.Fatalf("no instance %s: %v", state, lifecycleStates(g))
	}
	return id
}

// continueLaunch completes the launch hook "launch" of the group's instance
// id with CONTINUE.
func continueLaunch(e *awsTestEnv, group, id string) error {
	_, err := e.asg.CompleteLifecycleAction(context.Background(), &autoscaling.CompleteLifecycleActionInput{
		AutoScalingGroupName: aws.String(group), LifecycleHookName: aws.String("launch"),
		InstanceId: aws.String(id), LifecycleActionResult: aws.String("CONTINUE"),
	})
	return err
}

func suspendedNames(g astypes.AutoScalingGroup) []string {
	var out []string
	for _, p := range g.SuspendedProcesses {
		out = append(out, aws.ToString(p.ProcessName))
	}
	return out
}

// createMixedGroup creates a group of lt with a mixed instances policy:
// overrides m5.large, c5.large, m6i.large; On-Demand base 1 and 0% above
// it; Spot lowest-price.
func (e *awsTestEnv) createMixedGroup(t testing.TB, name string, lt *ec2types.LaunchTemplate, desired int32, rebalance bool) {
	t.Helper()
	_, err := e.asg.CreateAutoScalingGroup(context.Background(), &autoscaling.CreateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(name),
		MinSize:              aws.Int32(0), MaxSize: aws.Int32(10), DesiredCapacity: aws.Int32(desired),
		VPCZoneIdentifier: aws.String(AWSDefaultSubnetID),
		CapacityRebalance: aws.Bool(rebalance),
		MixedInstancesPolicy: &astypes.MixedInstancesPolicy{
			LaunchTemplate: &astypes.LaunchTemplate{
				LaunchTemplateSpecification: &astypes.LaunchTemplateSpecification{LaunchTemplateId: lt.LaunchTemplateId, Version: aws.String("1")},
				Overrides: []astypes.LaunchTemplateOverrides{
					{InstanceType: aws.String("m5.large")}, {InstanceType: aws.String("c5.large"), WeightedCapacity: aws.String("1")}, {InstanceType: aws.String("m6i.large")},
				},
			},
			InstancesDistribution: &astypes.InstancesDistribution{
				OnDemandBaseCapacity: aws.Int32(1), OnDemandPercentageAboveBaseCapacity: aws.Int32(0),
				SpotAllocationStrategy: aws.String("lowest-price"), SpotMaxPrice: aws.String("0.05"),
			},
		},
	})
	if err != nil {
		t.Fatalf("CreateAutoScalingGroup %s: %v", name, err)
	}
}

// markets returns the group's instances by EC2's instance lifecycle
// ("spot", or "" for On-Demand) and their types.
func (e *awsTestEnv) markets(t testing.TB, name string) (spot, onDemand []string, types map[string]string) {
	t.Helper()
	out, err := e.ec2.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{
		Filters: []ec2types.Filter{{Name: aws.String("tag:aws:autoscaling:groupName"), Values: []string{name}},
			{Name: aws.String("instance-state-name"), Values: []string{"pending", "running"}}},
	})
	if err != nil {
		t.Fatalf("DescribeInstances: %v", err)
	}
	types = map[string]string{}
	for _, r := range out.Reservations {
		for _, in := range r.Instances {
			id := aws.ToString(in.InstanceId)
			types[id] = string(in.InstanceType)
			if in.InstanceLifecycle == ec2types.InstanceLifecycleTypeSpot {
				spot = append(spot, id)
			} else {
				onDemand = append(onDemand, id)
			}
		}
	}
	return spot, onDemand, types
}

func activityCauses(t testing.TB, e *awsTestEnv, name string) string {
	t.Helper()
	out, err := e.asg.DescribeScalingActivities(context.Background(), &autoscaling.DescribeScalingActivitiesInput{AutoScalingGroupName: aws.String(name)})
	if err != nil {
		t.Fatalf("DescribeScalingActivities: %v", err)
	}
	var b strings.Builder
	for _, a := range out.Activities {
		b.WriteString(aws.ToString(a.Cause) + "\n")
	}
	return b.String()
}

func instanceIDs(g astypes.AutoScalingGroup) []string {
	var out []string
	for _, in := range g.Instances {
		out = append(out, aws.ToString(in.InstanceId))
	}
	return out
}

// waitCauses waits (bounded) until the group's scaling activities include
// every one of wants.
func waitCauses(t testing.TB, e *awsTestEnv, name string, wants ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		causes := activityCauses(t, e, name)
		missing := ""
		for _, w := range wants {
			if !strings.Contains(causes, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no scaling activity %q in\n%s", missing, causes)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// setDesired sets the group's desired capacity, failing t on an error.
func (e *awsTestEnv) setDesired(t testing.TB, name string, desired int32) {
	t.Helper()
	if _, err := e.asg.SetDesiredCapacity(context.Background(), &autoscaling.SetDesiredCapacityInput{AutoScalingGroupName: aws.String(name), DesiredCapacity: aws.Int32(desired)}); err != nil {
		t.Fatalf("SetDesiredCapacity %s %d: %v", name, desired, err)
	}
}

// startGroup creates the group name of a launch template of the same name
// (the CAPA AMI of v1.31.2) at $Latest, sized min..max, and waits until
// its desired instances are in service.
func (e *awsTestEnv) startGroup(t testing.TB, name string, min, max, desired int32) (*ec2types.LaunchTemplate, astypes.AutoScalingGroup) {
	t.Helper()
	lt := e.template(t, name, "v1.31.2")
	e.createGroup(t, name, lt, "$Latest", min, max, desired)
	return lt, e.waitGroup(t, name, fmt.Sprintf("had %d instances in service", desired), inService(int(desired)))
}
