package eks

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
)

// TestMachineHealthCheckOnEKS: an EKS managed node group has no call that
// removes a chosen node, so mpool does not remediate: a node whose kubelet
// stops is marked by the MachineHealthCheck, its Machine's OwnerRemediated
// says CannotBeRemediated and why, the pool's Remediating condition says
// so, and the instance is left to EKS (node repair) or the user.
func TestMachineHealthCheckOnEKS(t *testing.T) {
	f, _ := start(t, "1.31")
	f.ApplySeed()
	f.WaitConverged(2, "v1.31.0", converge)
	f.MarkInfrastructureReady(converge)
	f.CreateMachineHealthCheck(intstr.FromString("100%"))
	f.WaitMachineHealthCheck(2, 2, converge)

	// The node group's instances are EKS's: found by the Node's providerID.
	providerID := f.PoolNodes()[0].Spec.ProviderID
	victim := providerID[strings.LastIndex(providerID, "/")+1:]
	if err := f.Cloud.Cloud().SetInstanceFault(victim, core.FaultKubeletStopped); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, converge, func() error {
		machines := &clusterv1.MachineList{}
		if err := env.Client.List(f.Ctx, machines, client.InNamespace(f.NS)); err != nil {
			return err
		}
		found := false
		for _, m := range machines.Items {
			c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.MachineOwnerRemediatedCondition)
			if c != nil && c.Reason == clusterv1.MachineSetMachineCannotBeRemediatedReason && strings.Contains(c.Message, "nodeRepairConfig") {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("no Machine says it cannot be remediated")
		}
		c := f.PoolCondition(infrav1.RemediatingCondition)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != clusterv1.MachineSetMachineCannotBeRemediatedReason || !strings.Contains(c.Message, victim) {
			return fmt.Errorf("Remediating: %+v", c)
		}
		return nil
	})
	if !slices.ContainsFunc(f.PoolNodes(), func(n corev1.Node) bool { return n.Spec.ProviderID == providerID }) {
		t.Errorf("the Node of instance %s was removed", victim)
	}
}
