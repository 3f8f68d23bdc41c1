package infrapool

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mpool-dev/mpool/internal/events"
)

// applyRetry is the engine's record of the retries of a change the cloud
// gave up on (ApplyRetryAnnotation).
type applyRetry struct {
	// Attempts is how many retries were sent.
	Attempts int `json:"attempts"`
	// FailedAt is when the group was first seen Failed since the last
	// write; zero while a retry is in flight.
	FailedAt time.Time `json:"failedAt,omitzero"`
	// Spec and Capacity are what failed (the spec hash and capacity last
	// applied): a change of either is applied at once.
	Spec     string `json:"spec,omitempty"`
	Capacity int32  `json:"capacity"`
}

// readApplyRetry is the pool's retry record; ok is false when it has
// none (or one that cannot be read, which starts over).
func readApplyRetry(a map[string]string) (r applyRetry, ok bool) {
	v, found := a[ApplyRetryAnnotation]
	if !found {
		return r, false
	}
	return r, json.Unmarshal([]byte(v), &r) == nil
}

func (r applyRetry) String() string {
	r.FailedAt = r.FailedAt.UTC().Truncate(time.Second)
	b, _ := json.Marshal(r)
	return string(b)
}

// backoff is the wait before retry n+1: base, then twice as long each
// time, at most most.
func backoff(n int, base, most time.Duration) time.Duration {
	d := base
	for range n {
		if d *= 2; d >= most {
			return most
		}
	}
	return min(d, most)
}

// retryAt is when the next retry of r is due under t.
func (r applyRetry) retryAt(t Timing) time.Time {
	return r.FailedAt.Add(backoff(r.Attempts, t.FailedRetry, t.FailedRetryMax))
}

// retryFailed handles a group the cloud gave up on (Group.Failed): the
// same spec with capacity want is applied again only when its retry is
// due, and at once when the spec or capacity changed; between retries it
// costs the cloud no write and records no event. The record survives a
// restart (ApplyRetryAnnotation).
func (e *Engine) retryFailed(ctx context.Context, s *pass, want int32) error {
	a := s.pool.GetAnnotations()
	r, _ := readApplyRetry(a)
	last, _ := e.applied.get(s.pool.GetUID())
	applied := a[AppliedSpecAnnotation] == s.specHash || last == s.specHash
	if !applied || (r.Spec != "" && (r.Spec != s.specHash || r.Capacity != want)) {
		// What the pool asks for changed: that is a new change, sent now.
		s.pool.SetAnnotations(withoutEntry(a, ApplyRetryAnnotation))
		return e.applySpec(ctx, s, want)
	}
	if r.FailedAt.IsZero() {
		r.FailedAt, r.Spec, r.Capacity = s.now, s.specHash, want
		s.pool.SetAnnotations(withEntry(a, ApplyRetryAnnotation, r.String()))
		e.rec.Eventf(s.pool, nil, corev1.EventTypeWarning, events.ScaleGroupChangeFailed, events.ActionApply,
			"The cloud gave up on the last change of scale group %s: %s; %s", s.group, s.cloud.Message, e.retryNote(r))
	}
	due := r.retryAt(e.timing)
	if s.now.Before(due) {
		s.retryNote = e.retryNote(r)
		s.requeueAfter(due.Sub(s.now))
		return nil
	}
	log.FromContext(ctx).Info("Retrying the change the cloud gave up on", "group", s.group.String(), "attempt", r.Attempts+1)
	s.retrying = r.Attempts + 1
	if err := e.applySpec(ctx, s, want); err != nil {
		return err
	}
	r.Attempts++
	r.FailedAt = time.Time{}
	s.pool.SetAnnotations(withEntry(s.pool.GetAnnotations(), ApplyRetryAnnotation, r.String()))
	return nil
}

// endRetries drops the retry record of a group at rest and not Failed:
// its change went through (a retry, or another change).
func endRetries(s *pass) {
	g := s.currentGroup()
	if g == nil || g.Failed || g.Pending() {
		return
	}
	if a := s.pool.GetAnnotations(); a[ApplyRetryAnnotation] != "" {
		s.pool.SetAnnotations(withoutEntry(a, ApplyRetryAnnotation))
	}
}

// retryNote says when the failed change r is applied again: stable
// between retries (the condition is not rewritten on every pass).
func (e *Engine) retryNote(r applyRetry) string {
	wait := backoff(r.Attempts, e.timing.FailedRetry, e.timing.FailedRetryMax)
	return fmt.Sprintf("mpool applies it again: retrying in %s (at %s), attempt %d (then after twice as long each time, at most %s), or at once when the pool changes",
		wait, r.retryAt(e.timing).UTC().Format(time.RFC3339), r.Attempts+1, e.timing.FailedRetryMax)
}
