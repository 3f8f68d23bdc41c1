package local

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/cli"
	"github.com/mpool-dev/mpool/internal/history"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// TestRolloutHistoryAndUndo: every model the pool rolls to is a revision
// (an apps/v1 ControllerRevision owned by the MachinePool) with what
// changed; `mpool rollout undo --to-revision 1` restores the first model —
// version, image — and the engine rolls every instance back within the
// budgets, watched from outside; the first revision moves to the top, as a
// Deployment's does. The pool at rest records nothing more, and the
// history limit prunes the oldest.
func TestRolloutHistoryAndUndo(t *testing.T) {
	f, _ := start(t, cloudOptions{}, managerOptions{})
	f.createPool(poolSpec{replicas: 3, maxSurge: intstr.FromInt32(1), maxUnavailable: intstr.FromInt32(0)})
	f.waitConverged(3, v1, "", converge)
	f.waitRevisions(1)

	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) {
		mp.Annotations = map[string]string{history.ChangeCauseAnnotation: "version bump to " + v2}
		mp.Spec.Template.Spec.Version = v2
	})
	f.waitConverged(3, v2, "", converge)
	f.updateLocalPool(func(p *infrav1.LocalMachinePool) { p.Spec.Template.Image = "ubuntu-2604" })
	f.waitConverged(3, v2, "ubuntu-2604", converge)
	revs := f.waitRevisions(3)
	if revs[1].ChangeCause != "version bump to "+v2 {
		t.Errorf("revision 2's change cause %q", revs[1].ChangeCause)
	}

	out := f.rolloutHistory()
	for _, want := range []string{
		"1 ", "2 ", "3 (current)", "version bump to " + v2,
		"MachinePool spec.template.spec.version: " + v1 + " → " + v2,
		"LocalMachinePool spec.template.image: ubuntu-2404 → ubuntu-2604",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("history does not say %q:\n%s", want, out)
		}
	}

	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) { mp.Annotations[preview.AutoRollbackAnnotation] = "true" })
	if v := f.plan(); v.Revision == nil || v.Revision.Number != 3 || v.Revisions != 3 || v.Stops == nil || !v.Stops.AutoRollback ||
		v.Stops.RollbackTo == nil || v.Stops.RollbackTo.Number != 2 || v.Stops.RollbackTo.ModelHash != revs[1].ModelHash {
		t.Errorf("rollout plan: revision %+v of %d, stops %+v; want revision 3 of 3 and an automatic rollback to revision 2", v.Revision, v.Revisions, v.Stops)
	}
	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) { delete(mp.Annotations, preview.AutoRollbackAnnotation) })

	t.Log("at rest, the engine records nothing")
	f.PokeUntilReconciled(t, 3)
	if got := f.revisions(); len(got) != 3 {
		t.Fatalf("%d revisions at rest, want 3", len(got))
	}

	t.Log("undo to revision 1 rolls every instance back within the budgets")
	first := revs[0].ModelHash
	before := itest.IDs(f.Instances())
	w := itest.WatchBudgets(f.Fixture, 3, 1, 0)
	var buf bytes.Buffer
	if err := cli.UndoRollout(f.Ctx, env.Client, f.NS, poolName, 1, &buf); err != nil {
		t.Fatal(err)
	}
	t.Logf("undo:\n%s", buf.String())
	if !strings.Contains(buf.String(), "rolled back to revision 1") {
		t.Errorf("undo says %q", buf.String())
	}
	f.waitConverged(3, v1, "ubuntu-2404", 2*converge)
	w.AssertHeld()
	for _, id := range itest.IDs(f.Instances()) {
		if slices.Contains(before, id) {
			t.Errorf("instance %s of revision 3 was not replaced", id)
		}
	}
	mp := &clusterv1.MachinePool{}
	if err := env.Client.Get(f.Ctx, f.PoolKey(), mp); err != nil {
		t.Fatal(err)
	}
	if _, paused := mp.Annotations[preview.RolloutPausedAnnotation]; paused {
		t.Error("undo left the rollout paused")
	}
	revs = f.waitRevisions(3)
	if revs[2].Number != 4 || revs[2].ModelHash != first {
		t.Errorf("revisions %v: want the first model moved to the top as revision 4", numbers(revs))
	}

	t.Log("a history limit of 2 prunes the oldest; revision 2's model (v2, ubuntu-2404) moves to the top")
	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) {
		mp.Annotations[history.RevisionHistoryLimitAnnotation] = "2"
		mp.Spec.Template.Spec.Version = v2
	})
	f.waitConverged(3, v2, "ubuntu-2404", 2*converge)
	revs = f.waitRevisions(2)
	if revs[1].Number != 5 {
		t.Errorf("revisions %v, want the newest numbered 5", numbers(revs))
	}
}

func numbers(revs []history.Revision) []int64 {
	out := make([]int64, len(revs))
	for i, r := range revs {
		out[i] = r.Number
	}
	return out
}

