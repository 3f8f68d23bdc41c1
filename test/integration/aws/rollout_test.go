package aws

import (
	"fmt"
	"slices"
	"testing"

	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/testenv"
)

// TestNoAMIBlocksTheRolloutAndDeletesNothing reproduces issue 25's report:
// seed 004's pool scaled to 4, then its version bumped to v1.16.9, for
// which the simulated AWS publishes no AMI (as CAPA publishes none). AWS's
// defaults roll with maxSurge 0 and maxUnavailable 1, so an old instance
// would go first; it must not go for a launch template the cloud refuses.
// The pool keeps its four instances and Nodes, is not Failed, and says
// "rollout blocked" with the cause; reverting the version unblocks it.
func TestNoAMIBlocksTheRolloutAndDeletesNothing(t *testing.T) {
	f, _ := start(t, 0)
	f.ApplySeed()
	f.waitConverged(2, seedVersion)
	f.Scale(4)
	f.waitConverged(4, seedVersion)
	before := f.InstanceIDs()

	f.SetVersion("v1.16.9")
	f.WaitCondition(converge, infrav1.RolloutProgressingCondition, infrav1.RolloutBlockedReason, "Rollout blocked", "1.16.9", "4 instances on the previous model keep serving")
	// A few more reconciles: still nothing deleted.
	f.PokeUntilReconciled(t, 3)
	if after := f.InstanceIDs(); !slices.Equal(after, before) {
		t.Fatalf("instances %v became %v for a model the cloud cannot create", before, after)
	}
	if n := len(f.NodeNames()); n != 4 {
		t.Fatalf("%d Nodes serve, want the 4 old ones", n)
	}
	testenv.Eventually(t, converge, func() error {
		mp := &clusterv1.MachinePool{}
		if err := env.Client.Get(f.Ctx, f.PoolKey(), mp); err != nil {
			return err
		}
		if mp.Status.Phase != string(clusterv1.MachinePoolPhaseRunning) || ptr.Deref(mp.Status.ReadyReplicas, 0) != 4 {
			return fmt.Errorf("MachinePool phase %s with %v ready replicas, want Running with 4: a blocked rollout whose instances serve is not Failed", mp.Status.Phase, mp.Status.ReadyReplicas)
		}
		return nil
	})
	pool := &infrav1.AWSMachinePool{}
	if err := env.Client.Get(f.Ctx, f.PoolKey(), pool); err != nil {
		t.Fatal(err)
	}
	if pool.Status.FailureReason != nil {
		t.Errorf("AWSMachinePool status.failureReason %q on a blocked rollout", *pool.Status.FailureReason)
	}

	t.Log("the version reverted: the pool converges on its old instances")
	f.SetVersion(seedVersion)
	f.waitConverged(4, seedVersion)
	if after := f.InstanceIDs(); !slices.Equal(after, before) {
		t.Fatalf("instances %v became %v after the revert", before, after)
	}
	f.deletePoolAndWaitGone()
}
