package infrapool

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/events"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/rollout"
)

// progressObservation is what one reconcile tells about a rollout's
// progress.
type progressObservation struct {
	// model is the pool's current model hash.
	model string
	// rolling: live instances on an older model are to be replaced.
	rolling bool
	// active: the engine acts on the plan (not paused by the user, the
	// workload cluster's Nodes and the bootstrap data are known).
	active bool
	// available counts the live instances of model that are available.
	available int32
	// stale counts the live instances on an older model.
	stale int32
	// removing counts the instances whose removal is in flight.
	removing int32
	// failed are the instances of model that failed: the cloud gave up on
	// them, or they never joined within the join timeout.
	failed []string
	// warming are the live instances of model whose Node is Ready, not yet
	// for minReadySeconds; notReady those whose Node is not Ready. One
	// that was warming and is not Ready failed.
	warming, notReady []string
	now               time.Time
}

// progressDecision is what nextProgress decided.
type progressDecision struct {
	// record is the record to keep on the pool, nil for none.
	record *preview.RolloutProgress
	// paused: the engine pauses the rollout (newly: this reconcile).
	paused, newlyPaused bool
	// resumed: a pause the engine had set is lifted by a new model.
	resumed bool
	// requeueAfter is when the deadline passes, if nothing happens before.
	requeueAfter time.Duration
}

// nextProgress decides, from the last record and this observation, whether
// the rollout has made progress or must pause itself. It is pure.
//
// Progress is an instance of the new model becoming available, or an old
// one going (its removal starting); while removals are in flight (drains
// have their own bound, nodeDrainTimeout) the deadline is held. A new
// model starts a new record, which lifts a pause the engine set; so does
// removing the record. While the rollout is not active (paused by the
// user, Nodes unknown) the deadline does not run: the record is dropped,
// unless it holds the engine's own pause. The failed instances counted
// are consecutive: an instance of the new model becoming available
// clears them.
func nextProgress(prev *preview.RolloutProgress, o progressObservation, p preview.ProgressPolicy) progressDecision {
	if !o.rolling {
		return progressDecision{}
	}
	var d progressDecision
	var rec preview.RolloutProgress
	switch {
	case prev == nil || prev.Model != o.model:
		d.resumed = prev != nil && prev.Paused != ""
		rec = preview.RolloutProgress{Model: o.model, ProgressAt: o.now, Available: o.available, Stale: o.stale}
	default:
		rec = *prev
		rec.Failed = slices.Clone(prev.Failed)
	}
	if rec.Paused != "" {
		d.record, d.paused = &rec, true
		return d
	}
	if !o.active {
		return d
	}
	if o.available > rec.Available {
		rec.Failed = nil
	}
	if o.available > rec.Available || o.stale < rec.Stale || (o.removing > 0 && o.now.Sub(rec.ProgressAt) >= time.Minute) {
		rec.ProgressAt = o.now
	}
	rec.Available, rec.Stale = o.available, o.stale
	failed := o.failed
	for _, id := range o.notReady {
		if slices.Contains(rec.Warming, id) {
			failed = append(failed, id)
		}
	}
	rec.Warming = o.warming
	for _, id := range failed {
		if !slices.Contains(rec.Failed, id) {
			rec.Failed = append(rec.Failed, id)
		}
	}
	if p.MaxFailed > 0 && len(rec.Failed) > p.MaxFailed {
		rec.Failed = rec.Failed[len(rec.Failed)-p.MaxFailed:]
	}
	d.record = &rec
	switch {
	case p.MaxFailed > 0 && len(rec.Failed) >= p.MaxFailed:
		rec.Paused = infrav1.ReplacementsFailingReason
		rec.Message = fmt.Sprintf("%d consecutive instances of model %s failed (%s): they did not boot, never joined the cluster, or went NotReady before they were available",
			len(rec.Failed), o.model, strings.Join(rec.Failed, ", "))
	case p.Deadline > 0 && o.removing == 0 && !o.now.Before(rec.ProgressAt.Add(p.Deadline)):
		rec.Paused = infrav1.ProgressDeadlineExceededReason
		rec.Message = fmt.Sprintf("no instance of model %s became available and no old instance was replaced for %s (progress deadline %s); %d of the new model available, %d old",
			o.model, o.now.Sub(rec.ProgressAt).Truncate(time.Second), p.Deadline, o.available, o.stale)
	case p.Deadline > 0:
		d.requeueAfter = rec.ProgressAt.Add(p.Deadline).Sub(o.now)
		return d
	default:
		return d
	}
	d.paused, d.newlyPaused = true, true
	return d
}

