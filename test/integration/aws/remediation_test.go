package aws

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
)

// TestMachineHealthCheckRemediatesAStoppedKubelet: an ASG instance whose
// kubelet stops (its EC2 status checks still pass, so the ASG itself does
// nothing) is marked by a MachineHealthCheck, drained and terminated by the
// engine, and the ASG launches its replacement
// (itest.Fixture.CheckStoppedKubeletRemediated).
func TestMachineHealthCheckRemediatesAStoppedKubelet(t *testing.T) {
	f, _ := start(t, 0)
	f.ApplySeed()
	f.waitConverged(2, seedVersion)
	f.CheckStoppedKubeletRemediated(2, seedVersion, converge)
}

// TestCloudHealthCheckReplacementIsNotRepeatedByMpool: an instance that
// fails its EC2 status checks (the ASG's health check type EC2, grace
// period 0 as mpool leaves it) is replaced by the Auto Scaling group
// itself; its Node stays Ready meanwhile, so the MachineHealthCheck marks
// nothing, and mpool terminates nothing and launches nothing more: exactly
// one new instance ever appears, the desired capacity stays, and the pool
// is Running again with its two Nodes Ready.
func TestCloudHealthCheckReplacementIsNotRepeatedByMpool(t *testing.T) {
	f, _ := start(t, 0)
	f.ApplySeed()
	f.waitConverged(2, seedVersion)
	f.MarkInfrastructureReady(converge)
	f.CreateMachineHealthCheck(intstr.FromString("100%"))
	f.WaitMachineHealthCheck(2, 2, converge)

	before := f.InstanceIDs()
	victim := before[0]
	terminates := f.ops(awsface.OpAWSTerminateInstanceInASG)
	resizes := f.ops(awsface.OpAWSSetDesiredCapacity) + f.ops(awsface.OpAWSUpdateAutoScalingGroup)
	f.SetInstanceFault(victim, core.FaultCloudCheckFailing)

	launched := map[string]bool{}
	observe := func() error {
		// The simulated ASG runs its health checks when the group is read,
		// as on AWS they run in the background: read it.
		if _, err := f.asgClient().DescribeAutoScalingGroups(f.Ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{f.asg()}}); err != nil {
			return err
		}
		g := f.Group()
		if g == nil {
			return fmt.Errorf("the ASG is gone")
		}
		for _, in := range g.Instances {
			if !slices.Contains(before, in.ID) {
				launched[in.ID] = true
			}
		}
		if len(launched) > 1 {
			return fmt.Errorf("%d instances launched for one failed health check: %v", len(launched), slices.Sorted(maps.Keys(launched)))
		}
		if d := awsface.AWSGroupDesired(g); d != 2 {
			return fmt.Errorf("desired capacity %d, want 2", d)
		}
		return nil
	}
	testenv.Eventually(t, converge, func() error {
		if err := observe(); err != nil {
			if strings.Contains(err.Error(), "launched") {
				t.Fatal(err)
			}
			return err
		}
		if ids := f.InstanceIDs(); slices.Contains(ids, victim) || len(ids) != 2 {
			return fmt.Errorf("instances %v: want %s replaced", ids, victim)
		}
		return f.Converged(2, seedVersion)
	})
	// Settled: nothing more happens for a while (bounded polls).
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err := observe(); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.ops(awsface.OpAWSTerminateInstanceInASG) - terminates; n != 0 {
		t.Errorf("mpool terminated %d instances; the ASG replaces the unhealthy one itself", n)
	}
	if n := f.ops(awsface.OpAWSSetDesiredCapacity) + f.ops(awsface.OpAWSUpdateAutoScalingGroup) - resizes; n != 0 {
		t.Errorf("mpool resized the ASG %d times while it replaced an instance", n)
	}
	if len(launched) != 1 {
		t.Errorf("instances launched: %v, want exactly the ASG's one replacement", launched)
	}
	f.WaitMachineHealthCheck(2, 2, converge)
}
