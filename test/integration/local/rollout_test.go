package local

import (
	"fmt"

	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/events"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// TestRolloutPausesItselfWhenReplacementsFail: a version bump to a model
// whose instances the simulated cloud fails to boot (failureRate 1, set in
// the same change) pauses itself after three failed replacements, with the
// ReplacementsFailing condition and event; no old instance was deleted
// beyond maxUnavailable and the pool serves on the others. The pause
// survives a manager restart (it is on the pool, not in memory); resuming
// it — removing the engine's record, as `mpool rollout resume` does — once
// the cloud boots again completes the rollout.
func TestRolloutPausesItselfWhenReplacementsFail(t *testing.T) {
	f, m := start(t, cloudOptions{}, managerOptions{})
	f.createPool(poolSpec{replicas: 3, maxSurge: intstr.FromInt32(1), maxUnavailable: intstr.FromInt32(1)})
	f.waitConverged(3, v1, "", converge)
	before := itest.IDs(f.Instances())

	w := itest.WatchBudgets(f.Fixture, 3, 1, 1)
	f.updateLocalPool(func(p *infrav1.LocalMachinePool) {
		p.Spec.Simulation = &infrav1.LocalSimulation{FailureRate: ptr.To("1")}
	})
	f.SetVersion(v2)
	f.WaitCondition(converge, infrav1.RolloutProgressingCondition, infrav1.ReplacementsFailingReason, "3 consecutive instances", "did not boot")
	f.waitPoolEvent(events.ReplacementsFailing, "Rollout paused by the engine")
	w.AssertHeld()

	old := f.oldInstances(before)
	if len(old) < 2 {
		t.Fatalf("%d of the 3 old instances left, want at least 2 (maxUnavailable 1)", len(old))
	}
	paused := itest.IDs(f.Instances())
	f.assertServing(old)

	t.Log("a restarted manager keeps the pause")
	m.Stop()
	startManager(t, f, managerOptions{})
	f.PokeUntilReconciled(t, 3)
	if got := itest.IDs(f.Instances()); !slices.Equal(got, paused) {
		t.Fatalf("instances %v became %v while the rollout was paused", paused, got)
	}
	f.WaitCondition(converge, infrav1.RolloutProgressingCondition, infrav1.ReplacementsFailingReason, "mpool rollout resume "+poolName)

	t.Log("the cloud boots again; resumed, the rollout completes")
	f.updateLocalPool(func(p *infrav1.LocalMachinePool) {
		p.Spec.Simulation = &infrav1.LocalSimulation{FailureRate: ptr.To("0")}
		delete(p.Annotations, preview.RolloutProgressAnnotation)
	})
	f.waitConverged(3, v2, "", 2*converge)
}

// TestRolloutPausesItselfAtTheProgressDeadline: new instances that never
// join (the simulated NeverJoins fault) make no progress; with a progress
// deadline of 10s (the MachinePool's mpool.dev/progress-deadline) the
// rollout pauses itself with ProgressDeadlineExceeded, keeps every old
// instance (maxUnavailable 0) and serves on them. A new change to the
// template resumes it.
func TestRolloutPausesItselfAtTheProgressDeadline(t *testing.T) {
	f, _ := start(t, cloudOptions{}, managerOptions{})
	f.createPool(poolSpec{replicas: 2, maxSurge: intstr.FromInt32(1), maxUnavailable: intstr.FromInt32(0)})
	f.waitConverged(2, v1, "", converge)
	before := itest.IDs(f.Instances())

	if _, err := f.Cloud.Cloud().SetGroupFaults(f.group, core.GroupFaults{NeverJoins: 100}); err != nil {
		t.Fatal(err)
	}
	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) {
		if mp.Annotations == nil {
			mp.Annotations = map[string]string{}
		}
		mp.Annotations[preview.ProgressDeadlineAnnotation] = "10s"
		mp.Spec.Template.Spec.Version = v2
	})
	f.WaitCondition(converge, infrav1.RolloutProgressingCondition, infrav1.ProgressDeadlineExceededReason, "progress deadline 10s")
	f.waitPoolEvent(events.ProgressDeadlineExceeded, "Rollout paused by the engine")
	if old := f.oldInstances(before); len(old) != 2 {
		t.Fatalf("%d of the 2 old instances left, want both (maxUnavailable 0)", len(old))
	}
	f.assertServing(before)

	t.Log("a new change to the template resumes the rollout")
	if _, err := f.Cloud.Cloud().SetGroupFaults(f.group, core.GroupFaults{}); err != nil {
		t.Fatal(err)
	}
	f.updateLocalPool(func(p *infrav1.LocalMachinePool) { p.Spec.Template.Image = "ubuntu-2604" })
	f.waitConverged(2, v2, "ubuntu-2604", 2*converge)
}

