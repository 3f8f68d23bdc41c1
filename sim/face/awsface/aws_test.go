package awsface

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	clocktesting "k8s.io/utils/clock/testing"

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

// scaleTo sets the group's desired capacity and waits until that many
// instances are in service.
func (e *awsTestEnv) scaleTo(t testing.TB, name string, desired int32) astypes.AutoScalingGroup {
	t.Helper()
	e.setDesired(t, name, desired)
	return e.waitGroup(t, name, fmt.Sprintf("had %d instances in service", desired), inService(int(desired)))
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

// TestAWSErrors: each service's errors, as the SDK decodes them.
func TestAWSErrors(t *testing.T) {
	e := newAWSEnv(t, core.Options{})
	ctx := context.Background()
	lt := e.template(t, "errs", "v1.31.2")
	e.createGroup(t, "errs", lt, "$Default", 1, 4, 1)
	badAMI, err := e.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("bad-ami"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String("ami-0000000000000dead"), InstanceType: ec2types.InstanceTypeM5Large}})
	if err != nil {
		t.Fatal(err)
	}
	subnet := AWSDefaultSubnetID
	for _, tt := range []struct {
		name   string
		call   func() error
		code   string
		status int
		msg    string
	}{
		{name: "desired above max", code: "ValidationError", status: 400, msg: "Desired capacity:5 must be between the specified min size:1 and max size:4", call: func() error {
			_, err := e.asg.CreateAutoScalingGroup(ctx, &autoscaling.CreateAutoScalingGroupInput{AutoScalingGroupName: aws.String("x"),
				LaunchTemplate: &astypes.LaunchTemplateSpecification{LaunchTemplateId: lt.LaunchTemplateId}, MinSize: aws.Int32(1), MaxSize: aws.Int32(4), DesiredCapacity: aws.Int32(5), VPCZoneIdentifier: &subnet})
			return err
		}},
		{name: "a name in use", code: "AlreadyExists", status: 400, call: func() error {
			_, err := e.asg.CreateAutoScalingGroup(ctx, &autoscaling.CreateAutoScalingGroupInput{AutoScalingGroupName: aws.String("errs"),
				LaunchTemplate: &astypes.LaunchTemplateSpecification{LaunchTemplateId: lt.LaunchTemplateId}, MinSize: aws.Int32(1), MaxSize: aws.Int32(4), VPCZoneIdentifier: &subnet})
			return err
		}},
		{name: "an unknown AMI in the template", code: "ValidationError", status: 400, msg: "The image id '[ami-0000000000000dead]' does not exist", call: func() error {
			_, err := e.asg.CreateAutoScalingGroup(ctx, &autoscaling.CreateAutoScalingGroupInput{AutoScalingGroupName: aws.String("y"),
				LaunchTemplate: &astypes.LaunchTemplateSpecification{LaunchTemplateId: badAMI.LaunchTemplate.LaunchTemplateId}, MinSize: aws.Int32(1), MaxSize: aws.Int32(1), VPCZoneIdentifier: &subnet})
			return err
		}},
		{name: "an unknown AMI asked of EC2", code: "InvalidAMIID.NotFound", status: 400, call: func() error {
			_, err := e.ec2.DescribeImages(ctx, &ec2.DescribeImagesInput{ImageIds: []string{"ami-0000000000000dead"}})
			return err
		}},
		{name: "an unknown subnet", code: "ValidationError", status: 400, msg: "subnet-00000000000000000", call: func() error {
			_, err := e.asg.CreateAutoScalingGroup(ctx, &autoscaling.CreateAutoScalingGroupInput{AutoScalingGroupName: aws.String("z"),
				LaunchTemplate: &astypes.LaunchTemplateSpecification{LaunchTemplateId: lt.LaunchTemplateId}, MinSize: aws.Int32(1), MaxSize: aws.Int32(1), VPCZoneIdentifier: aws.String("subnet-00000000000000000")})
			return err
		}},
		{name: "SetDesiredCapacity above max", code: "ValidationError", status: 400, msg: "New SetDesiredCapacity value 9 is above max value 4", call: func() error {
			_, err := e.asg.SetDesiredCapacity(ctx, &autoscaling.SetDesiredCapacityInput{AutoScalingGroupName: aws.String("errs"), DesiredCapacity: aws.Int32(9)})
			return err
		}},
		{name: "update below min", code: "ValidationError", status: 400, call: func() error {
			_, err := e.asg.UpdateAutoScalingGroup(ctx, &autoscaling.UpdateAutoScalingGroupInput{AutoScalingGroupName: aws.String("errs"), MinSize: aws.Int32(2), DesiredCapacity: aws.Int32(1)})
			return err
		}},
		{name: "a decrement below min", code: "ValidationError", status: 400, msg: "min size constraint", call: func() error {
			g := e.waitGroup(t, "errs", "had an instance", inService(1))
			_, err := e.asg.TerminateInstanceInAutoScalingGroup(ctx, &autoscaling.TerminateInstanceInAutoScalingGroupInput{InstanceId: g.Instances[0].InstanceId, ShouldDecrementDesiredCapacity: aws.Bool(true)})
			return err
		}},
		{name: "an unknown group", code: "ValidationError", status: 400, call: func() error {
			_, err := e.asg.SetDesiredCapacity(ctx, &autoscaling.SetDesiredCapacityInput{AutoScalingGroupName: aws.String("nope"), DesiredCapacity: aws.Int32(1)})
			return err
		}},
		{name: "user data over 16 KB", code: "InvalidParameterValue", status: 400, call: func() error {
			_, err := e.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("big"),
				LaunchTemplateData: &ec2types.RequestLaunchTemplateData{UserData: aws.String(base64.StdEncoding.EncodeToString(make([]byte, 16385)))}})
			return err
		}},
		{name: "a template name in use", code: "InvalidLaunchTemplateName.AlreadyExistsException", status: 400, call: func() error {
			_, err := e.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("errs"), LaunchTemplateData: &ec2types.RequestLaunchTemplateData{KeyName: aws.String("k")}})
			return err
		}},
		{name: "an unknown template ID", code: "InvalidLaunchTemplateId.NotFound", status: 400, call: func() error {
			_, err := e.ec2.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateId: aws.String("lt-00000000000000000")})
			return err
		}},
		{name: "an unknown instance", code: "InvalidInstanceID.NotFound", status: 400, call: func() error {
			_, err := e.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{"i-00000000000000000"}})
			return err
		}},
	} {
		err := tt.call()
		if err == nil {
			t.Errorf("%s: no error, want %s", tt.name, tt.code)
			continue
		}
		ae := awstest.APIError(t, err, tt.code)
		if awstest.HTTPStatus(err) != tt.status || !strings.Contains(ae.ErrorMessage(), tt.msg) {
			t.Errorf("%s: %d %v, want %d with %q", tt.name, awstest.HTTPStatus(err), err, tt.status, tt.msg)
		}
	}
	// The user data limit is 16 KB decoded: exactly 16384 bytes are fine.
	if _, err := e.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("at-limit"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{UserData: aws.String(base64.StdEncoding.EncodeToString(make([]byte, 16384)))}}); err != nil {
		t.Fatalf("user data of 16384 bytes: %v", err)
	}
}

