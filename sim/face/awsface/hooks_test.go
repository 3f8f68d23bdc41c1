package awsface

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface/awstest"
)

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

// TestAWSLifecycleHooks drives lifecycle hooks through the real SDK, on a
// fake clock: a launch hook holds new instances in Pending:Wait, not
// booted, until CompleteLifecycleAction (CONTINUE boots, a timed-out
// ABANDON terminates and replaces); a terminate hook holds a terminated
// instance in Terminating:Wait until its heartbeat times out; AWS's
// errors for unknown hooks, groups and actions.
func TestAWSLifecycleHooks(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	e := newAWSEnv(t, core.Options{Clock: clk, Faces: []core.Face{&AWSFace{ClockSkew: 24 * time.Hour}}})
	ctx := context.Background()
	lt := e.template(t, "hooks", "v1.31.2")
	subnet := AWSDefaultSubnetIDs(AWSDefaultAccountID, AWSDefaultRegion)[AWSDefaultRegion+"a"]
	_, err := e.asg.CreateAutoScalingGroup(ctx, &autoscaling.CreateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String("hooks"),
		LaunchTemplate:       &astypes.LaunchTemplateSpecification{LaunchTemplateId: lt.LaunchTemplateId, Version: aws.String("$Latest")},
		MinSize:              aws.Int32(0), MaxSize: aws.Int32(5), DesiredCapacity: aws.Int32(1),
		VPCZoneIdentifier: aws.String(subnet),
		LifecycleHookSpecificationList: []astypes.LifecycleHookSpecification{{
			LifecycleHookName: aws.String("launch"), LifecycleTransition: aws.String("autoscaling:EC2_INSTANCE_LAUNCHING"),
			HeartbeatTimeout: aws.Int32(60), NotificationMetadata: aws.String("meta"),
		}},
	})
	if err != nil {
		t.Fatalf("CreateAutoScalingGroup: %v", err)
	}
	cs := e.srv.Cloud().Scope(AWSFaceName, AWSScope(AWSDefaultAccountID, AWSDefaultRegion))

	// The first instance waits, not booted, however often the group is read.
	first := onlyInstance(t, e.describe(t, "hooks"), "Pending:Wait")
	clk.Step(59 * time.Second)
	onlyInstance(t, e.describe(t, "hooks"), "Pending:Wait")
	cg, err := cs.GetGroup("hooks")
	if err != nil || len(cg.Instances) != 1 || cg.Instances[0].State != core.StateCreating || !cg.Instances[0].Held {
		t.Fatalf("core group %+v, %v: want one instance held Creating", cg, err)
	}

	hooks, err := e.asg.DescribeLifecycleHooks(ctx, &autoscaling.DescribeLifecycleHooksInput{AutoScalingGroupName: aws.String("hooks")})
	if err != nil || len(hooks.LifecycleHooks) != 1 {
		t.Fatalf("DescribeLifecycleHooks: %+v, %v", hooks, err)
	}
	if hk := hooks.LifecycleHooks[0]; aws.ToString(hk.LifecycleHookName) != "launch" || aws.ToString(hk.DefaultResult) != "ABANDON" ||
		aws.ToInt32(hk.HeartbeatTimeout) != 60 || aws.ToString(hk.NotificationMetadata) != "meta" || aws.ToInt32(hk.GlobalTimeout) != 6000 {
		t.Fatalf("hook %+v", hk)
	}

	// CONTINUE: the instance boots (no delays) and is in service.
	if err := continueLaunch(e, "hooks", first); err != nil {
		t.Fatalf("CompleteLifecycleAction: %v", err)
	}
	e.waitGroup(t, "hooks", "had its instance in service", inService(1))
	err = continueLaunch(e, "hooks", first)
	awstest.APIError(t, err, "ValidationError")

	// A timed-out ABANDON terminates the new instance; a replacement waits.
	if _, err := e.asg.SetDesiredCapacity(ctx, &autoscaling.SetDesiredCapacityInput{AutoScalingGroupName: aws.String("hooks"), DesiredCapacity: aws.Int32(2)}); err != nil {
		t.Fatal(err)
	}
	second := onlyInstance(t, e.describe(t, "hooks"), "Pending:Wait")
	if _, err := e.asg.RecordLifecycleActionHeartbeat(ctx, &autoscaling.RecordLifecycleActionHeartbeatInput{
		AutoScalingGroupName: aws.String("hooks"), LifecycleHookName: aws.String("launch"), InstanceId: aws.String(second),
	}); err != nil {
		t.Fatalf("RecordLifecycleActionHeartbeat: %v", err)
	}
	clk.Step(61 * time.Second)
	g := e.describe(t, "hooks")
	third := onlyInstance(t, g, "Pending:Wait")
	if st := lifecycleStates(g)[second]; third == second || st != "" && st != "Terminating" || aws.ToInt32(g.DesiredCapacity) != 2 {
		t.Fatalf("after the timeout: %v (second %s), desired %d: want %s terminated and a replacement waiting", lifecycleStates(g), second, aws.ToInt32(g.DesiredCapacity), second)
	}
	if err := continueLaunch(e, "hooks", third); err != nil {
		t.Fatalf("CompleteLifecycleAction: %v", err)
	}
	e.waitGroup(t, "hooks", "had 2 instances in service", inService(2))

	// A terminate hook: the instance waits in Terminating:Wait, running,
	// until the heartbeat times out; no replacement with a decrement.
	if _, err := e.asg.PutLifecycleHook(ctx, &autoscaling.PutLifecycleHookInput{
		AutoScalingGroupName: aws.String("hooks"), LifecycleHookName: aws.String("drain"),
		LifecycleTransition: aws.String("autoscaling:EC2_INSTANCE_TERMINATING"), HeartbeatTimeout: aws.Int32(30), DefaultResult: aws.String("CONTINUE"),
	}); err != nil {
		t.Fatalf("PutLifecycleHook: %v", err)
	}
	if _, err := e.asg.TerminateInstanceInAutoScalingGroup(ctx, &autoscaling.TerminateInstanceInAutoScalingGroupInput{
		InstanceId: aws.String(first), ShouldDecrementDesiredCapacity: aws.Bool(true),
	}); err != nil {
		t.Fatalf("TerminateInstanceInAutoScalingGroup: %v", err)
	}
	g = e.describe(t, "hooks")
	if s := lifecycleStates(g); len(s) != 2 || s[first] != "Terminating:Wait" || s[third] != "InService" || aws.ToInt32(g.DesiredCapacity) != 1 {
		t.Fatalf("after terminating %s: %v, desired %d", first, s, aws.ToInt32(g.DesiredCapacity))
	}
	if cg, _ := cs.GetGroup("hooks"); cg.Instances[0].State != core.StateRunning {
		t.Fatalf("instance in Terminating:Wait is %s in the core, want still Running", cg.Instances[0].State)
	}
	clk.Step(31 * time.Second)
	e.waitGroup(t, "hooks", "was down to 1 instance", inService(1))

	// AWS's errors.
	_, err = e.asg.PutLifecycleHook(ctx, &autoscaling.PutLifecycleHookInput{
		AutoScalingGroupName: aws.String("hooks"), LifecycleHookName: aws.String("short"),
		LifecycleTransition: aws.String("autoscaling:EC2_INSTANCE_LAUNCHING"), HeartbeatTimeout: aws.Int32(10),
	})
	awstest.APIError(t, err, "ValidationError")
	_, err = e.asg.PutLifecycleHook(ctx, &autoscaling.PutLifecycleHookInput{
		AutoScalingGroupName: aws.String("nope"), LifecycleHookName: aws.String("x"), LifecycleTransition: aws.String("autoscaling:EC2_INSTANCE_LAUNCHING"),
	})
	awstest.APIError(t, err, "ValidationError")
	_, err = e.asg.DeleteLifecycleHook(ctx, &autoscaling.DeleteLifecycleHookInput{AutoScalingGroupName: aws.String("hooks"), LifecycleHookName: aws.String("nope")})
	awstest.APIError(t, err, "ValidationError")
	_, err = e.asg.CompleteLifecycleAction(ctx, &autoscaling.CompleteLifecycleActionInput{
		AutoScalingGroupName: aws.String("hooks"), LifecycleHookName: aws.String("launch"),
		LifecycleActionToken: aws.String("00000000-0000-4000-8000-000000000000"), LifecycleActionResult: aws.String("CONTINUE"),
	})
	awstest.APIError(t, err, "ValidationError")

	// Without hooks instances launch straight away.
	for _, n := range []string{"launch", "drain"} {
		if _, err := e.asg.DeleteLifecycleHook(ctx, &autoscaling.DeleteLifecycleHookInput{AutoScalingGroupName: aws.String("hooks"), LifecycleHookName: aws.String(n)}); err != nil {
			t.Fatalf("DeleteLifecycleHook %s: %v", n, err)
		}
	}
	if _, err := e.asg.SetDesiredCapacity(ctx, &autoscaling.SetDesiredCapacityInput{AutoScalingGroupName: aws.String("hooks"), DesiredCapacity: aws.Int32(2)}); err != nil {
		t.Fatal(err)
	}
	e.waitGroup(t, "hooks", "had 2 instances in service", inService(2))
}
