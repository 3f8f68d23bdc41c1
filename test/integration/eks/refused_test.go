package eks

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// TestEKSRefusedUpgradeRecovers: an upgrade past the EKS cluster's version
// is refused by EKS and said in EKSNodegroupReady; reverting it while
// scaling up converges, the new node counted up to date; a new label
// reaches the nodes in place.
func TestEKSRefusedUpgradeRecovers(t *testing.T) {
	f, _ := startSeeded(t, "1.31")

	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) { mp.Spec.Template.Spec.Version = "v1.32.0" })
	f.WaitPoolCondition(converge, infrav1.EKSNodegroupReadyCondition, metav1.ConditionFalse, "InvalidParameterException")

	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) {
		mp.Spec.Template.Spec.Version, mp.Spec.Replicas = "v1.31.0", ptr.To[int32](3)
	})
	f.WaitConverged(3, "v1.31.0", converge)

	// A label is applied in place: EKS relabels the nodes it has.
	before := f.NodeNames()
	itest.UpdatePool(f.Fixture, func(p *infrav1.AWSManagedMachinePool) { p.Spec.Labels["team"] = "a" })
	testenv.Eventually(t, converge, func() error {
		nodes := f.PoolNodes()
		for _, n := range nodes {
			if !before[n.Name] || n.Labels["team"] != "a" {
				return fmt.Errorf("Node %s (there before: %v) labels %v", n.Name, before[n.Name], n.Labels)
			}
		}
		if len(nodes) != 3 {
			return fmt.Errorf("%d Nodes", len(nodes))
		}
		return f.Converged(3, "v1.31.0")
	})
}
