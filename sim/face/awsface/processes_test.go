package awsface

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface/awstest"
)

func suspendedNames(g astypes.AutoScalingGroup) []string {
	var out []string
	for _, p := range g.SuspendedProcesses {
		out = append(out, aws.ToString(p.ProcessName))
	}
	return out
}

// TestAWSSuspendResumeProcesses drives Suspend/ResumeProcesses through the
// real SDK: suspended processes are reported with AWS's reason; Launch
// suspended holds a capacity increase (no instance, no activity) until
// resumed; Terminate suspended holds a scale-in; no names is every
// process; an unknown process is ValidationError.
func TestAWSSuspendResumeProcesses(t *testing.T) {
	e := newAWSEnv(t, core.Options{})
	ctx := context.Background()
	lt := e.template(t, "procs", "v1.31.2")
	e.createGroup(t, "procs", lt, "$Latest", 0, 6, 2)
	e.waitGroup(t, "procs", "had 2 instances in service", inService(2))

	if _, err := e.asg.SuspendProcesses(ctx, &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String("procs"),
		ScalingProcesses: []string{"Launch", "AZRebalance"}}); err != nil {
		t.Fatalf("SuspendProcesses: %v", err)
	}
	g := e.describe(t, "procs")
	if got := strings.Join(suspendedNames(g), ","); got != "AZRebalance,Launch" {
		t.Fatalf("suspended processes %q, want AZRebalance,Launch", got)
	}
	for _, p := range g.SuspendedProcesses {
		if r := aws.ToString(p.SuspensionReason); !strings.HasPrefix(r, "User suspended at ") {
			t.Fatalf("suspension reason %q", r)
		}
	}

	// Launch suspended: the desired capacity changes, nothing launches.
	acts := func() int {
		out, err := e.asg.DescribeScalingActivities(ctx, &autoscaling.DescribeScalingActivitiesInput{AutoScalingGroupName: aws.String("procs")})
		if err != nil {
			t.Fatal(err)
		}
		return len(out.Activities)
	}
	before := acts()
	if _, err := e.asg.SetDesiredCapacity(ctx, &autoscaling.SetDesiredCapacityInput{AutoScalingGroupName: aws.String("procs"), DesiredCapacity: aws.Int32(4)}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if g := e.describe(t, "procs"); len(g.Instances) != 2 || aws.ToInt32(g.DesiredCapacity) != 4 {
			t.Fatalf("Launch suspended: %d instances, desired %d: want 2 and 4", len(g.Instances), aws.ToInt32(g.DesiredCapacity))
		}
	}
	if n := acts(); n != before {
		t.Fatalf("Launch suspended: %d activities, want %d (none started)", n, before)
	}
	if _, err := e.asg.ResumeProcesses(ctx, &autoscaling.ResumeProcessesInput{AutoScalingGroupName: aws.String("procs"), ScalingProcesses: []string{"Launch"}}); err != nil {
		t.Fatalf("ResumeProcesses: %v", err)
	}
	g = e.waitGroup(t, "procs", "launched what Launch held back", inService(4))
	if got := strings.Join(suspendedNames(g), ","); got != "AZRebalance" {
		t.Fatalf("suspended processes %q after resuming Launch", got)
	}

	// Terminate suspended: a scale-in terminates nothing until resumed.
	if _, err := e.asg.SuspendProcesses(ctx, &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String("procs"), ScalingProcesses: []string{"Terminate"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.asg.SetDesiredCapacity(ctx, &autoscaling.SetDesiredCapacityInput{AutoScalingGroupName: aws.String("procs"), DesiredCapacity: aws.Int32(1)}); err != nil {
		t.Fatal(err)
	}
	if g := e.describe(t, "procs"); !inService(4)(g) || aws.ToInt32(g.DesiredCapacity) != 1 {
		t.Fatalf("Terminate suspended: %v, desired %d: want 4 in service, desired 1", lifecycleStates(g), aws.ToInt32(g.DesiredCapacity))
	}
	// No names: every process.
	if _, err := e.asg.ResumeProcesses(ctx, &autoscaling.ResumeProcessesInput{AutoScalingGroupName: aws.String("procs")}); err != nil {
		t.Fatal(err)
	}
	g = e.waitGroup(t, "procs", "scaled in once Terminate resumed", inService(1))
	if len(g.SuspendedProcesses) != 0 {
		t.Fatalf("suspended processes %v after resuming all", suspendedNames(g))
	}
	if _, err := e.asg.SuspendProcesses(ctx, &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String("procs")}); err != nil {
		t.Fatal(err)
	}
	if got := suspendedNames(e.describe(t, "procs")); len(got) != 9 {
		t.Fatalf("suspend all: %v, want the 9 processes", got)
	}

	// Errors.
	_, err := e.asg.SuspendProcesses(ctx, &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String("procs"), ScalingProcesses: []string{"Reboot"}})
	awstest.APIError(t, err, "ValidationError")
	_, err = e.asg.ResumeProcesses(ctx, &autoscaling.ResumeProcessesInput{AutoScalingGroupName: aws.String("nope")})
	awstest.APIError(t, err, "ValidationError")
}

// TestAWSReplaceUnhealthy: an instance that failed to boot is replaced
// when the group is next read, unless ReplaceUnhealthy is suspended.
func TestAWSReplaceUnhealthy(t *testing.T) {
	e := newAWSEnv(t, core.Options{})
	ctx := context.Background()
	lt := e.template(t, "unhealthy", "v1.31.2")
	e.createGroup(t, "unhealthy", lt, "$Latest", 0, 3, 0)
	if _, err := e.asg.SuspendProcesses(ctx, &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String("unhealthy"), ScalingProcesses: []string{"ReplaceUnhealthy"}}); err != nil {
		t.Fatal(err)
	}
	cs := e.srv.Cloud().Scope(AWSFaceName, AWSScope(AWSDefaultAccountID, AWSDefaultRegion))
	fail := func(rate float64) {
		if _, err := cs.SetSimulation("unhealthy", core.SimulationPatch{FailureRate: &rate}); err != nil {
			t.Fatal(err)
		}
	}
	fail(1)
	if _, err := e.asg.SetDesiredCapacity(ctx, &autoscaling.SetDesiredCapacityInput{AutoScalingGroupName: aws.String("unhealthy"), DesiredCapacity: aws.Int32(1)}); err != nil {
		t.Fatal(err)
	}
	g := e.waitGroup(t, "unhealthy", "had an unhealthy instance", func(g astypes.AutoScalingGroup) bool {
		return len(g.Instances) == 1 && aws.ToString(g.Instances[0].HealthStatus) == "Unhealthy"
	})
	failed := aws.ToString(g.Instances[0].InstanceId)
	for range 3 {
		if g := e.describe(t, "unhealthy"); len(g.Instances) != 1 || aws.ToString(g.Instances[0].InstanceId) != failed {
			t.Fatalf("ReplaceUnhealthy suspended: %v, want %s kept", lifecycleStates(g), failed)
		}
	}
	fail(0)
	if _, err := e.asg.ResumeProcesses(ctx, &autoscaling.ResumeProcessesInput{AutoScalingGroupName: aws.String("unhealthy"), ScalingProcesses: []string{"ReplaceUnhealthy"}}); err != nil {
		t.Fatal(err)
	}
	g = e.waitGroup(t, "unhealthy", "replaced its unhealthy instance", inService(1))
	if aws.ToString(g.Instances[0].InstanceId) == failed || aws.ToString(g.Instances[0].HealthStatus) != "Healthy" {
		t.Fatalf("after resuming ReplaceUnhealthy: %+v", g.Instances[0])
	}
}
