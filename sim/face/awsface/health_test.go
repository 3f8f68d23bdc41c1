package awsface

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface/awstest"
)

func healthOf(g astypes.AutoScalingGroup, id string) string {
	for _, in := range g.Instances {
		if aws.ToString(in.InstanceId) == id {
			return aws.ToString(in.HealthStatus)
		}
	}
	return "gone"
}

// TestAWSHealthChecks: an instance failing its EC2 status check is
// Unhealthy once the group's grace period has passed since its launch and
// is replaced (terminated, then a new one launched, desired capacity
// unchanged, with activities); suspended HealthCheck hides the failure,
// suspended ReplaceUnhealthy keeps the instance; SetInstanceHealth marks
// one Unhealthy by hand.
func TestAWSHealthChecks(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	e := newAWSEnv(t, core.Options{Clock: clk, Faces: []core.Face{&AWSFace{ClockSkew: 24 * time.Hour}}})
	ctx := context.Background()
	lt := e.template(t, "health", "v1.31.2")
	e.createGroup(t, "health", lt, "$Latest", 0, 4, 2)
	if g := e.describe(t, "health"); aws.ToString(g.HealthCheckType) != "EC2" || aws.ToInt32(g.HealthCheckGracePeriod) != 0 {
		t.Fatalf("defaults: HealthCheckType %q, grace %d; want EC2 and 0 (the API's default)", aws.ToString(g.HealthCheckType), aws.ToInt32(g.HealthCheckGracePeriod))
	}
	if _, err := e.asg.UpdateAutoScalingGroup(ctx, &autoscaling.UpdateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String("health"), HealthCheckType: aws.String("ELB"), HealthCheckGracePeriod: aws.Int32(300),
	}); err != nil {
		t.Fatal(err)
	}
	g := e.waitGroup(t, "health", "booted", inService(2))
	if aws.ToString(g.HealthCheckType) != "ELB" || aws.ToInt32(g.HealthCheckGracePeriod) != 300 {
		t.Fatalf("after the update: HealthCheckType %q, grace %d", aws.ToString(g.HealthCheckType), aws.ToInt32(g.HealthCheckGracePeriod))
	}
	sick, other := aws.ToString(g.Instances[0].InstanceId), aws.ToString(g.Instances[1].InstanceId)
	if err := e.srv.Cloud().SetInstanceFault(sick, core.FaultCloudCheckFailing); err != nil {
		t.Fatal(err)
	}

	// Within the grace period the failing check is not acted on.
	if h := healthOf(e.describe(t, "health"), sick); h != "Healthy" {
		t.Fatalf("within the grace period: %s is %s, want Healthy", sick, h)
	}
	// Suspended HealthCheck: nothing is marked Unhealthy.
	if _, err := e.asg.SuspendProcesses(ctx, &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String("health"), ScalingProcesses: []string{"HealthCheck"}}); err != nil {
		t.Fatal(err)
	}
	clk.Step(301 * time.Second)
	if h := healthOf(e.describe(t, "health"), sick); h != "Healthy" {
		t.Fatalf("HealthCheck suspended: %s is %s, want Healthy", sick, h)
	}
	// Suspended ReplaceUnhealthy: marked Unhealthy, kept.
	if _, err := e.asg.SuspendProcesses(ctx, &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String("health"), ScalingProcesses: []string{"ReplaceUnhealthy"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.asg.ResumeProcesses(ctx, &autoscaling.ResumeProcessesInput{AutoScalingGroupName: aws.String("health"), ScalingProcesses: []string{"HealthCheck"}}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if h := healthOf(e.describe(t, "health"), sick); h != "Unhealthy" {
			t.Fatalf("ReplaceUnhealthy suspended: %s is %s, want Unhealthy and kept", sick, h)
		}
	}
	// Resumed: replaced, desired unchanged.
	if _, err := e.asg.ResumeProcesses(ctx, &autoscaling.ResumeProcessesInput{AutoScalingGroupName: aws.String("health"), ScalingProcesses: []string{"ReplaceUnhealthy"}}); err != nil {
		t.Fatal(err)
	}
	g = e.waitGroup(t, "health", "replaced the impaired instance", func(g astypes.AutoScalingGroup) bool {
		return healthOf(g, sick) == "gone" && inService(2)(g)
	})
	if aws.ToInt32(g.DesiredCapacity) != 2 || !slices.Contains(instanceIDs(g), other) {
		t.Fatalf("after the replacement: desired %d, instances %v; want 2 with %s kept", aws.ToInt32(g.DesiredCapacity), instanceIDs(g), other)
	}
	waitCauses(t, e, "health", "taken out of service in response to an EC2 instance status checks failure",
		"an instance was started in response to a difference between desired and actual capacity")

	// SetInstanceHealth: respecting the grace period, a new instance is
	// marked but kept until it ends; without, replaced at once.
	fresh := ""
	for _, id := range instanceIDs(g) {
		if id != other {
			fresh = id
		}
	}
	if _, err := e.asg.SetInstanceHealth(ctx, &autoscaling.SetInstanceHealthInput{InstanceId: aws.String(fresh), HealthStatus: aws.String("Unhealthy")}); err != nil {
		t.Fatalf("SetInstanceHealth: %v", err)
	}
	if h := healthOf(e.describe(t, "health"), fresh); h != "Unhealthy" {
		t.Fatalf("set Unhealthy within the grace period: %s is %s, want Unhealthy and kept", fresh, h)
	}
	if _, err := e.asg.SetInstanceHealth(ctx, &autoscaling.SetInstanceHealthInput{InstanceId: aws.String(other), HealthStatus: aws.String("Unhealthy"), ShouldRespectGracePeriod: aws.Bool(false)}); err != nil {
		t.Fatal(err)
	}
	e.waitGroup(t, "health", "replaced the instance set Unhealthy", func(g astypes.AutoScalingGroup) bool {
		return healthOf(g, other) == "gone" && healthOf(g, fresh) == "Unhealthy" && len(g.Instances) == 2
	})
	waitCauses(t, e, "health", "taken out of service in response to a user health-check")
	if _, err := e.asg.SetInstanceHealth(ctx, &autoscaling.SetInstanceHealthInput{InstanceId: aws.String(fresh), HealthStatus: aws.String("Healthy")}); err != nil {
		t.Fatal(err)
	}
	clk.Step(301 * time.Second)
	if h := healthOf(e.describe(t, "health"), fresh); h != "Healthy" {
		t.Fatalf("set Healthy again: %s is %s", fresh, h)
	}

	// Errors.
	_, err := e.asg.SetInstanceHealth(ctx, &autoscaling.SetInstanceHealthInput{InstanceId: aws.String("i-0123456789abcdef0"), HealthStatus: aws.String("Unhealthy")})
	awstest.APIError(t, err, "ValidationError")
	_, err = e.asg.SetInstanceHealth(ctx, &autoscaling.SetInstanceHealthInput{InstanceId: aws.String(fresh), HealthStatus: aws.String("Sick")})
	awstest.APIError(t, err, "ValidationError")
	if !strings.Contains(activityCauses(t, e, "health"), "user health-check") {
		t.Fatal("no activity for the user health-check")
	}
}
