package awsface

import (
	"context"
	"strconv"
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

// refreshEnv is a group of 4 instances at $Latest on a fake clock.
type refreshEnv struct {
	*awsTestEnv
	clk *clocktesting.FakeClock
	lt  *ec2types.LaunchTemplate
}

func newRefreshEnv(t *testing.T) *refreshEnv {
	clk := clocktesting.NewFakeClock(time.Now())
	e := newAWSEnv(t, core.Options{Clock: clk, Faces: []core.Face{&AWSFace{ClockSkew: 24 * time.Hour}}})
	lt := e.template(t, "refresh", "v1.31.2")
	e.createGroup(t, "refresh", lt, "$Latest", 0, 10, 4)
	e.waitGroup(t, "refresh", "had 4 instances in service", inService(4))
	return &refreshEnv{awsTestEnv: e, clk: clk, lt: lt}
}

// newVersion creates the template's next version, of instance type typ.
func (e *refreshEnv) newVersion(t *testing.T, typ ec2types.InstanceType) string {
	t.Helper()
	v, err := e.ec2.CreateLaunchTemplateVersion(context.Background(), &ec2.CreateLaunchTemplateVersionInput{
		LaunchTemplateId: e.lt.LaunchTemplateId, SourceVersion: aws.String("1"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{InstanceType: typ},
	})
	if err != nil {
		t.Fatalf("CreateLaunchTemplateVersion: %v", err)
	}
	return strconv.FormatInt(aws.ToInt64(v.LaunchTemplateVersion.VersionNumber), 10)
}

func (e *refreshEnv) refresh(t *testing.T, id string) astypes.InstanceRefresh {
	t.Helper()
	out, err := e.asg.DescribeInstanceRefreshes(context.Background(), &autoscaling.DescribeInstanceRefreshesInput{
		AutoScalingGroupName: aws.String("refresh"), InstanceRefreshIds: []string{id}})
	if err != nil || len(out.InstanceRefreshes) != 1 {
		t.Fatalf("DescribeInstanceRefreshes %s: %+v, %v", id, out, err)
	}
	return out.InstanceRefreshes[0]
}

// counts are the group's instances in service and not terminating, and
// those in service from version.
func counts(g astypes.AutoScalingGroup, version string) (inSvc, live, current int) {
	for _, in := range g.Instances {
		if in.LifecycleState == astypes.LifecycleStateInService && aws.ToString(in.HealthStatus) == "Healthy" {
			inSvc++
			if in.LaunchTemplate != nil && aws.ToString(in.LaunchTemplate.Version) == version {
				current++
			}
		}
		if in.LifecycleState != astypes.LifecycleStateTerminating {
			live++
		}
	}
	return
}

// runRefresh steps the clock past each warmup until the refresh ends,
// checking the healthy bounds on every observed state.
func (e *refreshEnv) runRefresh(t *testing.T, id, version string, minInService, maxLive int) astypes.InstanceRefresh {
	t.Helper()
	for range 60 {
		g := e.describe(t, "refresh")
		inSvc, live, _ := counts(g, version)
		if inSvc < minInService || live > maxLive {
			t.Fatalf("during the refresh: %d in service (want ≥ %d), %d instances (want ≤ %d): %v", inSvc, minInService, live, maxLive, lifecycleStates(g))
		}
		r := e.refresh(t, id)
		if r.Status == astypes.InstanceRefreshStatusSuccessful {
			return r
		}
		if r.Status != astypes.InstanceRefreshStatusInProgress {
			t.Fatalf("refresh %+v", r)
		}
		e.clk.Step(31 * time.Second)
	}
	t.Fatalf("refresh %s never ended: %+v", id, e.refresh(t, id))
	return astypes.InstanceRefresh{}
}

// TestAWSInstanceRefresh drives instance refreshes through the real SDK on
// a fake clock: instances not on the group's launch template version are
// replaced within MinHealthyPercentage/MaxHealthyPercentage, after each
// new instance's warmup; one refresh at a time; a suspended InstanceRefresh
// process holds it; CancelInstanceRefresh stops it.
func TestAWSInstanceRefresh(t *testing.T) {
	e := newRefreshEnv(t)
	ctx := context.Background()
	start := func(minH, maxH *int32) (string, error) {
		out, err := e.asg.StartInstanceRefresh(ctx, &autoscaling.StartInstanceRefreshInput{AutoScalingGroupName: aws.String("refresh"),
			Preferences: &astypes.RefreshPreferences{MinHealthyPercentage: minH, MaxHealthyPercentage: maxH, InstanceWarmup: aws.Int32(60), SkipMatching: aws.Bool(true)}})
		if err != nil {
			return "", err
		}
		return aws.ToString(out.InstanceRefreshId), nil
	}

	// Nothing to replace: Successful at once.
	id, err := start(nil, nil)
	if err != nil {
		t.Fatalf("StartInstanceRefresh: %v", err)
	}
	if r := e.refresh(t, id); r.Status != astypes.InstanceRefreshStatusSuccessful || aws.ToInt32(r.PercentageComplete) != 100 {
		t.Fatalf("empty refresh %+v", r)
	}

	// minHealthy 50%: two at a time, never fewer than 2 in service, never
	// more than 4 instances.
	v2 := e.newVersion(t, ec2types.InstanceTypeM5Xlarge)
	if id, err = start(aws.Int32(50), nil); err != nil {
		t.Fatalf("StartInstanceRefresh: %v", err)
	}
	if r := e.refresh(t, id); r.Status != astypes.InstanceRefreshStatusInProgress || aws.ToInt32(r.Preferences.MinHealthyPercentage) != 50 || aws.ToInt32(r.Preferences.InstanceWarmup) != 60 {
		t.Fatalf("refresh %+v", r)
	}
	_, err = start(nil, nil)
	if ae := awstest.APIError(t, err, "InstanceRefreshInProgress"); ae.ErrorMessage() != "An Instance Refresh is already in progress and blocks the execution of this Instance Refresh." {
		t.Fatalf("message %q", ae.ErrorMessage())
	}
	e.runRefresh(t, id, v2, 2, 4)
	g := e.describe(t, "refresh")
	if inSvc, live, cur := counts(g, v2); inSvc != 4 || live != 4 || cur != 4 {
		t.Fatalf("after the refresh: %d in service, %d live, %d on version %s: %+v", inSvc, live, cur, v2, g.Instances)
	}
	for _, in := range g.Instances {
		if aws.ToString(in.InstanceType) != "m5.xlarge" {
			t.Fatalf("instance %+v after the refresh", in)
		}
	}

	// minHealthy 100%, maxHealthy 150%: launch first, never fewer than 4 in
	// service, never more than 6 instances.
	v3 := e.newVersion(t, ec2types.InstanceTypeM5Large)
	if id, err = start(aws.Int32(100), aws.Int32(150)); err != nil {
		t.Fatalf("StartInstanceRefresh: %v", err)
	}
	e.runRefresh(t, id, v3, 4, 6)
	if inSvc, live, cur := counts(e.describe(t, "refresh"), v3); inSvc != 4 || live != 4 || cur != 4 {
		t.Fatalf("after the refresh: %d in service, %d live, %d on version %s", inSvc, live, cur, v3)
	}

	// InstanceRefresh suspended: the refresh does not progress; cancelled.
	v4 := e.newVersion(t, ec2types.InstanceTypeM5Xlarge)
	if _, err := e.asg.SuspendProcesses(ctx, &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String("refresh"), ScalingProcesses: []string{"InstanceRefresh"}}); err != nil {
		t.Fatal(err)
	}
	if id, err = start(aws.Int32(0), nil); err != nil {
		t.Fatalf("StartInstanceRefresh: %v", err)
	}
	for range 3 {
		e.clk.Step(time.Minute)
		if _, _, cur := counts(e.describe(t, "refresh"), v4); cur != 0 {
			t.Fatalf("InstanceRefresh suspended: %d instances replaced", cur)
		}
		if r := e.refresh(t, id); r.Status != astypes.InstanceRefreshStatusPending || aws.ToInt32(r.InstancesToUpdate) != 4 {
			t.Fatalf("InstanceRefresh suspended: %+v", r)
		}
	}
	if _, err := e.asg.CancelInstanceRefresh(ctx, &autoscaling.CancelInstanceRefreshInput{AutoScalingGroupName: aws.String("refresh")}); err != nil {
		t.Fatalf("CancelInstanceRefresh: %v", err)
	}
	if r := e.refresh(t, id); r.Status != astypes.InstanceRefreshStatusCancelled || r.EndTime == nil {
		t.Fatalf("cancelled refresh %+v", r)
	}
	_, err = e.asg.CancelInstanceRefresh(ctx, &autoscaling.CancelInstanceRefreshInput{AutoScalingGroupName: aws.String("refresh")})
	awstest.APIError(t, err, "ActiveInstanceRefreshNotFound")
	if _, _, cur := counts(e.describe(t, "refresh"), v4); cur != 0 {
		t.Fatalf("after the cancel: %d instances replaced", cur)
	}

	// AWS's validation of the preferences; all refreshes are listed.
	_, err = start(nil, aws.Int32(150))
	awstest.APIError(t, err, "ValidationError")
	_, err = start(aws.Int32(101), nil)
	awstest.APIError(t, err, "ValidationError")
	all, err := e.asg.DescribeInstanceRefreshes(ctx, &autoscaling.DescribeInstanceRefreshesInput{AutoScalingGroupName: aws.String("refresh")})
	if err != nil || len(all.InstanceRefreshes) != 4 || aws.ToString(all.InstanceRefreshes[0].InstanceRefreshId) != id {
		t.Fatalf("DescribeInstanceRefreshes: %+v, %v", all, err)
	}
}