// revisions returns the MachinePool's revisions, oldest first.
func (f *fixture) revisions() []history.Revision {
	f.T.Helper()
	mp := &clusterv1.MachinePool{}
	if err := env.Client.Get(f.Ctx, f.PoolKey(), mp); err != nil {
		f.T.Fatal(err)
	}
	revs, err := history.List(f.Ctx, env.Client, mp)
	if err != nil {
		f.T.Fatal(err)
	}
	return revs
}

// waitRevisions waits until the MachinePool has n revisions and returns
// them.
func (f *fixture) waitRevisions(n int) []history.Revision {
	f.T.Helper()
	var revs []history.Revision
	testenv.Eventually(f.T, converge, func() error {
		if revs = f.revisions(); len(revs) != n {
			return fmt.Errorf("%d revisions %v, want %d", len(revs), numbers(revs), n)
		}
		return nil
	})
	return revs
}

// rolloutHistory runs `mpool rollout history` on the pool.
func (f *fixture) rolloutHistory() string {
	f.T.Helper()
	var buf bytes.Buffer
	if err := cli.RolloutHistory(f.Ctx, env.Client, f.NS, poolName, &buf); err != nil {
		f.T.Fatal(err)
	}
	f.T.Logf("rollout history:\n%s", buf.String())
	return buf.String()
}

// TestRevisionLeftByAnEarlierPoolIsAdopted: a MachinePool deleted with its
// dependents orphaned (`kubectl delete --cascade=orphan`) leaves its
// revisions behind, owned by no one; the same manifests applied again make
// the same model, whose revision's name is taken. The new pool adopts it:
// its history holds its first model as revision 1, and no second revision
// of that model appears.
func TestRevisionLeftByAnEarlierPoolIsAdopted(t *testing.T) {
	f, _ := start(t, cloudOptions{}, managerOptions{})
	p := poolSpec{replicas: 1}
	f.createPool(p)
	f.waitConverged(1, v1, "", converge)
	first := f.waitRevisions(1)[0]

	mp := &clusterv1.MachinePool{}
	if err := env.Client.Get(f.Ctx, f.PoolKey(), mp); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(f.Ctx, mp, client.PropagationPolicy(metav1.DeletePropagationOrphan)); err != nil {
		t.Fatal(err)
	}
	t.Log("the MachinePool is gone; its revision is left, owned by no one")
	testenv.Eventually(t, converge, func() error {
		if err := env.Client.Get(f.Ctx, f.PoolKey(), &clusterv1.MachinePool{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("MachinePool still there (%v)", err)
		}
		for _, o := range f.poolObjects(clusterName, poolName, p)[:2] {
			if err := env.Client.Get(f.Ctx, client.ObjectKeyFromObject(o), o); !apierrors.IsNotFound(err) {
				return fmt.Errorf("%T %s still there (%v)", o, o.GetName(), err)
			}
		}
		cr := &appsv1.ControllerRevision{}
		if err := env.Client.Get(f.Ctx, client.ObjectKeyFromObject(first.Object), cr); err != nil {
			return fmt.Errorf("the orphaned revision: %w", err)
		}
		if len(cr.OwnerReferences) > 0 {
			return fmt.Errorf("revision %s still has owners %v", cr.Name, cr.OwnerReferences)
		}
		return nil
	})

	t.Log("the same manifests again: the new pool adopts the revision of its model")
	f.createPool(p)
	f.waitConverged(1, v1, "", converge)
	revs := f.waitRevisions(1)
	if revs[0].Object.Name != first.Object.Name || revs[0].Number != 1 || revs[0].ModelHash != first.ModelHash {
		t.Errorf("the new pool's revision %s, number %d, model %s; want the adopted %s, 1, %s",
			revs[0].Object.Name, revs[0].Number, revs[0].ModelHash, first.Object.Name, first.ModelHash)
	}
	all := &appsv1.ControllerRevisionList{}
	if err := env.Client.List(f.Ctx, all, client.InNamespace(f.NS), client.MatchingLabels{history.MachinePoolLabel: poolName}); err != nil {
		t.Fatal(err)
	}
	if len(all.Items) != 1 {
		t.Errorf("%d ControllerRevisions of pool %s, want the one adopted", len(all.Items), poolName)
	}
	if out := f.rolloutHistory(); !strings.Contains(out, "1 (current)") {
		t.Errorf("the history does not show the adopted revision as current:\n%s", out)
	}

	t.Log("a setting applied in place changes the revision's data (immutable): it is written again under its number")
	f.updateLocalPool(func(lp *infrav1.LocalMachinePool) {
		lp.Spec.Simulation = &infrav1.LocalSimulation{BootDelay: &metav1.Duration{Duration: 2 * time.Second}}
	})
	testenv.Eventually(t, converge, func() error {
		revs := f.revisions()
		if len(revs) != 1 || revs[0].Number != 1 {
			return fmt.Errorf("revisions %v, want 1", numbers(revs))
		}
		if spec := string(revs[0].Snapshot.Infrastructure.Spec); !strings.Contains(spec, `"bootDelay":"2s"`) {
			return fmt.Errorf("revision 1's infrastructure spec %s, want the boot delay", spec)
		}
		return nil
	})
}
