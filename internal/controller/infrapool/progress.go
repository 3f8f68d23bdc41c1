package infrapool

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
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
	// held counts the live instances of model the cloud holds before
	// their boot (scalegroup.Instance.Held: a launch lifecycle hook).
	held int32
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
// have their own bound, nodeDrainTimeout) or the cloud holds an instance of
// the new model before its boot (a launch lifecycle hook, bounded by its
// heartbeat timeout) or one is Ready, not yet for minReadySeconds, the
// deadline is held. A new
// model starts a new record, which lifts a pause the engine set; so does
// removing the record. While the rollout is not active (paused by the
// user, Nodes unknown) the deadline does not run: the record is dropped,
// unless it holds the engine's own pause. The failed instances counted
// are consecutive: an instance of the new model becoming available
// clears them; the failed instances already there when a record starts
// (kept through a pause, then resumed) are not counted again.
func nextProgress(prev *preview.RolloutProgress, o progressObservation, p preview.ProgressPolicy) progressDecision {
	if !o.rolling {
		return progressDecision{}
	}
	var d progressDecision
	var rec preview.RolloutProgress
	fresh := prev == nil || prev.Model != o.model
	switch {
	case fresh:
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
	// Removals in flight, instances the cloud holds and new instances
	// Ready but not yet for minReadySeconds (which may be longer than the
	// deadline) have their own bounds: the deadline waits for them.
	waiting := o.removing > 0 || o.held > 0 || len(o.warming) > 0
	if o.available > rec.Available || o.stale < rec.Stale || (waiting && o.now.Sub(rec.ProgressAt) >= time.Minute) {
		rec.ProgressAt = o.now
	}
	rec.Available, rec.Stale = o.available, o.stale
	failed := o.failed
	if fresh {
		// A new record (a new model, or a resume that removed the record)
		// counts the failures that happen from now on: the failed instances
		// still there (kept while the engine paused) go in this pass.
		failed = nil
	}
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
	case rec.Blocked:
		// The cloud refuses the model: blocked, not stalled (see
		// noteBlocked); the refusal is asked again every QuotaRetry.
		return d
	case p.Deadline > 0 && !waiting && !o.now.Before(rec.ProgressAt.Add(p.Deadline)):
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
// input; joined holds the instances that have a Node, held those the
// cloud holds before their boot, by ID.
func observeProgress(in rollout.Input, joined, held map[string]bool) progressObservation {
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
		if current && held[inst.ID] {
			o.held++
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
	owner := s.ownerObject()
	policy, err := preview.ReadProgressPolicy(owner, s.pool)
	s.progressErr = err
	var prev *preview.RolloutProgress
	if r, ok := preview.ParseRolloutProgress(s.pool.GetAnnotations()[preview.RolloutProgressAnnotation]); ok {
		prev = &r
	}
	e.creditPause(s, prev)
	if prev != nil && prev.Paused == "" && prev.ProgressAt.Before(e.startedAt) {
		// Written before this manager started: the time no manager ran
		// is not time the rollout stalled (one write, on the first pass).
		prev.ProgressAt = e.startedAt
	}
	joined, held := map[string]bool{}, map[string]bool{}
	if s.cloud != nil {
		for _, in := range s.cloud.Instances {
			if s.nodes[in.ProviderID] != nil {
				joined[in.ID] = true
			}
			if in.Held {
				held[in.ID] = true
			}
		}
	}
	o := observeProgress(s.input, joined, held)
	if s.windowHold != "" || blueGreenOwnsDeadline(s) {
		// Waiting for the maintenance window is not a stall, nor are a
		// blue-green rollout's drains and soaks: nothing is created then.
		o.active = false
	}
	d := nextProgress(prev, o, policy)
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
	if d.record.Paused != infrav1.DrainBlockedReason {
		// Rolling back would drain the same Nodes.
		e.rollBack(ctx, s, d.record, d.newlyPaused)
	}
}

// notePaused remembers when this process first saw the reconciliation of
// pool paused (by its Cluster or its own paused annotation; nothing is
// read or written then), once per pause.
func (e *Engine) notePaused(pool types.UID) {
	if e.pausedSince == nil {
		return
	}
	if _, ok := e.pausedSince.get(pool); !ok {
		e.pausedSince.set(pool, e.clock.Now())
	}
}

// creditPause moves the last progress of prev forward by the time the
// pool's reconciliation was paused (see notePaused): a rollout cannot make
// progress while nothing reconciles it (clusterctl move pauses the
// Cluster), and must not pause itself at once when it is unpaused.
func (e *Engine) creditPause(s *pass, prev *preview.RolloutProgress) {
	if e.pausedSince == nil {
		return
	}
	since, ok := e.pausedSince.get(s.pool.GetUID())
	if !ok {
		return
	}
	e.pausedSince.forget(s.pool.GetUID())
	if prev == nil || prev.Paused != "" || !since.After(prev.ProgressAt) || !s.now.After(since) {
		return
	}
	prev.ProgressAt = prev.ProgressAt.Add(s.now.Sub(since))
}

// noteBlocked keeps on the progress record whether the cloud refuses the
// pool's model (s.blocked, see applySpec): a blocked rollout is asked again
// every QuotaRetry and goes on by itself once the cloud accepts (an image
// published later), so the progress deadline must not pause it meanwhile.
// When the cloud accepts the model, the deadline starts again. It runs after
// act and writes only when the blocked state changes.
func (e *Engine) noteBlocked(s *pass) {
	if e.cloudRollouts() {
		return
	}
	a := s.pool.GetAnnotations()
	r, ok := preview.ParseRolloutProgress(a[preview.RolloutProgressAnnotation])
	if !ok || r.Model != s.modelHash || r.Paused != "" {
		return
	}
	switch g := s.currentGroup(); {
	case s.blocked != nil && !r.Blocked:
		r.Blocked = true
	case s.blocked == nil && r.Blocked && g != nil && g.ModelHash == s.modelHash:
		r.Blocked, r.ProgressAt = false, s.now
	default:
		return
	}
	s.pool.SetAnnotations(withEntry(a, preview.RolloutProgressAnnotation, r.String()))
}

// withoutEntry returns m without key: a copy, as withEntry.
func withoutEntry(m map[string]string, key string) map[string]string {
	out := maps.Clone(m)
	delete(out, key)
	return out
}
