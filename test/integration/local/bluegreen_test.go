package local

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/cli"
	"github.com/mpool-dev/mpool/internal/events"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/rollout"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// TestBlueGreenSoakRollbackAndComplete: with the BlueGreen strategy a
// version bump creates the full green set beside the blue one, cordons and
// drains the blue Nodes in batches, and soaks with the blue instances kept;
// a manager restarted in the soak resumes it; `mpool rollout undo` in the
// soak makes the blue Nodes schedulable again and deletes the green set,
// no blue instance recreated; rolled again with a short soak, the pool
// completes and the blue set is deleted. Ready schedulable Nodes of the
// pool never fall below its size, watched from outside throughout.
func TestBlueGreenSoakRollbackAndComplete(t *testing.T) {
	f, first := start(t, cloudOptions{}, managerOptions{spied: true})
	f.createPool(poolSpec{replicas: 2, maxSurge: intstr.FromInt32(1), maxUnavailable: intstr.FromInt32(0)})
	f.waitConverged(2, v1, "", converge)
	blue := itest.IDs(f.Instances())
	models := itest.WatchInstances(f.Fixture)
	serving := itest.WatchServing(f.Fixture, 2)

	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) {
		if mp.Annotations == nil {
			mp.Annotations = map[string]string{}
		}
		mp.Annotations[preview.RolloutStrategyAnnotation] = preview.StrategyBlueGreen
		mp.Annotations[preview.BlueGreenBatchSizeAnnotation] = "1"
		mp.Annotations[preview.BlueGreenBatchSoakAnnotation] = "2s"
		mp.Annotations[preview.BlueGreenPoolSoakAnnotation] = "1h"
		mp.Spec.Template.Spec.Version = v2
	})
	f.WaitPoolCondition(2*converge, infrav1.RolloutProgressingCondition, metav1.ConditionTrue, "blue-green: soaking until")
	f.assertSoaking(blue)
	f.waitPoolEvent(events.BlueGreen, string(rollout.PhaseSoaking))
	if v := f.plan(); v.BlueGreen == nil || v.BlueGreen.Phase != string(rollout.PhaseSoaking) || v.BlueGreen.PeakInstances != 4 {
		t.Errorf("rollout plan's blue-green: %+v; want NodePoolSoaking with a peak of 4", v.BlueGreen)
	}

	t.Log("a manager restarted in the soak resumes it")
	first.Stop()
	startManager(t, f, managerOptions{spied: true})
	f.PokeUntilReconciled(t, 2)
	f.WaitPoolCondition(converge, infrav1.RolloutProgressingCondition, metav1.ConditionTrue, "blue-green: soaking until")
	f.assertSoaking(blue)

	t.Log("undo in the soak: the blue Nodes serve again, the green set goes")
	var buf bytes.Buffer
	if err := cli.UndoRollout(f.Ctx, env.Client, f.NS, poolName, 0, &buf); err != nil {
		t.Fatal(err)
	}
	f.waitConverged(2, v1, "", 2*converge)
	if got := itest.IDs(f.Instances()); !slices.Equal(got, blue) {
		t.Fatalf("after the rollback the pool runs %v, want its blue instances %v", got, blue)
	}
	for _, id := range blue {
		f.assertNodeSchedulable(id)
	}
	f.waitPoolEvent(events.BlueGreen, "rolled back")
	seen := models.Models()
	v1Model := ""
	for _, in := range f.Instances() {
		v1Model = in.ModelHash
	}
	if seen[v1Model] != 2 {
		t.Fatalf("instances seen per model %v: %d of the blue model %s, want the 2 blue ones only (none recreated)", seen, seen[v1Model], v1Model)
	}

	t.Log("rolled again with a short soak, the rollout completes and deletes the blue set")
	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) {
		mp.Annotations[preview.BlueGreenPoolSoakAnnotation] = "3s"
		mp.Spec.Template.Spec.Version = v2
	})
	f.waitPoolEvent(events.BlueGreen, "complete")
	f.waitConverged(2, v2, "", 2*converge)
	for _, id := range itest.IDs(f.Instances()) {
		if slices.Contains(blue, id) {
			t.Errorf("blue instance %s was not deleted", id)
		}
	}
	if a := f.poolAnnotations(); a[preview.BlueGreenAnnotation] != "" {
		t.Errorf("the blue-green record is still on the pool: %s", a[preview.BlueGreenAnnotation])
	}
	serving.AssertAtLeast()
	models.Stop()
	f.spy.assertClean()
}

// assertSoaking checks the soak: the blue instances live beside two green
// ones, their Nodes cordoned and labelled, the green Nodes schedulable.
func (f *fixture) assertSoaking(blue []string) {
	f.T.Helper()
	testenv.Eventually(f.T, converge, func() error {
		ids := itest.IDs(f.Instances())
		if len(ids) != 4 {
			return fmt.Errorf("live instances %v, want 4 (2 blue, 2 green)", ids)
		}
		for _, id := range ids {
			n, err := f.CS.CoreV1().Nodes().Get(f.Ctx, f.nodeName(id), metav1.GetOptions{})
			if err != nil {
				return err
			}
			isBlue := slices.Contains(blue, id)
			if isBlue != n.Spec.Unschedulable || isBlue != (n.Labels[preview.BlueGreenNodeLabel] == preview.BlueGreenCordonedStatus) {
				return fmt.Errorf("Node %s (blue %v): unschedulable %v, labels %v", n.Name, isBlue, n.Spec.Unschedulable, n.Labels)
			}
		}
		for _, id := range blue {
			if !slices.Contains(ids, id) {
				return fmt.Errorf("blue instance %s went during the soak", id)
			}
		}
		return nil
	})
	// Both sets live: the MachinePool scales down, it is not broken.
	mp := &clusterv1.MachinePool{}
	if err := env.Client.Get(f.Ctx, f.PoolKey(), mp); err != nil {
		f.T.Fatal(err)
	}
	if mp.Status.Phase == string(clusterv1.MachinePoolPhaseFailed) || mp.Status.Phase == string(clusterv1.MachinePoolPhaseUnknown) {
		f.T.Errorf("MachinePool phase %s during the soak", mp.Status.Phase)
	}
	f.T.Logf("MachinePool during the soak: phase %s, replicas %v", mp.Status.Phase, ptrString(mp.Status.Replicas))
}

func ptrString(p *int32) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

func (f *fixture) assertNodeSchedulable(id string) {
	f.T.Helper()
	testenv.Eventually(f.T, converge, func() error {
		n, err := f.CS.CoreV1().Nodes().Get(f.Ctx, f.nodeName(id), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n.Spec.Unschedulable || n.Labels[preview.BlueGreenNodeLabel] != "" {
			return fmt.Errorf("Node %s: unschedulable %v, labels %v", n.Name, n.Spec.Unschedulable, n.Labels)
		}
		return nil
	})
}

func (f *fixture) poolAnnotations() map[string]string {
	f.T.Helper()
	p := &infrav1.LocalMachinePool{}
	if err := env.Client.Get(f.Ctx, f.PoolKey(), p); err != nil {
		f.T.Fatal(err)
	}
	return p.Annotations
}
