package preview

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Annotations of a rollout's progress deadline and self-pause.
const (
	// ProgressDeadlineAnnotation on a MachinePool (or its infra pool, which
	// wins) is how long a rollout may go without progress — no instance of
	// the new model becoming available, no old instance replaced — before
	// the engine pauses it itself: a Go duration ("10m", "90s"). "0" turns
	// the deadline off. Unset: DefaultProgressDeadline. The deadline counts
	// progress, not total time: a slow rollout that keeps making progress
	// is never paused.
	ProgressDeadlineAnnotation = "mpool.dev/progress-deadline"
	// MaxFailedReplacementsAnnotation on a MachinePool (or its infra pool,
	// which wins) is how many consecutive instances of the new model may
	// fail (the cloud gave up on their boot, they never joined the cluster
	// within the join timeout, or their Node went NotReady before it had
	// been Ready for minReadySeconds) before the engine pauses the rollout
	// itself: a non-negative integer, "0" turns it off. Unset:
	// DefaultMaxFailedReplacements. An instance of the new model becoming
	// available resets the count.
	MaxFailedReplacementsAnnotation = "mpool.dev/max-failed-replacements"
	// RolloutProgressAnnotation on an infra pool is the engine's record of
	// the rollout in progress (RolloutProgress, JSON): the model, when it
	// last made progress, the failed instances counted, and whether the
	// engine paused it. It is the state a restarted manager resumes from.
	// Removing it (`mpool rollout resume`) lifts a pause the engine set
	// and restarts the deadline; a new model starts a new record.
	RolloutProgressAnnotation = "mpool.dev/rollout-progress"
)

// Defaults of the progress annotations.
const (
	// DefaultProgressDeadline is the progress deadline of a pool without
	// ProgressDeadlineAnnotation.
	DefaultProgressDeadline = 10 * time.Minute
	// DefaultMaxFailedReplacements is the limit of a pool without
	// MaxFailedReplacementsAnnotation.
	DefaultMaxFailedReplacements = 3
)

// ProgressPolicy is when a rollout pauses itself. Zero fields are off.
type ProgressPolicy struct {
	// Deadline is the progress deadline.
	Deadline time.Duration
	// MaxFailed is the limit of consecutive failed new-model instances.
	MaxFailed int
}

// ReadProgressPolicy resolves the progress annotations of the pool's
// objects (later ones win: the MachinePool, then the infra pool). An
// unreadable value leaves its default in place and is returned as an
// error, with the policy still usable.
func ReadProgressPolicy(objs ...metav1.Object) (ProgressPolicy, error) {
	p := ProgressPolicy{Deadline: DefaultProgressDeadline, MaxFailed: DefaultMaxFailedReplacements}
	var deadline, maxFailed string
	for _, o := range objs {
		if o == nil {
			continue
		}
		a := o.GetAnnotations()
		if v, ok := a[ProgressDeadlineAnnotation]; ok {
			deadline = v
		}
		if v, ok := a[MaxFailedReplacementsAnnotation]; ok {
			maxFailed = v
		}
	}
	var errs []string
	if v := strings.TrimSpace(deadline); v != "" {
		d, err := time.ParseDuration(v)
		switch {
		case v == "0":
			p.Deadline = 0
		case err != nil || d < 0:
			errs = append(errs, fmt.Sprintf("annotation %s: %q is not a non-negative duration such as \"10m\"", ProgressDeadlineAnnotation, deadline))
		default:
			p.Deadline = d
		}
	}
	if v := strings.TrimSpace(maxFailed); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Sprintf("annotation %s: %q is not a non-negative integer", MaxFailedReplacementsAnnotation, maxFailed))
		} else {
			p.MaxFailed = n
		}
	}
	if len(errs) > 0 {
		return p, fmt.Errorf("%s; the default applies", strings.Join(errs, "; "))
	}
	return p, nil
}

// RolloutProgress is the engine's record of a rollout in progress
// (RolloutProgressAnnotation).
type RolloutProgress struct {
	// Model is the model hash being rolled out.
	Model string `json:"model"`
	// ProgressAt is when the rollout last made progress (or started).
	ProgressAt time.Time `json:"progressAt"`
	// Available is how many instances of Model were available then.
	Available int32 `json:"available"`
	// Stale is how many live instances ran an older model then.
	Stale int32 `json:"stale"`
	// Failed are the consecutive failed instances of Model counted so far.
	Failed []string `json:"failed,omitempty"`
	// Warming are the instances of Model whose Node is Ready but not yet
	// for minReadySeconds: one that goes NotReady before is a failure.
	Warming []string `json:"warming,omitempty"`
	// Paused is the reason the engine paused the rollout itself, empty
	// while it goes on.
	Paused string `json:"paused,omitempty"`
	// Message says why, for humans.
	Message string `json:"message,omitempty"`
}

// String encodes the record for the annotation.
func (r RolloutProgress) String() string {
	r.ProgressAt = r.ProgressAt.UTC().Truncate(time.Second)
	b, err := json.Marshal(r)
	if err != nil {
		return ""
	}
	return string(b)
}

// ParseRolloutProgress reads the annotation's record; false when there is
// none or it cannot be read (the engine then starts a new one).
func ParseRolloutProgress(s string) (RolloutProgress, bool) {
	if s == "" {
		return RolloutProgress{}, false
	}
	var r RolloutProgress
	if err := json.Unmarshal([]byte(s), &r); err != nil || r.Model == "" {
		return RolloutProgress{}, false
	}
	return r, true
}

// SelfPaused returns the reason and message of a pause the engine set on
// the rollout of a pool with these annotations, empty when there is none.
func SelfPaused(poolAnnotations map[string]string) (reason, message string) {
	r, ok := ParseRolloutProgress(poolAnnotations[RolloutProgressAnnotation])
	if !ok {
		return "", ""
	}
	return r.Paused, r.Message
}
