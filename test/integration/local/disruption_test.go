package local

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/events"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// undrainableRollout starts a pool of two (maxSurge 1, maxUnavailable 0,
// nodeDrainTimeout 5s, the undrainable-node behavior given) whose oldest
// instance runs a pod that a PodDisruptionBudget never lets go, and bumps
// its version. It returns the fixture, the manager, the guarded instance
// and the two original instances.
func undrainableRollout(t *testing.T, behavior preview.UndrainableNodeBehavior) (*fixture, *testManager, string, []string) {
	f, m := start(t, cloudOptions{}, managerOptions{spied: true})
	f.createPool(poolSpec{replicas: 2, maxSurge: intstr.FromInt32(1), maxUnavailable: intstr.FromInt32(0)})
	f.waitConverged(2, v1, "", converge)
	live := f.Instances()
	slices.SortFunc(live, func(a, b core.Instance) int { return a.CreatedAt.Compare(b.CreatedAt) })
	guarded := live[0].ID
	f.runPod("guarded", f.nodeName(guarded), "guarded")
	f.pdb("guarded", 1, 0)
	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) {
		if mp.Annotations == nil {
			mp.Annotations = map[string]string{}
		}
		mp.Annotations[preview.UndrainableNodeBehaviorAnnotation] = string(behavior)
		mp.Spec.Template.Spec.Deletion.NodeDrainTimeoutSeconds = ptr.To[int32](5)
		mp.Spec.Template.Spec.Version = v2
	})
	return f, m, guarded, itest.IDs(live)
}

// TestUndrainableSchedulePausesTheRollout: with Schedule, the drain the
// PodDisruptionBudget blocks ends at nodeDrainTimeout with the instance
// kept, its Node schedulable again, and the rollout paused by the engine,
// naming the Node and the PodDisruptionBudget; a restarted manager keeps
// the pause (and drains nothing); once the budget allows the eviction,
// 'mpool rollout resume' completes it.
func TestUndrainableSchedulePausesTheRollout(t *testing.T) {
	f, first, guarded, before := undrainableRollout(t, preview.UndrainableSchedule)
	node := f.nodeName(guarded)
	f.WaitCondition(2*converge, infrav1.RolloutProgressingCondition, infrav1.DrainBlockedReason, node, "PodDisruptionBudget "+f.NS+"/guarded")
	f.waitPoolEvent(events.DrainBlocked, node)
	f.assertKeptSchedulable(guarded)
	if v := f.plan(); !strings.HasPrefix(v.PausedBy, infrav1.DrainBlockedReason) || !strings.Contains(v.PausedBy, node) {
		t.Errorf("rollout plan: paused by %q, want the DrainBlocked pause naming %s", v.PausedBy, node)
	}

	t.Log("a restarted manager keeps the pause")
	first.Stop()
	startManager(t, f, managerOptions{spied: true})
	f.WaitCondition(converge, infrav1.RolloutProgressingCondition, infrav1.DrainBlockedReason, node)
	f.assertKeptSchedulable(guarded)
	if old := f.oldInstances(before); len(old) != 1 || old[0] != guarded {
		t.Fatalf("old instances %v while paused, want only %s (the other was replaced before the blocked drain)", old, guarded)
	}

	t.Log("the budget allows the eviction; resume")
	f.pdb("guarded", 0, -1)
	f.ResumeRollout()
	f.waitConverged(2, v2, "", 2*converge)
	f.spy.assertClean()
}

