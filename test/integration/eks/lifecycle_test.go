package eks

import (
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/sim/face/eksface"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// TestEKSNodegroupLifecycle: the examples become a Running pool of EKS
// nodes; a pool at rest costs one DescribeNodegroup and one
// DescribeInstances per reconcile and no write; scaling 2→3 goes through
// UpdateNodegroupConfig; a version upgrade is EKS's own rolling update,
// never more than maxUnavailable (1) node down, watched on every observed
// state, with the manager restarted mid-update; 3→5→3 follows; deleting
// the pool leaves no node group, instance or Node.
func TestEKSNodegroupLifecycle(t *testing.T) {
	f, m := startSeeded(t, "1.32")
	testenv.Eventually(t, converge, func() error {
		ng, err := f.describe()
		if err != nil {
			return err
		}
		if ng.Nodegroup.Status != ekstypes.NodegroupStatusActive || aws.ToString(ng.Nodegroup.Version) != "1.31" {
			return fmt.Errorf("node group %s at version %s", ng.Nodegroup.Status, aws.ToString(ng.Nodegroup.Version))
		}
		return nil
	})

	// At rest: reads only, one DescribeNodegroup per Get.
	const controller = "awsmanagedmachinepool"
	pool := &infrav1.AWSManagedMachinePool{}
	if err := env.Client.Get(f.Ctx, f.Key(poolName), pool); err != nil {
		t.Fatal(err)
	}
	writes := func() int64 {
		return f.Ops(eksface.EKSFaceName, eksface.OpEKSCreateNodegroup) + f.Ops(eksface.EKSFaceName, eksface.OpEKSUpdateNodegroupConfig) +
			f.Ops(eksface.EKSFaceName, eksface.OpEKSUpdateNodegroupVersion) + f.Ops(eksface.EKSFaceName, eksface.OpEKSTagResource)
	}
	// The counts are read between passes, and twice: a pass under way (a
	// requeue's) may have sent one of its two reads and not yet the other,
	// and the cloud counts a request once it has answered it.
	ops := func() [3]int64 {
		return [3]int64{writes(), f.Ops(eksface.EKSFaceName, eksface.OpEKSDescribeNodegroup), f.Ops(awsface.AWSFaceName, awsface.OpAWSDescribeInstances)}
	}
	counts := func() (w, d, i int64) {
		t.Helper()
		var c [3]int64
		testenv.Eventually(t, converge, func() error {
			first := ops()
			before := testenv.ReadControllerMetrics(t)
			c = ops()
			after := testenv.ReadControllerMetrics(t)
			if first != c || before.Active(controller) != 0 || after.Active(controller) != 0 || before.Reconciles(controller) != after.Reconciles(controller) {
				return fmt.Errorf("a reconcile of the pool was under way")
			}
			return nil
		})
		return c[0], c[1], c[2]
	}
	w0, d0, i0 := counts()
	env.PokeUntilReconciled(t, pool, controller, 5)
	w1, d1, i1 := counts()
	if w1 != w0 || d1-d0 < 5 || d1-d0 != i1-i0 {
		t.Fatalf("a pool at rest: %d writes, %d DescribeNodegroup, %d DescribeInstances over 5+ reconciles; want 0 writes and one of each per reconcile",
			w1-w0, d1-d0, i1-i0)
	}

	// Scale 2 → 3.
	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) { n := int32(3); mp.Spec.Replicas = &n })
	f.WaitConverged(3, "v1.31.0", converge)
	if f.Ops(eksface.EKSFaceName, eksface.OpEKSUpdateNodegroupConfig) == 0 {
		t.Fatal("the scale-up was not an UpdateNodegroupConfig")
	}

	// Upgrade 1.31 → 1.32: EKS's own rolling update, within maxUnavailable.
	before := f.NodeNames()
	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) { mp.Spec.Template.Spec.Version = "v1.32.0" })
	var violation error
	sawUpdating := false
	testenv.Eventually(t, converge, func() error {
		nodes := f.PoolNodes()
		cordoned, serving := 0, 0
		for i := range nodes {
			switch {
			case nodes[i].Spec.Unschedulable:
				cordoned++
			case testenv.NodeReady(&nodes[i]):
				serving++
			}
		}
		if cordoned > 1 || serving < 3-1 {
			violation = fmt.Errorf("%d Nodes cordoned and %d serving of %d: maxUnavailable 1 broken", cordoned, serving, len(nodes))
			return nil
		}
		if out, err := f.describe(); err == nil && out.Nodegroup.Status == ekstypes.NodegroupStatusUpdating && !sawUpdating {
			// The manager restarts mid-update: the new one follows
			// EKS's update and starts no other.
			sawUpdating = true
			m.Stop()
			m = f.StartManager()
		}
		if err := f.Converged(3, "v1.32.0"); err != nil {
			return err
		}
		for _, n := range f.PoolNodes() {
			if before[n.Name] {
				return fmt.Errorf("Node %s has not been replaced", n.Name)
			}
		}
		return nil
	})
	if violation != nil {
		t.Fatal(violation)
	}
	if !sawUpdating || f.Ops(eksface.EKSFaceName, eksface.OpEKSUpdateNodegroupVersion) != 1 {
		t.Fatalf("the upgrade: updating seen %v, %d UpdateNodegroupVersion; want one EKS update", sawUpdating, f.Ops(eksface.EKSFaceName, eksface.OpEKSUpdateNodegroupVersion))
	}
	if err := env.Client.Get(f.Ctx, f.Key(poolName), pool); err != nil {
		t.Fatal(err)
	}
	if err := itest.ConditionsTrue(pool.Status.Conditions, infrav1.EKSNodegroupReadyCondition); err != nil {
		t.Fatal(err)
	}
	if m.ScaleGroup == nil {
		t.Fatal("no EKS ScaleGroup")
	}

	// Scale 3 → 5 → 3: EKS picks the nodes to remove and drains them.
	for _, n := range []int32{5, 3} {
		f.UpdateMachinePool(func(mp *clusterv1.MachinePool) { mp.Spec.Replicas = &n })
		testenv.Eventually(t, converge, func() error {
			if err := f.Converged(int(n), "v1.32.0"); err != nil {
				return err
			}
			out, err := f.describe()
			if err != nil {
				return err
			}
			if got := aws.ToInt32(out.Nodegroup.ScalingConfig.DesiredSize); got != n || out.Nodegroup.Status != ekstypes.NodegroupStatusActive {
				return fmt.Errorf("node group %s with desired size %d, want %d", out.Nodegroup.Status, got, n)
			}
			return nil
		})
	}

	// Deletion: no node group, instance or Node is left.
	f.DeletePoolAndWaitGone(converge)
	testenv.Eventually(t, converge, func() error {
		_, err := f.describe()
		var nf *ekstypes.ResourceNotFoundException
		if !errors.As(err, &nf) {
			return fmt.Errorf("the node group is still there (%v)", err)
		}
		for _, k := range f.Cloud.Cloud().Groups() {
			if k.Face == awsface.AWSFaceName {
				return fmt.Errorf("group %s left", k)
			}
		}
		return nil
	})
}
