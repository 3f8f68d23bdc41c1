package infrapool

import (
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