// oldInstances returns the live instances among before.
func (f *fixture) oldInstances(before []string) []string {
	var out []string
	for _, id := range itest.IDs(f.Instances()) {
		if slices.Contains(before, id) {
			out = append(out, id)
		}
	}
	return out
}

// assertServing waits until the Nodes of instances ids are Ready and
// schedulable, and the MachinePool is not Failed.
func (f *fixture) assertServing(ids []string) {
	f.T.Helper()
	testenv.Eventually(f.T, converge, func() error {
		serving := map[string]bool{}
		for _, n := range f.PoolNodes() {
			serving[n.Name] = testenv.NodeReady(&n) && !n.Spec.Unschedulable
		}
		for _, id := range ids {
			if !serving[f.nodeName(id)] {
				return fmt.Errorf("instance %s has no Ready schedulable Node", id)
			}
		}
		mp := &clusterv1.MachinePool{}
		if err := env.Client.Get(f.Ctx, f.PoolKey(), mp); err != nil {
			return err
		}
		if mp.Status.Phase == string(clusterv1.MachinePoolPhaseFailed) {
			return fmt.Errorf("MachinePool phase %s while its old instances serve", mp.Status.Phase)
		}
		return nil
	})
}

// TestSecondChangeMidRolloutReplacesEachInstanceOnce: a newer change during
// a rollout retargets it (issue 25's supersede). A pool of four rolls its
// image with maxSurge 1, maxUnavailable 0 and slow boots; once the first
// instance of the second model exists, the image changes again. Sampled
// from outside: after the second change at most one instance of the second
// model is created (a reconcile that read the spec before the change may
// still finish), every original instance is replaced, by an instance of the
// third model, and exactly four instances of the third model are created:
// none is replaced twice. An engine that finished the first rollout before
// the second would create three or four more of the second model.
func TestSecondChangeMidRolloutReplacesEachInstanceOnce(t *testing.T) {
	f, _ := start(t, cloudOptions{bootDelay: 600 * time.Millisecond, bootJitter: 200 * time.Millisecond}, managerOptions{})
	f.createPool(poolSpec{replicas: 4, maxSurge: intstr.FromInt32(1), maxUnavailable: intstr.FromInt32(0)})
	f.waitConverged(4, v1, "", converge)
	before := itest.IDs(f.Instances())
	original := f.Group().Instances[0].ModelHash

	seen := itest.WatchInstances(f.Fixture)
	w := itest.WatchBudgets(f.Fixture, 4, 1, 0)
	f.updateLocalPool(func(p *infrav1.LocalMachinePool) { p.Spec.Template.Image = "ubuntu-2604" })
	var second string
	testenv.Eventually(t, converge, func() error {
		for _, in := range f.Instances() {
			if in.ModelHash != original {
				second = in.ModelHash
				return nil
			}
		}
		return fmt.Errorf("no instance of the new model yet")
	})
	if old := f.oldInstances(before); len(old) < 3 {
		t.Fatalf("%d original instances left when the second model appeared, want at least 3 to supersede", len(old))
	}
	atChange := seen.Models()[second]
	f.updateLocalPool(func(p *infrav1.LocalMachinePool) { p.Spec.Template.Image = "ubuntu-2610" })
	f.waitConverged(4, v1, "ubuntu-2610", 2*converge)
	w.AssertHeld()
	models := seen.Stop()

	third := f.Instances()[0].ModelHash
	if made := models[second] - atChange; made > 1 {
		t.Errorf("%d instances of the superseded model created after the second change (%d before it), want at most 1", made, atChange)
	}
	if models[third] != 4 {
		t.Errorf("%d instances of the newest model created, want exactly 4: one was replaced twice", models[third])
	}
	if old := f.oldInstances(before); len(old) != 0 {
		t.Errorf("original instances %v not replaced", old)
	}
	t.Logf("instances created by model: %v (second model %d before the change)", models, atChange)
}