// TestAWSAuthentication: SigV4 is verified; the services answer a wrong
// secret, an unknown key and a stale date in their own shapes.
func TestAWSAuthentication(t *testing.T) {
	e := newAWSEnv(t, core.Options{})
	ctx := context.Background()
	for _, tt := range []struct {
		name, key, secret string
		asgCode, ec2Code  string
		asgStat, ec2Stat  int
	}{
		{"a wrong secret", AWSDefaultAccessKeyID, "nope", "SignatureDoesNotMatch", "AuthFailure", 403, 401},
		{"an unknown key", "AKIAUNKNOWN000000000", AWSDefaultSecretAccessKey, "InvalidClientTokenId", "AuthFailure", 403, 401},
	} {
		cfg := awsConfig(e.url, tt.key, tt.secret)
		_, err := autoscaling.NewFromConfig(cfg).DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{})
		if awstest.APIError(t, err, tt.asgCode); awstest.HTTPStatus(err) != tt.asgStat {
			t.Errorf("%s: autoscaling %d", tt.name, awstest.HTTPStatus(err))
		}
		_, err = ec2.NewFromConfig(cfg).DescribeInstances(ctx, &ec2.DescribeInstancesInput{})
		if awstest.APIError(t, err, tt.ec2Code); awstest.HTTPStatus(err) != tt.ec2Stat {
			t.Errorf("%s: ec2 %d", tt.name, awstest.HTTPStatus(err))
		}
	}
	// A registered key acts in its account.
	if err := AWSSetKey(e.srv.Cloud(), AWSKey{AccessKeyID: "AKIAOTHERACCOUNT0001", SecretAccessKey: "s2", AccountID: "000000000002"}); err != nil {
		t.Fatal(err)
	}
	other := awsConfig(e.url, "AKIAOTHERACCOUNT0001", "s2")
	if _, err := ec2.NewFromConfig(other).CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("mine"), LaunchTemplateData: &ec2types.RequestLaunchTemplateData{KeyName: aws.String("k")}}); err != nil {
		t.Fatal(err)
	}
	if out, err := e.ec2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{}); err != nil || len(out.LaunchTemplates) != 0 {
		t.Fatalf("another account's templates are visible: %v %+v", err, out)
	}
	// Removing the default key refuses it.
	if err := AWSDeleteKey(e.srv.Cloud(), AWSDefaultAccessKeyID); err != nil {
		t.Fatal(err)
	}
	_, err := e.asg.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{})
	awstest.APIError(t, err, "InvalidClientTokenId")

	// A cloud whose clock is an hour ahead: the SDK's signatures are stale.
	clk := clocktesting.NewFakeClock(time.Now().Add(time.Hour))
	late := newAWSEnv(t, core.Options{Clock: clk})
	_, err = late.asg.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{})
	if ae := awstest.APIError(t, err, "SignatureDoesNotMatch"); !strings.HasPrefix(ae.ErrorMessage(), "Signature expired:") || awstest.HTTPStatus(err) != 403 {
		t.Fatalf("stale autoscaling request: %v", err)
	}
	_, err = late.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{})
	if awstest.APIError(t, err, "RequestExpired"); awstest.HTTPStatus(err) != 400 {
		t.Fatalf("stale ec2 request: %v", err)
	}

	// An unsigned request.
	resp, err := http.Post(e.url, "application/x-www-form-urlencoded", strings.NewReader("Action=DescribeAutoScalingGroups&Version=2011-01-01"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("unsigned request: %s", resp.Status)
	}
}