// assertKeptSchedulable checks that instance id lives with its guarded
// pod, its Node schedulable, and no removal in progress.
func (f *fixture) assertKeptSchedulable(id string) {
	f.T.Helper()
	testenv.Eventually(f.T, converge, func() error {
		if !slices.Contains(itest.IDs(f.Instances()), id) || !f.podExists("guarded") {
			return fmt.Errorf("instance %s or its guarded pod went", id)
		}
		n, err := f.CS.CoreV1().Nodes().Get(f.Ctx, f.nodeName(id), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n.Spec.Unschedulable {
			return fmt.Errorf("Node %s still cordoned", n.Name)
		}
		m := &infrav1.LocalMachinePoolMachine{}
		if err := env.Client.Get(f.Ctx, f.Key(contract.InstanceObjectName(poolName, id)), m); err != nil {
			return err
		}
		if _, ok := m.Annotations[preview.DrainStartedAnnotation]; ok {
			return fmt.Errorf("the removal of %s is still recorded", id)
		}
		if m.Status.State != infrav1.LocalInstanceRunning {
			return fmt.Errorf("%s reports its instance %s, want %s (kept, not being removed)", m.Name, m.Status.State, infrav1.LocalInstanceRunning)
		}
		return nil
	})
}

// TestUndrainableCordonQuarantinesAndGoesOn: with Cordon, the instance
// whose drain is blocked is kept cordoned, labelled and quarantined, and
// the rollout completes with the other instances: two replicas on the new
// model, the quarantined one beside them. A restarted manager neither
// deletes it nor adds a replica. Marked for deletion once its budget
// allows, it goes.
func TestUndrainableCordonQuarantinesAndGoesOn(t *testing.T) {
	f, first, guarded, before := undrainableRollout(t, preview.UndrainableCordon)
	f.waitPoolEvent(events.NodeQuarantined, f.nodeName(guarded))
	f.waitQuarantined(guarded, before)

	t.Log("a restarted manager keeps the quarantine")
	first.Stop()
	startManager(t, f, managerOptions{spied: true})
	f.waitQuarantined(guarded, before)
	if v := f.plan(); v.Quarantined != 1 || !v.Next.Done {
		t.Errorf("rollout plan: %d quarantined, next done %v; want 1 and nothing to do", v.Quarantined, v.Next.Done)
	}

	t.Log("the budget allows the eviction; the quarantined instance is marked for deletion")
	f.pdb("guarded", 0, -1)
	machines := &clusterv1.MachineList{}
	if err := env.Client.List(f.Ctx, machines, client.InNamespace(f.NS)); err != nil {
		t.Fatal(err)
	}
	marked := false
	for i := range machines.Items {
		m := &machines.Items[i]
		if m.Spec.InfrastructureRef.Name != contract.InstanceObjectName(poolName, guarded) {
			continue
		}
		itest.Patch(f.Fixture, client.ObjectKeyFromObject(m), &clusterv1.Machine{}, func(m *clusterv1.Machine) {
			if m.Annotations == nil {
				m.Annotations = map[string]string{}
			}
			m.Annotations[clusterv1.DeleteMachineAnnotation] = "yes"
		})
		marked = true
	}
	if !marked {
		t.Fatalf("no Machine for instance %s", guarded)
	}
	f.waitConverged(2, v2, "", 2*converge)
	f.spy.assertClean()
}

// waitQuarantined waits until the pool has completed its rollout around
// the quarantined instance q: q lives, cordoned and labelled, with its
// pod and its object's quarantine annotation; the other live instances are
// two on the new model (none of before but q); the engine reports the
// rollout converged and mentions the quarantine.
func (f *fixture) waitQuarantined(q string, before []string) {
	f.T.Helper()
	testenv.Eventually(f.T, 2*converge, func() error {
		ids := itest.IDs(f.Instances())
		if !slices.Contains(ids, q) || !f.podExists("guarded") {
			return fmt.Errorf("quarantined instance %s or its pod went (live %v)", q, ids)
		}
		if len(ids) != 3 {
			return fmt.Errorf("live instances %v, want 3 (two new, one quarantined)", ids)
		}
		for _, id := range ids {
			if id != q && slices.Contains(before, id) {
				return fmt.Errorf("old instance %s not replaced yet", id)
			}
		}
		n, err := f.CS.CoreV1().Nodes().Get(f.Ctx, f.nodeName(q), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !n.Spec.Unschedulable || n.Labels[preview.UpgradeStatusLabel] != preview.QuarantinedStatus {
			return fmt.Errorf("Node %s: unschedulable %v, labels %v; want cordoned and quarantined", n.Name, n.Spec.Unschedulable, n.Labels)
		}
		m := &infrav1.LocalMachinePoolMachine{}
		if err := env.Client.Get(f.Ctx, f.Key(contract.InstanceObjectName(poolName, q)), m); err != nil {
			return err
		}
		if m.Annotations[preview.QuarantinedAnnotation] == "" || m.Annotations[preview.DrainStartedAnnotation] != "" {
			return fmt.Errorf("%s's annotations %v: want quarantined, no removal", m.Name, m.Annotations)
		}
		if m.Status.State != infrav1.LocalInstanceRunning {
			return fmt.Errorf("%s reports its instance %s, want %s (kept, not being removed)", m.Name, m.Status.State, infrav1.LocalInstanceRunning)
		}
		return f.PoolConverged()
	})
	f.WaitPoolCondition(converge, infrav1.RolloutProgressingCondition, metav1.ConditionFalse, "1 instance quarantined")
}

// TestMaintenanceWindow: a change made while the pool's window is closed
// replaces nothing and says until when (the condition and the rollout
// plan); a restarted manager still waits; once the window is open (here:
// the window changed to one open now — the opening by the clock is
// covered by the engine's unit tests on an injected clock) the pool rolls.
func TestMaintenanceWindow(t *testing.T) {
	f, first := start(t, cloudOptions{}, managerOptions{spied: true})
	f.createPool(poolSpec{replicas: 2, maxSurge: intstr.FromInt32(1), maxUnavailable: intstr.FromInt32(0)})
	f.waitConverged(2, v1, "", converge)
	before := itest.IDs(f.Instances())

	// A window that opens 12 hours from now, for an hour.
	opens := time.Now().UTC().Add(12 * time.Hour).Truncate(time.Hour)
	schedule := fmt.Sprintf("0 %d * * *", opens.Hour())
	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) {
		if mp.Annotations == nil {
			mp.Annotations = map[string]string{}
		}
		mp.Annotations[preview.MaintenanceWindowScheduleAnnotation] = schedule
		mp.Annotations[preview.MaintenanceWindowDurationAnnotation] = "1h"
		mp.Spec.Template.Spec.Version = v2
	})
	until := opens.Format(time.RFC3339)
	f.WaitCondition(converge, infrav1.RolloutProgressingCondition, infrav1.OutsideMaintenanceWindowReason, "until "+until)
	if v := f.plan(); v.MaintenanceWindow == nil || v.MaintenanceWindow.Open || len(v.Next.Waiting) == 0 || v.Next.Waiting[0].Reason != infrav1.OutsideMaintenanceWindowReason || len(v.Next.Delete) != 0 || v.Next.Create != 0 {
		t.Errorf("rollout plan: window %+v, next %+v; want closed, nothing done, waiting %s", v.MaintenanceWindow, v.Next, infrav1.OutsideMaintenanceWindowReason)
	}

	t.Log("a restarted manager still waits")
	first.Stop()
	startManager(t, f, managerOptions{spied: true})
	f.WaitCondition(converge, infrav1.RolloutProgressingCondition, infrav1.OutsideMaintenanceWindowReason, "until "+until)
	if got := itest.IDs(f.Instances()); !slices.Equal(got, before) || len(f.spy.deleted()) != 0 {
		t.Fatalf("instances %v (deleted %v) outside the window; want %v untouched", got, f.spy.deleted(), before)
	}

	t.Log("the window is open: the pool rolls")
	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) {
		mp.Annotations[preview.MaintenanceWindowScheduleAnnotation] = fmt.Sprintf("%d %d * * *", time.Now().UTC().Minute(), time.Now().UTC().Hour())
		mp.Annotations[preview.MaintenanceWindowDurationAnnotation] = "2h"
	})
	f.waitConverged(2, v2, "", 2*converge)
	f.spy.assertClean()
}
