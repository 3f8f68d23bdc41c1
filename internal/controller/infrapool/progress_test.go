package infrapool

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/rollout"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

func TestNextProgress(t *testing.T) {
	policy := preview.ProgressPolicy{Deadline: 10 * time.Minute, MaxFailed: 3}
	rec := func(at time.Duration, available, stale int32, failed ...string) *preview.RolloutProgress {
		return &preview.RolloutProgress{Model: "new", ProgressAt: t0.Add(at), Available: available, Stale: stale, Failed: failed}
	}
	obs := func(available, stale int32, failed ...string) progressObservation {
		return progressObservation{model: "new", rolling: stale > 0, active: true, available: available, stale: stale, failed: failed, now: t0}
	}
	for _, tc := range []struct {
		name   string
		reason string
		prev   *preview.RolloutProgress
		obs    progressObservation
		policy preview.ProgressPolicy
		// want
		paused      string // the pause reason, "" for none
		newly       bool
		noRecord    bool
		progressAt  time.Duration // of the record, relative to t0
		failed      []string
		resumed     bool
		requeueWant time.Duration
	}{
		{
			name: "a new rollout starts a record", obs: obs(0, 4), policy: policy,
			progressAt: 0, requeueWant: 10 * time.Minute,
		},
		{
			name: "nothing to roll keeps no record", reason: "a converged pool writes nothing",
			prev: rec(-time.Hour, 4, 1), obs: obs(4, 0), policy: policy, noRecord: true,
		},
		{
			name: "no progress within the deadline pauses", reason: "new instances never become available",
			prev: rec(-11*time.Minute, 0, 4), obs: obs(0, 4), policy: policy,
			paused: infrav1.ProgressDeadlineExceededReason, newly: true, progressAt: -11 * time.Minute,
		},
		{
			name: "a slow but healthy rollout is not paused", reason: "the deadline counts progress, not total time",
			prev: rec(-9*time.Minute, 2, 2), obs: obs(3, 1), policy: policy,
			progressAt: 0, requeueWant: 10 * time.Minute,
		},
		{
			name: "an old instance going is progress", reason: "with maxSurge 0 the old instance goes before its replacement is available",
			prev: rec(-11*time.Minute, 1, 3), obs: obs(1, 2), policy: policy, progressAt: 0, requeueWant: 10 * time.Minute,
		},
		{
			name: "removals in flight hold the deadline", reason: "a drain has its own bound, nodeDrainTimeout",
			prev: rec(-11*time.Minute, 1, 3), obs: func() progressObservation { o := obs(1, 3); o.removing = 1; return o }(), policy: policy,
			progressAt: 0, requeueWant: 10 * time.Minute,
		},
		{
			name: "consecutive failures pause", reason: "three new instances failed in a row",
			prev: rec(-time.Minute, 0, 4, "i-1", "i-2"), obs: obs(0, 4, "i-3"), policy: policy,
			paused: infrav1.ReplacementsFailingReason, newly: true, progressAt: -time.Minute, failed: []string{"i-1", "i-2", "i-3"},
		},
		{
			name: "a Node that goes NotReady before it is available is a failure", reason: "it was Ready, not yet for minReadySeconds",
			prev: func() *preview.RolloutProgress {
				r := rec(-time.Minute, 0, 4, "i-1", "i-2")
				r.Warming = []string{"i-3"}
				return r
			}(),
			obs: func() progressObservation { o := obs(0, 4); o.notReady = []string{"i-3"}; return o }(), policy: policy,
			paused: infrav1.ReplacementsFailingReason, newly: true, progressAt: -time.Minute, failed: []string{"i-1", "i-2", "i-3"},
		},
		{
			name: "a Node not Ready yet is no failure", reason: "a new Node is NotReady until its kubelet is",
			prev: rec(-time.Minute, 0, 4), obs: func() progressObservation { o := obs(0, 4); o.notReady = []string{"i-3"}; return o }(), policy: policy,
			progressAt: -time.Minute, requeueWant: 9 * time.Minute,
		},
		{
			name: "a failed instance is counted once", reason: "it is seen failed on several reconciles before it is gone",
			prev: rec(-time.Minute, 0, 4, "i-1"), obs: obs(0, 4, "i-1"), policy: policy,
			progressAt: -time.Minute, failed: []string{"i-1"}, requeueWant: 9 * time.Minute,
		},
		{
			name: "an available new instance resets the failures", reason: "only consecutive failures count",
			prev: rec(-time.Minute, 0, 4, "i-1", "i-2"), obs: obs(1, 4), policy: policy, progressAt: 0, requeueWant: 10 * time.Minute,
		},
		{
			name: "a pause holds", reason: "restart-safe: the record says it, nothing in memory",
			prev: &preview.RolloutProgress{Model: "new", ProgressAt: t0.Add(-time.Hour), Stale: 4, Paused: infrav1.ProgressDeadlineExceededReason},
			obs:  obs(0, 4), policy: policy, paused: infrav1.ProgressDeadlineExceededReason, progressAt: -time.Hour,
		},
		{
			name: "a new model lifts the pause", reason: "a new change to the template resumes",
			prev: &preview.RolloutProgress{Model: "older", ProgressAt: t0.Add(-time.Hour), Stale: 4, Paused: infrav1.ReplacementsFailingReason, Failed: []string{"a", "b", "c"}},
			obs:  obs(0, 4), policy: policy, resumed: true, progressAt: 0, requeueWant: 10 * time.Minute,
		},
		{
			name: "a pause by the user stops the clock", reason: "the time paused is not time without progress",
			prev: rec(-time.Hour, 0, 4), obs: func() progressObservation { o := obs(0, 4); o.active = false; return o }(), policy: policy, noRecord: true,
		},
		{
			name: "turned off", reason: "deadline 0 and limit 0: never paused",
			prev: rec(-time.Hour, 0, 4, "a", "b", "c"), obs: obs(0, 4, "d"), policy: preview.ProgressPolicy{},
			progressAt: -time.Hour, failed: []string{"a", "b", "c", "d"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := nextProgress(tc.prev, tc.obs, tc.policy)
			if tc.noRecord {
				if d.record != nil || d.paused {
					t.Fatalf("record %+v paused %v, want none", d.record, d.paused)
				}
				return
			}
			if d.record == nil {
				t.Fatal("no record")
			}
			if d.record.Paused != tc.paused || d.paused != (tc.paused != "") || d.newlyPaused != tc.newly {
				t.Errorf("paused %q (%v, newly %v), want %q (newly %v)", d.record.Paused, d.paused, d.newlyPaused, tc.paused, tc.newly)
			}
			if got := d.record.ProgressAt.Sub(t0); got != tc.progressAt {
				t.Errorf("progress at %s, want %s", got, tc.progressAt)
			}
			if !slices.Equal(d.record.Failed, tc.failed) {
				t.Errorf("failed %v, want %v", d.record.Failed, tc.failed)
			}
			if d.resumed != tc.resumed {
				t.Errorf("resumed %v, want %v", d.resumed, tc.resumed)
			}
			if d.requeueAfter != tc.requeueWant {
				t.Errorf("requeue after %s, want %s", d.requeueAfter, tc.requeueWant)
			}
			if tc.newly && !strings.Contains(d.record.Message, "new") {
				t.Errorf("message %q does not name the model", d.record.Message)
			}
		})
	}
}