// TestAWSThrottling: budgets and injected faults answer each service's
// throttling: Auto Scaling 400 Throttling, EC2 503 RequestLimitExceeded.
func TestAWSThrottling(t *testing.T) {
	slow := core.Budget{Burst: 2, PerSecond: 0.01}
	e := newAWSEnv(t, core.Options{Faces: []core.Face{&AWSFace{Budgets: AWSBudgets{AutoScalingReads: slow, EC2NonMutating: slow}}}})
	ctx := context.Background()
	var asgErr, ec2Err error
	for range 3 {
		_, asgErr = e.asg.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{})
		_, ec2Err = e.ec2.DescribeImages(ctx, &ec2.DescribeImagesInput{})
	}
	if awstest.APIError(t, asgErr, "Throttling"); awstest.HTTPStatus(asgErr) != 400 {
		t.Fatalf("autoscaling throttled with %d", awstest.HTTPStatus(asgErr))
	}
	if awstest.APIError(t, ec2Err, "RequestLimitExceeded"); awstest.HTTPStatus(ec2Err) != 503 {
		t.Fatalf("ec2 throttled with %d", awstest.HTTPStatus(ec2Err))
	}
	// Other actions have buckets of their own.
	if _, err := e.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{}); err != nil {
		t.Fatal(err)
	}

	// Injected faults, for this face only.
	if err := e.srv.SetFaceFaults(AWSFaceName, &core.Faults{ThrottleRate: 1}); err != nil {
		t.Fatal(err)
	}
	_, err := e.asg.SetDesiredCapacity(ctx, &autoscaling.SetDesiredCapacityInput{AutoScalingGroupName: aws.String("x"), DesiredCapacity: aws.Int32(1)})
	if awstest.APIError(t, err, "Throttling"); awstest.HTTPStatus(err) != 400 {
		t.Fatalf("injected autoscaling throttle: %d", awstest.HTTPStatus(err))
	}
	_, err = e.ec2.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{})
	if awstest.APIError(t, err, "RequestLimitExceeded"); awstest.HTTPStatus(err) != 503 {
		t.Fatalf("injected ec2 throttle: %d", awstest.HTTPStatus(err))
	}
	if err := e.srv.SetFaceFaults(AWSFaceName, &core.Faults{ErrorRate: 1}); err != nil {
		t.Fatal(err)
	}
	_, err = e.asg.DescribeScalingActivities(ctx, &autoscaling.DescribeScalingActivitiesInput{AutoScalingGroupName: aws.String("x")})
	if awstest.HTTPStatus(err) < 500 {
		t.Fatalf("injected server error: %v", err)
	}
	if n := e.srv.Stats().CountStatus(OpAWSDescribeVpcs, http.StatusServiceUnavailable); n != 1 {
		t.Fatalf("throttled DescribeVpcs counted %d times", n)
	}
}

