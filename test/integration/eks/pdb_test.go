package eks

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/sim/face/eksface"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// TestEKSUpdateBlockedByPDB: a PodDisruptionBudget that blocks a drain
// fails EKS's update (force false) with PodEvictionFailure once the
// eviction timeout has passed; the pool says so in EKSNodegroupReady, and
// mpool waits instead of asking for the same update again in a loop. The
// annotation mpool.dev/eks-force-update: "true" asks for it again at once,
// forced, and it goes through the PodDisruptionBudget.
func TestEKSUpdateBlockedByPDB(t *testing.T) {
	cloud := startCloudWith(t, "1.32", &eksface.EKSFace{PodEvictionTimeout: time.Second})
	f := newFixture(t, cloud)
	f.StartManager()
	f.ApplySeed()
	f.WaitConverged(2, "v1.31.0", converge)

	// A guarded pod on every node: no drain can finish.
	f.GuardNodes(converge)

	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) { mp.Spec.Template.Spec.Version = "v1.32.0" })
	// EKSNodegroupReady says why the update failed and how to force it.
	f.WaitPoolCondition(converge, infrav1.EKSNodegroupReadyCondition, metav1.ConditionFalse, "PodEvictionFailure", infrav1.AnnotationEKSForceUpdate)
	// The failed update is not asked for again at once.
	f.PokeUntilReconciled(t, 5)
	if n := f.Ops(eksface.EKSFaceName, eksface.OpEKSUpdateNodegroupVersion); n != 1 {
		t.Fatalf("%d UpdateNodegroupVersion after the failure; want the one that failed", n)
	}
	ng, err := f.describe()
	if err != nil || *ng.Nodegroup.Version != "1.31" {
		t.Fatalf("after the failed update the node group is at %v (%v); want 1.31", ng, err)
	}

	// Forced: the same update again at once, through the budget.
	itest.UpdatePool(f.Fixture, func(p *infrav1.AWSManagedMachinePool) {
		p.Annotations = map[string]string{infrav1.AnnotationEKSForceUpdate: "true"}
	})
	f.WaitConverged(2, "v1.32.0", converge)
	if n := f.Ops(eksface.EKSFaceName, eksface.OpEKSUpdateNodegroupVersion); n != 2 {
		t.Fatalf("%d UpdateNodegroupVersion in all; want the failed one and the forced one", n)
	}
	if ng, err := f.describe(); err != nil || *ng.Nodegroup.Version != "1.32" {
		t.Fatalf("after the forced update the node group is at %v (%v); want 1.32", ng, err)
	}
}