// TestSelfPauseStopsThePlanAndSaysWhy: the engine's pause is kept on the
// pool, pauses the plan (no victim, the capacity kept) and is explained by
// RolloutProgressing; a restarted engine reads it back from the pool.
func TestSelfPauseStopsThePlanAndSaysWhy(t *testing.T) {
	failedNew := func(id string) fixture {
		return fixture{id: id, age: time.Minute, state: scalegroup.StateFailed, model: "new"}
	}
	fx := []fixture{running("a", time.Hour, "old"), running("b", time.Hour, "old"), failedNew("f3")}
	e, s := glueScope(fx, 2, rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(1))})
	e.rec = nopRecorder{}
	s.owner = &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Name: "mp", Annotations: map[string]string{preview.MaxFailedReplacementsAnnotation: "3"}}}
	s.pool.SetAnnotations(map[string]string{preview.RolloutProgressAnnotation: preview.RolloutProgress{
		Model: "new", ProgressAt: t0.Add(-time.Minute), Stale: 2, Failed: []string{"f1", "f2"},
	}.String()})
	if err := e.planRollout(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if len(s.plan.Delete) != 0 || s.plan.TargetCapacity != 2 {
		t.Fatalf("plan deletes %v with capacity %d, want nothing (paused) and the 2 live instances", s.plan.Delete, s.plan.TargetCapacity)
	}
	c := rolloutProgressingCondition(s)
	if c.Status != metav1.ConditionFalse || c.Reason != infrav1.ReplacementsFailingReason || !strings.Contains(c.Message, "f1, f2, f3") || !strings.Contains(c.Message, "mpool rollout resume mp") {
		t.Fatalf("RolloutProgressing %+v, want False/%s naming the failed instances and how to resume", c, infrav1.ReplacementsFailingReason)
	}

	// A restarted engine: the record on the pool holds the pause.
	e2, s2 := glueScope(fx, 2, rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(1))})
	e2.rec = nopRecorder{}
	s2.owner = s.owner
	s2.pool.SetAnnotations(s.pool.GetAnnotations())
	if err := e2.planRollout(context.Background(), s2); err != nil {
		t.Fatal(err)
	}
	if !s2.input.Paused || s2.selfPaused == nil {
		t.Fatal("a restarted engine forgot the pause")
	}

	// Resumed: the record removed, the count starts again.
	e3, s3 := glueScope(fx, 2, rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(1))})
	e3.rec = nopRecorder{}
	s3.owner = s.owner
	if err := e3.planRollout(context.Background(), s3); err != nil {
		t.Fatal(err)
	}
	if s3.input.Paused {
		t.Fatal("still paused once the record is removed")
	}
	if r, ok := preview.ParseRolloutProgress(s3.pool.GetAnnotations()[preview.RolloutProgressAnnotation]); !ok || !slices.Equal(r.Failed, []string{"f3"}) {
		t.Fatalf("record %+v, want a new one counting f3", r)
	}
}
