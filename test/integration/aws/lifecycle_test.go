package aws

import (
	"fmt"
	"testing"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// asgClient is an independent Auto Scaling client of the simulated AWS
// (the real SDK with the default key), acting as the hook's consumer.
func (f *fixture) asgClient() *autoscaling.Client {
	return autoscaling.NewFromConfig(awsface.DefaultSDKConfig(f.Cloud.FaceURL(awsface.AWSFaceName)))
}

// TestLifecycleHookHoldsLaunch: a lifecycle hook on launch holds an
// instance in Pending:Wait until completed. Seed 004's pool with a launch
// hook: the ASG is created with it, its instances wait in Pending:Wait
// (not booted: no Node joins, the MachinePool is not Running) while the
// pool reports LifecycleHookReady; once the test completes each action
// with CompleteLifecycleAction (CONTINUE) they boot, join and the pool
// converges.
func TestLifecycleHookHoldsLaunch(t *testing.T) {
	f, _ := start(t, 0)
	f.ApplySeed(itest.SetField("AWSMachinePool", []any{map[string]any{
		"name": "bootstrap-check", "lifecycleTransition": "autoscaling:EC2_INSTANCE_LAUNCHING",
		"heartbeatTimeout": "1h", "defaultResult": "ABANDON",
	}}, "spec", "lifecycleHooks"))
	asg := f.asgClient()

	describe := func() (asgtypes.AutoScalingGroup, error) {
		out, err := asg.DescribeAutoScalingGroups(f.Ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{f.asg()}})
		if err != nil {
			return asgtypes.AutoScalingGroup{}, err
		}
		if len(out.AutoScalingGroups) != 1 {
			return asgtypes.AutoScalingGroup{}, fmt.Errorf("the auto scaling group %s does not exist yet", f.asg())
		}
		return out.AutoScalingGroups[0], nil
	}
	var waiting []string
	testenv.Eventually(t, converge, func() error {
		g, err := describe()
		if err != nil {
			return err
		}
		waiting = nil
		for _, in := range g.Instances {
			if in.LifecycleState != asgtypes.LifecycleStatePendingWait {
				return fmt.Errorf("instance %s is %s, want Pending:Wait", awssdk.ToString(in.InstanceId), in.LifecycleState)
			}
			waiting = append(waiting, awssdk.ToString(in.InstanceId))
		}
		if len(waiting) != 2 {
			return fmt.Errorf("%d instances waiting, want 2", len(waiting))
		}
		return f.PoolConditionsTrue(infrav1.LifecycleHookReadyCondition)
	})

	// The manager has applied the hooks and seen the instances: held
	// instances never boot, so nothing can have joined.
	if g := f.Group(); g == nil || len(g.Instances) != 2 || g.Instances[0].State != core.StateCreating || !g.Instances[0].Held {
		t.Fatalf("the core's group %+v: want 2 instances held Creating", g)
	}
	if n := f.PoolNodes(); len(n) != 0 {
		t.Fatalf("%d Nodes joined while their instances wait in Pending:Wait", len(n))
	}
	mp := &clusterv1.MachinePool{}
	if err := env.Client.Get(f.Ctx, f.Key(poolName), mp); err != nil {
		t.Fatal(err)
	}
	if mp.Status.Phase == string(clusterv1.MachinePoolPhaseRunning) || ptr.Deref(mp.Status.ReadyReplicas, 0) != 0 {
		t.Fatalf("MachinePool %s with %v ready replicas while its instances wait", mp.Status.Phase, mp.Status.ReadyReplicas)
	}

	t.Log("completing the lifecycle actions")
	for _, id := range waiting {
		if _, err := asg.CompleteLifecycleAction(f.Ctx, &autoscaling.CompleteLifecycleActionInput{
			AutoScalingGroupName: awssdk.String(f.asg()), LifecycleHookName: awssdk.String("bootstrap-check"),
			InstanceId: awssdk.String(id), LifecycleActionResult: awssdk.String("CONTINUE"),
		}); err != nil {
			t.Fatalf("CompleteLifecycleAction %s: %v", id, err)
		}
	}
	f.waitConverged(2, seedVersion)
	for _, id := range waiting {
		found := false
		for _, have := range f.InstanceIDs() {
			found = found || have == id
		}
		if !found {
			t.Errorf("instance %s was replaced, want it to join once its action completed", id)
		}
	}
	if err := f.PoolConditionsTrue(infrav1.LifecycleHookReadyCondition); err != nil {
		t.Fatalf("after converging: %v", err)
	}
	hooks, err := asg.DescribeLifecycleHooks(f.Ctx, &autoscaling.DescribeLifecycleHooksInput{AutoScalingGroupName: awssdk.String(f.asg())})
	if err != nil || len(hooks.LifecycleHooks) != 1 || awssdk.ToInt32(hooks.LifecycleHooks[0].HeartbeatTimeout) != 3600 ||
		awssdk.ToString(hooks.LifecycleHooks[0].DefaultResult) != "ABANDON" {
		t.Fatalf("DescribeLifecycleHooks: %+v, %v", hooks, err)
	}
}
