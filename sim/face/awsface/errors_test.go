package awsface

import (
	"context"
	"encoding/base64"
	"net/http"
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
)

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
