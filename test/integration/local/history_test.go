package local

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

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