// TestAutomaticRollbackEndsAtTheOldModel: with mpool.dev/auto-rollback on,
// a change whose instances the cloud fails to boot (a new image and the
// simulation's failure rate 1, in one write) ends with no operator action at
// the old model and the old settings: the engine pauses the rollout, restores the previous
// revision, says so (event, condition), and the pool rolls back within the
// budgets, watched from outside. A manager restarted mid-rollback finishes
// it without rolling back a second time.
func TestAutomaticRollbackEndsAtTheOldModel(t *testing.T) {
	f, m := start(t, cloudOptions{}, managerOptions{})
	// The first revision says the cloud boots every instance: the rollback
	// restores that too (a simulation left unset would keep the cloud's).
	f.createPool(poolSpec{replicas: 3, maxSurge: intstr.FromInt32(1), maxUnavailable: intstr.FromInt32(1),
		simulation: &infrav1.LocalSimulation{FailureRate: ptr.To("0")}})
	f.waitConverged(3, v1, "", converge)
	f.waitRevisions(1)
	old := f.Group().Instances[0].ModelHash

	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) {
		if mp.Annotations == nil {
			mp.Annotations = map[string]string{}
		}
		mp.Annotations[preview.AutoRollbackAnnotation] = "true"
	})
	w := itest.WatchBudgets(f.Fixture, 3, 1, 1)
	// One write: a new image, and a cloud that fails to boot it.
	f.updateLocalPool(func(p *infrav1.LocalMachinePool) {
		p.Spec.Template.Image = "ubuntu-2604"
		p.Spec.Simulation = &infrav1.LocalSimulation{FailureRate: ptr.To("1")}
	})
	testenv.Eventually(t, 2*converge, func() error {
		if _, ok := preview.ParseRollBack(f.localPool().Annotations[preview.RolledBackAnnotation]); !ok {
			return fmt.Errorf("no automatic rollback recorded on the pool")
		}
		return nil
	})
	ev := f.waitPoolEvent(events.RolledBack, "rolled back to revision 1")
	t.Logf("event: %s", ev.Note)
	recorded := f.localPool().Annotations[preview.RolledBackAnnotation]

	t.Log("a manager restarted mid-rollback finishes it")
	m.Stop()
	startManager(t, f, managerOptions{})
	f.waitConverged(3, v1, "ubuntu-2404", 2*converge)
	if got := f.localPool().Annotations[preview.RolledBackAnnotation]; got != recorded {
		t.Errorf("the rollback record changed across the restart: %s, then %s", recorded, got)
	}
	w.AssertHeld()
	for _, in := range f.Instances() {
		if in.ModelHash != old {
			t.Errorf("instance %s on model %s after the rollback, want %s", in.ID, in.ModelHash, old)
		}
	}
	lp := f.localPool()
	if lp.Spec.Simulation == nil || ptr.Deref(lp.Spec.Simulation.FailureRate, "") != "0" {
		t.Errorf("the rollback kept the failing simulation %+v", lp.Spec.Simulation)
	}
	rb, ok := preview.ParseRollBack(lp.Annotations[preview.RolledBackAnnotation])
	if !ok || rb.To != old || rb.Revision != 1 || rb.Reason != infrav1.ReplacementsFailingReason {
		t.Errorf("rollback record %+v", rb)
	}
	mp := &clusterv1.MachinePool{}
	if err := env.Client.Get(f.Ctx, f.PoolKey(), mp); err != nil {
		t.Fatal(err)
	}
	if _, paused := mp.Annotations[preview.RolloutPausedAnnotation]; paused {
		t.Error("the rollback left the rollout paused")
	}
}