// observeProgress reads the progress of the rollout from the planner's
// input; joined holds the instances that have a Node, by ID.
func observeProgress(in rollout.Input, joined map[string]bool) progressObservation {
	o := progressObservation{model: in.ModelHash, active: !in.Paused, now: in.Now}
	minReady := time.Duration(in.Strategy.MinReadySeconds) * time.Second
	for _, inst := range in.Instances {
		current := inst.ModelHash == in.ModelHash
		switch inst.State {
		case rollout.StateFailed:
			if current {
				o.failed = append(o.failed, inst.ID)
			}
			continue
		case rollout.StateDeleting:
			o.removing++
			continue
		}
		switch {
		case !current:
			o.stale++
		case inst.ReadySince != nil && !in.Now.Before(inst.ReadySince.Add(minReady)):
			o.available++
		case inst.ReadySince != nil:
			o.warming = append(o.warming, inst.ID)
		case joined[inst.ID]:
			o.notReady = append(o.notReady, inst.ID)
		}
	}
	slices.Sort(o.failed)
	slices.Sort(o.warming)
	slices.Sort(o.notReady)
	o.rolling = o.stale > 0 && !in.SkipModelReconciliation
	return o
}

// trackProgress keeps the rollout's progress record on the pool and pauses
// the rollout when it stopped making progress (see nextProgress). It runs
// before the plan: a pause it sets pauses this plan.
func (e *Engine) trackProgress(ctx context.Context, s *pass) {
	if e.cloudRollouts() {
		// The cloud runs the rollout, and its own deadlines.
		return
	}
	var owner metav1.Object
	if s.owner != nil {
		owner = s.owner
	}
	policy, err := preview.ReadProgressPolicy(owner, s.pool)
	s.progressErr = err
	var prev *preview.RolloutProgress
	if r, ok := preview.ParseRolloutProgress(s.pool.GetAnnotations()[preview.RolloutProgressAnnotation]); ok {
		prev = &r
	}
	joined := map[string]bool{}
	if s.cloud != nil {
		for _, in := range s.cloud.Instances {
			if s.nodes[in.ProviderID] != nil {
				joined[in.ID] = true
			}
		}
	}
	d := nextProgress(prev, observeProgress(s.input, joined), policy)
	s.requeueAfter(d.requeueAfter)
	a := s.pool.GetAnnotations()
	switch {
	case d.record == nil && prev != nil:
		a = withoutEntry(a, preview.RolloutProgressAnnotation)
	case d.record != nil && a[preview.RolloutProgressAnnotation] != d.record.String():
		a = withEntry(a, preview.RolloutProgressAnnotation, d.record.String())
	}
	s.pool.SetAnnotations(a)
	logger := log.FromContext(ctx)
	if d.resumed {
		logger.Info("A new model resumes the rollout the engine had paused", "modelHash", s.modelHash)
		e.rec.Eventf(s.pool, nil, corev1.EventTypeNormal, events.RolloutResumed, events.ActionReconcile,
			"The template changed to model %s: the rollout the engine had paused (%s) goes on", s.modelHash, prev.Paused)
	}
	if !d.paused {
		return
	}
	s.selfPaused = d.record
	s.input.Paused = true
	if d.newlyPaused {
		logger.Info("Pausing the rollout: it stopped making progress", "reason", d.record.Paused, "message", d.record.Message)
		reason := events.ProgressDeadlineExceeded
		if d.record.Paused == infrav1.ReplacementsFailingReason {
			reason = events.ReplacementsFailing
		}
		e.rec.Eventf(s.pool, nil, corev1.EventTypeWarning, reason, events.ActionReconcile,
			"Rollout paused by the engine: %s. The old instances are kept and nothing more is deleted", d.record.Message)
	}
}

// withoutEntry returns m without key: a copy, as withEntry.
func withoutEntry(m map[string]string, key string) map[string]string {
	out := maps.Clone(m)
	delete(out, key)
	return out
}
