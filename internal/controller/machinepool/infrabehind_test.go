package machinepool

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// TestInfraBehindWaitsBoundedPerGeneration: a status behind its generation
// is waited for InfraStatusWait from the first reconcile that saw it, again
// in full for a newer generation or another object; a status that is not
// behind, or a provider that does not report observedGeneration, is never
// waited for.
func TestInfraBehindWaitsBoundedPerGeneration(t *testing.T) {
	infra := func(uid string, generation int64, observed any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetUID(types.UID(uid))
		u.SetGeneration(generation)
		if observed != nil {
			u.Object["status"] = map[string]any{"observedGeneration": observed}
		}
		return u
	}
	pool := types.NamespacedName{Namespace: "ns", Name: "mp"}
	t0 := time.Unix(1000, 0)
	var b infraBehind
	for _, step := range []struct {
		what string
		obj  *unstructured.Unstructured
		at   time.Time
		want time.Duration
	}{
		{"no observedGeneration", infra("a", 3, nil), t0, 0},
		{"caught up", infra("a", 3, int64(3)), t0, 0},
		{"behind: the whole wait", infra("a", 4, int64(3)), t0, InfraStatusWait},
		{"behind, later: what is left", infra("a", 4, int64(3)), t0.Add(InfraStatusWait / 4), InfraStatusWait * 3 / 4},
		{"behind past the wait", infra("a", 4, int64(3)), t0.Add(InfraStatusWait), 0},
		{"a newer generation: waited again", infra("a", 5, int64(3)), t0.Add(InfraStatusWait), InfraStatusWait},
		{"another object (recreated): waited again", infra("b", 5, int64(3)), t0.Add(2 * InfraStatusWait), InfraStatusWait},
		{"caught up", infra("b", 5, int64(5)), t0.Add(2 * InfraStatusWait), 0},
		{"behind again: the whole wait", infra("b", 6, int64(5)), t0.Add(3 * InfraStatusWait), InfraStatusWait},
		{"not a number", infra("b", 7, "6"), t0.Add(3 * InfraStatusWait), 0},
	} {
		if got := b.wait(pool, step.obj, step.at); got != step.want {
			t.Errorf("%s: wait %s, want %s", step.what, got, step.want)
		}
	}
	b.wait(pool, infra("b", 8, int64(7)), t0)
	b.forget(pool)
	if n := len(b.since); n != 0 {
		t.Errorf("%d pools remembered after forget", n)
	}
}
