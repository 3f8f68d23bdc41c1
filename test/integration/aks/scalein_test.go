package aks

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/azureface"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// TestAKSScaleInDrains: the MachinePool's nodeDrainTimeout is the agent
// pool's upgradeSettings.drainTimeoutInMinutes. AKS cordons and drains the
// node a lower count removes, PodDisruptionBudgets honoured. With a budget
// that lets no pod go, the node is cordoned, not drained within
// drainTimeoutInMinutes,
// uncordoned and kept, and the scale-in fails with PodDrainFailure naming
// it, which the pool's ScaleGroupReady says; once the budget lets the pod
// go, mpool's retry of the same PUT (after retryBase) drains the node —
// its pod evicted, not killed with the node — and the pool converges.
func TestAKSScaleInDrains(t *testing.T) {
	f, _ := startDrainingCloud(t)
	guarded, victim, p0 := blockScaleIn(t, f)
	puts := func() int64 { return agentPoolPuts(f) }
	f.WaitPoolCondition(converge, infrav1.ScaleGroupReadyCondition, metav1.ConditionFalse, azureface.AKSCodePodDrainFailure, victim,
		"Disruption Budget", "within drainTimeoutInMinutes ("+aksMinute.String()+")", "retrying in 20s", "attempt 1")
	// Kept and schedulable again: both Nodes serve.
	nodes := f.PoolNodes()
	if len(nodes) != 2 {
		t.Fatalf("%d Nodes after the failed scale-in; want both, the victim kept", len(nodes))
	}
	for _, n := range nodes {
		if n.Spec.Unschedulable {
			t.Fatalf("Node %s is still cordoned after the failed scale-in", n.Name)
		}
	}
	if n := puts() - p0; n != 1 {
		t.Fatalf("%d agent pool PUTs right after the failed scale-in; want the one that failed", n)
	}

	// The budget lets the pod go: the retry drains the victim (its pod
	// evicted) and removes it.
	var victimPod string
	pods, err := f.CS.CoreV1().Pods(f.NS).List(context.Background(), metav1.ListOptions{LabelSelector: "app=guarded"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName == victim {
			victimPod = p.Name
		}
	}
	if victimPod == "" || !guarded[victim] {
		t.Fatalf("no guarded pod on the victim %s", victim)
	}
	f.Unguard()
	testenv.Eventually(t, converge+retryBase, func() error {
		if _, err := f.CS.CoreV1().Nodes().Get(context.Background(), victim, metav1.GetOptions{}); err == nil {
			return fmt.Errorf("Node %s is still there", victim)
		}
		return f.Converged(1, version)
	})
	// Evicted (deleted, or terminating: the test's cluster runs no
	// kubelet), not left on a Node that went.
	if pod, err := f.CS.CoreV1().Pods(f.NS).Get(context.Background(), victimPod, metav1.GetOptions{}); err == nil && pod.DeletionTimestamp == nil {
		t.Errorf("the pod %s on %s was not evicted", victimPod, victim)
	}
	if n := puts() - p0; n < 2 {
		t.Fatalf("%d agent pool PUTs; want the failed scale-in and its retry", n)
	}
}

// startDrainingCloud starts a simulated AKS whose minute is aksMinute, a
// fixture with the example converged at 2 nodes, and a manager (tuned by
// tune).
func startDrainingCloud(t *testing.T, tune ...func(*manager.Options)) (*itest.Fixture, *itest.Manager) {
	t.Helper()
	srv := itest.AKS.StartCloud(t, env, itest.CloudOptions{Version: next, BootDelay: 200 * time.Millisecond,
		Faces: []core.Face{&azureface.AzureFace{AKSMinute: aksMinute}}})
	f := itest.NewFixture(t, env, itest.AKS, srv)
	m := f.StartManager(tune...)
	f.ApplySeed()
	f.WaitConverged(2, version, converge)
	return f, m
}

// blockScaleIn sets the MachinePool's nodeDrainTimeout to 60s (the agent
// pool's drainTimeoutInMinutes 1: one write of the pool), guards every
// node with a budget that lets no pod go and scales the pool to 1: AKS
// cordons a victim, cannot drain it and fails the scale-in (one PUT).
// It returns the guarded nodes, the victim and the agent pool PUTs before
// the scale-in.
func blockScaleIn(t *testing.T, f *itest.Fixture) (guarded map[string]bool, victim string, puts int64) {
	t.Helper()
	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) {
		mp.Spec.Template.Spec.Deletion.NodeDrainTimeoutSeconds = ptr.To[int32](60)
	})
	aps := agentPools(t, f.Cloud)
	testenv.Eventually(t, converge, func() error {
		ap, err := aps.Get(f.Ctx, azureface.AzureDefaultResourceGroup, azureface.AKSDefaultClusterName, itest.AKS.PoolName, nil)
		if err != nil {
			return err
		}
		if us := ap.Properties.UpgradeSettings; us == nil || ptr.Deref(us.DrainTimeoutInMinutes, 0) != 1 || ptr.Deref(ap.Properties.ProvisioningState, "") != "Succeeded" {
			return fmt.Errorf("agent pool %s, upgradeSettings %+v; want drainTimeoutInMinutes 1", ptr.Deref(ap.Properties.ProvisioningState, ""), us)
		}
		return nil
	})
	guarded = f.GuardNodes(converge)
	puts = agentPoolPuts(f)
	f.Scale(1)
	// The victim is cordoned while AKS tries to drain it.
	testenv.Eventually(t, converge, func() error {
		for _, n := range f.PoolNodes() {
			if n.Spec.Unschedulable {
				victim = n.Name
				return nil
			}
		}
		return fmt.Errorf("no Node of the pool is cordoned")
	})
	return guarded, victim, puts
}

// agentPoolPuts counts the agent pool PUTs the simulated AKS accepted.
func agentPoolPuts(f *itest.Fixture) int64 {
	return f.Ops(azureface.AzureFaceName, azureface.OpAKSAgentPoolsCreateOrUpdate)
}
