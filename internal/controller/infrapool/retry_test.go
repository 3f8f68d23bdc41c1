package infrapool

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestApplyRetryBackoff: a change the cloud gave up on is retried
// FailedRetry after the failure was first seen, then twice as long after
// each retry that failed again, at most FailedRetryMax; the record reads
// back as written (a restarted manager keeps the count and the time).
func TestApplyRetryBackoff(t *testing.T) {
	var tm Timing
	tm.defaults()
	t0 := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	for n, want := range []time.Duration{20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 320 * time.Second, 10 * time.Minute, 10 * time.Minute} {
		r := applyRetry{Attempts: n, FailedAt: t0, Spec: "h", Capacity: 2}
		if got := r.retryAt(tm); !got.Equal(t0.Add(want)) {
			t.Errorf("after %d retries: due at %v, want %v", n, got, t0.Add(want))
		}
		back, ok := readApplyRetry(map[string]string{ApplyRetryAnnotation: r.String()})
		if !ok || back != r {
			t.Errorf("record %s reads back as %+v (%v)", r, back, ok)
		}
	}
	if got := backoff(100, tm.FailedRetry, tm.FailedRetryMax); got != tm.FailedRetryMax {
		t.Errorf("backoff after 100 retries %v", got)
	}
	if got := backoff(0, time.Hour, time.Minute); got != time.Minute {
		t.Errorf("a base above the cap waits %v", got)
	}
	if _, ok := readApplyRetry(map[string]string{ApplyRetryAnnotation: "{"}); ok {
		t.Error("an unreadable record is read")
	}
	if r := (applyRetry{Attempts: 1}); r.String() != `{"attempts":1,"capacity":0}` {
		t.Errorf("a retry in flight is written %s", r)
	}
}

// TestFailedGroupRetriesOnBackoff: a group the cloud left Failed is not
// applied between retries, however many passes run; it is applied once
// at each retry's time, then again after twice as long; a new engine
// reading the pool's record (a restarted manager) waits as the first
// did; a changed spec is applied at once; the record goes once the group
// is at rest and not Failed.
func TestFailedGroupRetriesOnBackoff(t *testing.T) {
	ctx := context.Background()
	fx := []fixture{running("a", time.Hour, "new"), running("b", time.Hour, "new")}
	e, s, cg := cloudRollingEngine(t, fx, 2)
	s.specHash = "spec1"
	s.cloud.Capacity, s.cloud.ModelHash = 2, "new"
	s.cloud.Failed, s.cloud.Message = true, "UpgradeFailed: a node could not be drained"
	s.pool.SetAnnotations(map[string]string{AppliedSpecAnnotation: s.specHash})
	t0 := s.now
	pass := func(e *Engine, at time.Duration) int {
		t.Helper()
		s.now, s.latest, s.requeue, s.retryNote, s.retrying = t0.Add(at), nil, 0, "", 0
		n := len(cg.applied)
		if err := e.applyGroup(ctx, s); err != nil {
			t.Fatal(err)
		}
		return len(cg.applied) - n
	}
	for _, at := range []time.Duration{0, time.Second, 10 * time.Second, 19 * time.Second} {
		if n := pass(e, at); n != 0 || s.requeue <= 0 || !strings.Contains(s.retryNote, "retrying in 20s") || !strings.Contains(s.retryNote, "attempt 1") {
			t.Fatalf("at %v: %d applies, requeue %v, note %q; want none before 20s", at, n, s.requeue, s.retryNote)
		}
	}
	if n := pass(e, 20*time.Second); n != 1 || s.retrying != 1 {
		t.Fatalf("at 20s: %d applies (retry %d), want the first retry", n, s.retrying)
	}
	// The retry failed again, seen at 30s: the next waits 40s from then,
	// also for a restarted manager.
	if n := pass(e, 30*time.Second); n != 0 || !strings.Contains(s.retryNote, "retrying in 40s") || !strings.Contains(s.retryNote, "attempt 2") {
		t.Fatalf("at 30s: %d applies, note %q", n, s.retryNote)
	}
	restarted, _, _ := cloudRollingEngine(t, fx, 2)
	restarted.setScaleGroup(cg)
	for _, at := range []time.Duration{31 * time.Second, 69 * time.Second} {
		if n := pass(restarted, at); n != 0 || !strings.Contains(s.retryNote, "attempt 2") {
			t.Fatalf("restarted, at %v: %d applies, note %q; want none before 70s", at, n, s.retryNote)
		}
	}
	if n := pass(restarted, 70*time.Second); n != 1 || s.retrying != 2 {
		t.Fatalf("restarted, at 70s: %d applies (retry %d), want the second retry", n, s.retrying)
	}
	// Failed again; a new spec goes at once.
	pass(restarted, 80*time.Second)
	s.specHash = "spec2"
	if n := pass(restarted, 81*time.Second); n != 1 || s.retrying != 0 {
		t.Fatalf("a changed spec: %d applies (retry %d), want one at once", n, s.retrying)
	}
	// At rest and not Failed: the record goes.
	s.cloud.Failed, s.cloud.Message = false, ""
	s.pool.SetAnnotations(map[string]string{AppliedSpecAnnotation: s.specHash, ApplyRetryAnnotation: `{"attempts":2}`})
	pass(restarted, 90*time.Second)
	if _, ok := s.pool.GetAnnotations()[ApplyRetryAnnotation]; ok {
		t.Fatalf("annotations %v: the record is kept at rest", s.pool.GetAnnotations())
	}
}