// TestAWSVCPUQuota: launches beyond the regional vCPU limit fail as scaling
// activities; the group launches the rest once the quota allows.
func TestAWSVCPUQuota(t *testing.T) {
	e := newAWSEnv(t, core.Options{Faces: []core.Face{&AWSFace{VCPUQuota: 8}}})
	ctx := context.Background()
	lt := e.template(t, "quota", "v1.31.2") // m5.large: 2 vCPUs
	e.createGroup(t, "a", lt, "$Latest", 0, 4, 2)
	e.createGroup(t, "b", lt, "$Latest", 0, 4, 3)
	g := e.waitGroup(t, "b", "had 2 instances", inService(2))
	if aws.ToInt32(g.DesiredCapacity) != 3 {
		t.Fatalf("desired %d, want 3 kept", aws.ToInt32(g.DesiredCapacity))
	}
	acts, err := e.asg.DescribeScalingActivities(ctx, &autoscaling.DescribeScalingActivitiesInput{AutoScalingGroupName: aws.String("b")})
	if err != nil || len(acts.Activities) == 0 || acts.Activities[0].StatusCode != astypes.ScalingActivityStatusCodeFailed ||
		!strings.Contains(aws.ToString(acts.Activities[0].StatusMessage), "current vCPU limit of 8") {
		t.Fatalf("activities %v %+v", err, acts)
	}
	e.setDesired(t, "a", 0)
	e.waitGroup(t, "b", "launched the held-back instance", inService(3))
}

// TestAWSDescribePagingAndCatalogue: DescribeAutoScalingGroups pages; the
// default VPC, its subnets, zones and the AMIs are described.
func TestAWSDescribePagingAndCatalogue(t *testing.T) {
	e := newAWSEnv(t, core.Options{})
	ctx := context.Background()
	lt := e.template(t, "paged", "v1.31.2")
	for _, n := range []string{"p1", "p2", "p3"} {
		e.createGroup(t, n, lt, "$Latest", 0, 1, 0)
	}
	var names []string
	p := autoscaling.NewDescribeAutoScalingGroupsPaginator(e.asg, &autoscaling.DescribeAutoScalingGroupsInput{MaxRecords: aws.Int32(2)})
	pages := 0
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, g := range page.AutoScalingGroups {
			names = append(names, aws.ToString(g.AutoScalingGroupName))
		}
	}
	if pages != 2 || strings.Join(names, ",") != "p1,p2,p3" {
		t.Fatalf("%d pages: %v", pages, names)
	}
	_, err := e.asg.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{MaxRecords: aws.Int32(101)})
	awstest.APIError(t, err, "ValidationError")
	_, err = e.asg.DescribeInstanceRefreshes(ctx, &autoscaling.DescribeInstanceRefreshesInput{AutoScalingGroupName: aws.String("p1"), MaxRecords: aws.Int32(0)})
	awstest.APIError(t, err, "ValidationError")
	// A page token is the action's (and group's) own: another's, or none
	// the face wrote, is refused.
	first, err := e.asg.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{MaxRecords: aws.Int32(1)})
	if err != nil || first.NextToken == nil {
		t.Fatalf("DescribeAutoScalingGroups of one: %v, next token %v", err, first.NextToken)
	}
	for _, tok := range []*string{aws.String("garbage"), first.NextToken} {
		_, err = e.asg.DescribeScalingActivities(ctx, &autoscaling.DescribeScalingActivitiesInput{AutoScalingGroupName: aws.String("p1"), NextToken: tok})
		awstest.APIError(t, err, "InvalidNextToken")
		_, err = e.asg.DescribeInstanceRefreshes(ctx, &autoscaling.DescribeInstanceRefreshesInput{AutoScalingGroupName: aws.String("p1"), NextToken: tok})
		awstest.APIError(t, err, "InvalidNextToken")
	}
	_, err = e.asg.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{NextToken: aws.String("garbage")})
	awstest.APIError(t, err, "InvalidNextToken")

	// Deleting an empty group needs no force.
	if _, err := e.asg.DeleteAutoScalingGroup(ctx, &autoscaling.DeleteAutoScalingGroupInput{AutoScalingGroupName: aws.String("p3")}); err != nil {
		t.Fatal(err)
	}

	subnets, err := e.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{{Name: aws.String("availability-zone"), Values: []string{"us-east-1a"}}}})
	if err != nil || len(subnets.Subnets) != 1 || aws.ToString(subnets.Subnets[0].SubnetId) != AWSDefaultSubnetID || aws.ToString(subnets.Subnets[0].CidrBlock) != "10.0.0.0/20" {
		t.Fatalf("DescribeSubnets: %v %+v", err, subnets)
	}
	vpcs, err := e.ec2.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{})
	if err != nil || len(vpcs.Vpcs) != 1 || !aws.ToBool(vpcs.Vpcs[0].IsDefault) || aws.ToString(vpcs.Vpcs[0].CidrBlock) != "10.0.0.0/16" {
		t.Fatalf("DescribeVpcs: %v %+v", err, vpcs)
	}
	azs, err := e.ec2.DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{})
	if err != nil || len(azs.AvailabilityZones) != 3 || aws.ToString(azs.AvailabilityZones[0].ZoneId) != "use1-az1" {
		t.Fatalf("DescribeAvailabilityZones: %v %+v", err, azs)
	}
	ims, err := e.ec2.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{AWSCAPAImageOwner},
		Filters: []ec2types.Filter{{Name: aws.String("name"), Values: []string{"capa-ami-ubuntu-24.04-v1.31.2-*"}}}})
	if err != nil || len(ims.Images) != 1 || aws.ToString(ims.Images[0].ImageId) != AWSImageID(AWSDefaultRegion, AWSImageName("v1.31.2")) {
		t.Fatalf("DescribeImages: %v %+v", err, ims)
	}
}

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
