package infrapool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mpool-dev/mpool/internal/drain"
	"github.com/mpool-dev/mpool/internal/events"
	"github.com/mpool-dev/mpool/internal/parallel"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/rollout"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// act applies the plan: victims are marked, cordoned and drained, then
// deleted from the cloud in one call; then the group's model and capacity
// are applied. Nothing is done while the plan is paused.
func (e *Engine) act(ctx context.Context, s *pass) error {
	if s.input.Paused {
		return nil
	}
	defer e.noteBlocked(s)
	if s.managedBy != "" {
		defer e.recordManagedCapacity(s)
	}
	remErr := e.remediate(ctx, s)
	if err := e.actBlueGreen(ctx, s); err != nil {
		// Nothing is deleted while a blue Node that must serve again
		// could not be made schedulable.
		return errors.Join(remErr, err)
	}
	if proven, err := e.proveModel(ctx, s); !proven {
		// Nothing is deleted to make room for a model the cloud has not
		// accepted; a blocked rollout still removes failed and marked
		// instances.
		e.holdStaleVictims(s)
		if s.blocked == nil {
			return errors.Join(remErr, err)
		}
	}
	if err := e.removeVictims(ctx, s); err != nil || s.halt {
		// A deletion the cloud refused (throttled, over quota) stops the
		// pass: the capacity still counts those instances.
		return errors.Join(remErr, err)
	}
	if s.blocked != nil {
		// The cloud would refuse the model again.
		return remErr
	}
	return errors.Join(remErr, e.applyGroup(ctx, s))
}

// proveModel makes sure the cloud can create instances of the pool's
// current model before any instance is deleted to make room for them. The
// model is proven when the group already has it (the cloud accepted it
// when it was applied) or an instance of it lives; otherwise, when the plan
// would delete stale instances, the model is applied first with the
// group's capacity unchanged, so that the cloud's own validation (an AMI
// lookup, a launch template, an image reference) speaks before anything is
// deleted. With maxSurge 0 no instance of the new model can exist before
// the first deletion: the cloud's acceptance is the proof.
//
// It reports whether the plan's stale victims may go. When the cloud
// refuses the model as invalid the rollout is blocked (s.blocked): the
// instances on the previous model keep serving.
func (e *Engine) proveModel(ctx context.Context, s *pass) (bool, error) {
	if e.cloudRollouts() || s.cloud == nil || modelProven(s) || !replacesStale(s.plan) {
		return true, nil
	}
	if err := e.applySpec(ctx, s, s.cloud.Capacity); err != nil || s.blocked != nil || s.latest == nil {
		return false, err
	}
	// The victims and the capacity are still reckoned from Get's
	// instances (Apply's answer need not list them); applyGroup then
	// applies the plan's capacity with the model the cloud just accepted.
	s.latest = nil
	log.FromContext(ctx).Info("The cloud accepted the new model; replacing stale instances", "group", s.group.String(), "modelHash", s.modelHash)
	return true, nil
}

// modelProven reports whether the cloud is known to create instances of
// the pool's current model: the group has it, or a live instance runs it.
func modelProven(s *pass) bool {
	g := s.currentGroup()
	if g == nil {
		return false
	}
	if g.ModelHash == s.modelHash {
		return true
	}
	for _, in := range g.Instances {
		if in.ModelHash == s.modelHash && in.State != scalegroup.StateFailed && in.State != scalegroup.StateDeleting {
			return true
		}
	}
	return false
}

// modelChange reports whether the pool asks a group that still has live
// instances for another model than the one it has: a rollout, whose
// refusal by the cloud leaves those instances serving.
func modelChange(s *pass) bool {
	g := s.cloud
	if g == nil || g.ModelHash == s.modelHash {
		return false
	}
	for _, in := range g.Instances {
		if in.State != scalegroup.StateFailed && in.State != scalegroup.StateDeleting {
			return true
		}
	}
	return false
}

// replacesStale reports whether plan deletes instances because they run an
// older model.
func replacesStale(plan rollout.Result) bool {
	for _, v := range plan.Delete {
		if v.Reason == rollout.ReasonStale {
			return true
		}
	}
	return false
}

// holdStaleVictims keeps the plan's stale victims this pass.
func (e *Engine) holdStaleVictims(s *pass) {
	for _, v := range s.plan.Delete {
		if v.Reason == rollout.ReasonStale {
			s.skipRemoval[v.ID] = true
		}
	}
}

// recordManagedCapacity records, for a pool whose replicas an external actor
// manages, the capacity the engine leaves the group at and the replicas it
// planned for (see externalReplicas): in memory, and on the pool, which is
// patched at the end of the reconcile.
func (e *Engine) recordManagedCapacity(s *pass) {
	var capacity int32
	switch {
	case s.latest != nil:
		capacity = s.latest.Capacity
	case s.cloud != nil:
		// DeleteInstances lowered the capacity by one per instance deleted.
		capacity = s.cloud.Capacity - s.decremented()
	default:
		return
	}
	rec := preview.ManagedCapacity{Capacity: capacity, Replicas: s.replicas}
	e.managed.set(s.pool.GetUID(), rec)
	a := s.pool.GetAnnotations()
	if a[preview.ManagedCapacityAnnotation] == rec.String() {
		return
	}
	if a == nil {
		a = map[string]string{}
	}
	a[preview.ManagedCapacityAnnotation] = rec.String()
	s.pool.SetAnnotations(a)
}

// cloudRollouts reports whether the cloud replaces out-of-date instances
// itself (see scalegroup.Capabilities).
func (e *Engine) cloudRollouts() bool { return e.caps.CloudRollouts }

// victims returns the plan's victims the engine removes itself: those the
// cloud is not already deleting and, when the cloud runs its own rollouts
// and picks its own victims on a scale-down, only those a user marked for
// deletion or a MachineHealthCheck found unhealthy.
func (e *Engine) victims(s *pass, byID map[string]scalegroup.Instance) []rollout.Victim {
	var victims []rollout.Victim
	for _, v := range s.plan.Delete {
		in, ok := byID[v.ID]
		if !ok || in.State == scalegroup.StateDeleting || s.skipRemoval[v.ID] {
			continue
		}
		if e.cloudRollouts() && v.Reason != rollout.ReasonMarked && v.Reason != rollout.ReasonRemediate {
			continue
		}
		victims = append(victims, v)
	}
	return victims
}

// removeVictims drains the plan's victims and deletes those that are ready
// to go. Victims the cloud is already deleting need nothing more.
func (e *Engine) removeVictims(ctx context.Context, s *pass) error {
	current := s.instances()
	byID := make(map[string]scalegroup.Instance, len(current))
	for _, in := range current {
		byID[in.ID] = in
	}
	victims := e.victims(s, byID)
	if len(victims) == 0 {
		return nil
	}

	var started []rollout.Victim
	for _, v := range victims {
		if _, ok := e.removalStart(s, v.ID); !ok {
			started = append(started, v)
			if s.joinTimedOut[v.ID] {
				in := byID[v.ID]
				log.FromContext(ctx).Info("Replacing an instance that has not joined the cluster", "instance", v.ID, "joinTimeout", s.joinTimeout, "cloudMessage", in.Message)
				e.event(s, s.objects[v.ID], corev1.EventTypeWarning, events.NodeStartupTimeout, events.ActionDelete, "%s", notJoinedMessage(s, in))
			}
		}
	}
	if len(started) > 0 {
		e.rec.Eventf(s.pool, nil, corev1.EventTypeNormal, events.DrainStarted, events.ActionDrain,
			"Removing %d instances: %s", len(started), summarizeVictims(started))
	}
	var (
		mu       sync.Mutex
		toDelete []string
	)
	err := e.parallel(ctx, len(victims), func(ctx context.Context, i int) error {
		v := victims[i]
		ready, err := e.prepareRemoval(ctx, s, byID[v.ID], v.Reason, &mu)
		if ready {
			mu.Lock()
			toDelete = append(toDelete, v.ID)
			mu.Unlock()
		}
		return err
	})
	errs := []error{err}
	reasons := make(map[string]rollout.DeleteReason, len(victims))
	for _, v := range victims {
		reasons[v.ID] = v.Reason
	}
	var toReplace []string
	toDelete = slices.DeleteFunc(toDelete, func(id string) bool {
		if e.replaces(reasons[id]) {
			toReplace = append(toReplace, id)
			return true
		}
		return false
	})
	if len(toReplace) > 0 {
		if err := e.replaceInstances(ctx, s, toReplace); err != nil {
			errs = append(errs, err)
			s.halt = true
			return errors.Join(errs...)
		}
	}
	if len(toDelete) == 0 {
		return errors.Join(errs...)
	}
	slices.Sort(toDelete)
	if err := e.sg.DeleteInstances(ctx, s.group, toDelete); err != nil {
		// Nothing is known to be deleted: the capacity keeps counting them.
		errs = append(errs, e.cloudError(ctx, s, events.ActionDelete, fmt.Errorf("deleting instances %s of scale group %s: %w", strings.Join(toDelete, ", "), s.group, err)))
		s.halt = true
		return errors.Join(errs...)
	}
	for _, id := range toDelete {
		s.deletedNow[id] = true
	}
	log.FromContext(ctx).Info("Deleted instances", "group", s.group.String(), "instances", toDelete)
	e.rec.Eventf(s.pool, nil, corev1.EventTypeNormal, events.InstancesDeleted, events.ActionDelete,
		"Deleted %d instances: %s", len(toDelete), summarize(toDelete))
	return errors.Join(errs...)
}

// replaces reports whether a victim removed for reason is replaced by the
// cloud (scalegroup.Replacer) rather than deleted: an unhealthy instance
// of a cloud that runs its own rollouts and cannot delete a chosen one
// (an EKS managed node group) but can replace it.
func (e *Engine) replaces(reason rollout.DeleteReason) bool {
	return reason == rollout.ReasonRemediate && e.caps.CloudRollouts && e.caps.ReplaceInstances
}

// replaceInstances has the cloud terminate and replace the instances
// with these IDs (scalegroup.Replacer), the group's capacity unchanged.
func (e *Engine) replaceInstances(ctx context.Context, s *pass, ids []string) error {
	slices.Sort(ids)
	if err := e.sg.ReplaceInstances(ctx, s.group, ids); errors.Is(err, errCannotReplace) {
		return fmt.Errorf("replacing instances %s of scale group %s: %w", strings.Join(ids, ", "), s.group, err)
	} else if err != nil {
		return e.cloudError(ctx, s, events.ActionDelete, fmt.Errorf("replacing instances %s of scale group %s: %w", strings.Join(ids, ", "), s.group, err))
	}
	for _, id := range ids {
		s.deletedNow[id] = true
		s.replacedNow[id] = true
	}
	log.FromContext(ctx).Info("Terminated instances for the cloud to replace", "group", s.group.String(), "instances", ids)
	e.rec.Eventf(s.pool, nil, corev1.EventTypeNormal, events.InstancesDeleted, events.ActionDelete,
		"Terminated %d instances, which the cloud replaces: %s", len(ids), summarize(ids))
	return nil
}

// prepareRemoval marks inst as being removed and drains its Node. It
// reports whether the instance can be deleted from the cloud now: its Node
// is drained, or gone, or the drain timed out. When it cannot, the start of
// the removal is recorded on the per-instance object, so that a manager
// restarted meanwhile keeps the drain's deadline; a removal that finishes
// in its first pass (no Node, or nothing to evict) deletes the instance
// without that write: a roll of a thousand spent a write per instance on it,
// a quarter of each wave's time behind the client's rate limit.
func (e *Engine) prepareRemoval(ctx context.Context, s *pass, inst scalegroup.Instance, reason rollout.DeleteReason, mu *sync.Mutex) (bool, error) {
	started := e.markRemoval(s, inst.ID, mu)
	node := s.nodes[inst.ProviderID]
	if node == nil {
		return true, nil
	}
	obj := s.objects[inst.ID]
	res, err := e.drainNode(ctx, s, node, started)
	mu.Lock()
	s.drains[inst.ID] = drainOutcome{result: res, err: err}
	mu.Unlock()
	logger := log.FromContext(ctx).WithValues("instance", inst.ID, "node", node.Name, "reason", reason)
	timeout := drainTimeout(s)
	expired := timeout > 0 && !s.now.Before(started.Add(timeout))
	switch {
	case err != nil && !expired:
		logger.Info("Drain failed, will retry", "error", err.Error())
		e.event(s, obj, corev1.EventTypeWarning, events.DrainFailed, events.ActionDrain, "Draining Node %s failed: %v", node.Name, err)
		mu.Lock()
		s.requeueAfter(e.timing.Drain)
		mu.Unlock()
		return false, e.recordRemoval(ctx, obj, started)
	case (err != nil || res.TimedOut) && e.voluntary(s, inst.ID, reason) && s.undrainable != preview.UndrainableDelete && obj != nil:
		return false, e.keepUndrainable(ctx, s, inst, node, drainMessage(res, err), res, mu)
	case err != nil || res.TimedOut:
		msg := fmt.Sprintf("Node %s was not drained within %s (%s); deleting instance %s anyway", node.Name, timeout, drainMessage(res, err), inst.ID)
		logger.Info("Drain timed out, deleting the instance anyway", "timeout", timeout)
		e.event(s, obj, corev1.EventTypeWarning, events.DrainTimeout, events.ActionDrain, "%s", msg)
		return true, nil
	case !res.Done:
		logger.V(1).Info("Waiting for the drain", "remaining", len(res.Remaining), "blocked", len(res.Blocked))
		mu.Lock()
		s.requeueAfter(e.timing.Drain)
		mu.Unlock()
		return false, e.recordRemoval(ctx, obj, started)
	}
	return true, nil
}

// markRemoval notes in memory that the removal of instance id started (at
// the recorded start when there is one) and returns when it started; the
// first time, it says so in an event on the per-instance object.
func (e *Engine) markRemoval(s *pass, id string, mu *sync.Mutex) time.Time {
	started, known := e.removalStart(s, id)
	if !known {
		started = s.now
	}
	e.tracker.start(s.pool.GetUID(), id, started)
	mu.Lock()
	s.removing[id] = started
	mu.Unlock()
	if obj := s.objects[id]; !known && obj != nil {
		e.rec.Eventf(obj, nil, corev1.EventTypeNormal, events.DrainStarted, events.ActionDrain, "Removing instance %s: cordoning and draining its Node", id)
	}
	return started
}

// recordRemoval records on obj when its instance's removal started, once.
func (e *Engine) recordRemoval(ctx context.Context, obj contract.InstanceObject, started time.Time) error {
	if obj == nil || preview.HasAnnotation(obj.GetAnnotations(), preview.DrainStartedAnnotation) {
		return nil
	}
	return e.annotateRemoval(ctx, obj, started)
}

func (e *Engine) annotateRemoval(ctx context.Context, obj contract.InstanceObject, started time.Time) error {
	return e.patchInstanceMeta(ctx, obj, "marking for removal", func(after contract.InstanceObject) {
		after.SetAnnotations(withEntry(after.GetAnnotations(), preview.DrainStartedAnnotation, started.UTC().Format(time.RFC3339)))
	})
}

// drainNode makes one drain pass over node.
func (e *Engine) drainNode(ctx context.Context, s *pass, node *corev1.Node, started time.Time) (drain.Result, error) {
	cs, err := e.clientsets.get(ctx, s.cluster)
	if err != nil {
		return drain.Result{}, err
	}
	return drain.Node(ctx, cs, node, drain.Options{StartedAt: started, Now: s.now, Timeout: drainTimeout(s)})
}

// drainTimeout is the MachinePool template's nodeDrainTimeout; zero waits
// for the drain without bound.
func drainTimeout(s *pass) time.Duration { return preview.NodeDrainTimeout(s.owner) }

func drainMessage(res drain.Result, err error) string {
	if err != nil {
		return err.Error()
	}
	return res.Message()
}

// applyGroup creates the group or brings its model and capacity to the
// plan's, when they differ from what the cloud has.
func (e *Engine) applyGroup(ctx context.Context, s *pass) error {
	if !s.bootstrap {
		// New instances could not join; wait for the bootstrap provider.
		return nil
	}
	// The capacity never lets the cloud pick a victim; a cloud that runs its
	// own rollouts surges, replaces and picks victims itself: it gets the
	// replicas, and one change at a time.
	var want int32
	if !e.cloudRollouts() {
		want = capacity(s.plan, s.input, s.instances(), s.deletedNow)
	} else {
		want = s.replicas
		if g := s.cloud; g.Pending() {
			log.FromContext(ctx).V(1).Info("Waiting for the cloud's own change to finish", "operation", g.Operation.Type, "message", g.Operation.Message)
			s.requeueAfter(e.timing.Converging)
			return nil
		}
	}
	endRetries(s)
	if g := s.cloud; g != nil && g.Failed {
		return e.retryFailed(ctx, s, want)
	}
	if g := s.cloud; g != nil {
		have := g.Capacity - s.decremented()
		last, _ := e.applied.get(s.pool.GetUID())
		applied := s.pool.GetAnnotations()[AppliedSpecAnnotation] == s.specHash || last == s.specHash
		if have == want && g.ModelHash == s.modelHash && applied {
			return nil
		}
	}
	return e.applySpec(ctx, s, want)
}

// applySpec applies the pool's model with capacity want. A model the cloud
// refuses as invalid while the group serves instances of an older one
// blocks the rollout (s.blocked) instead of failing the pool: those
// instances keep serving, and the refusal is retried every
// Timing.QuotaRetry (an image may be published later).
func (e *Engine) applySpec(ctx context.Context, s *pass, want int32) error {
	spec := scalegroup.GroupSpec{Capacity: want, Model: s.desired.Model, ModelHash: s.modelHash}
	g, err := e.sg.Apply(ctx, s.group, spec)
	if err != nil {
		err = fmt.Errorf("applying scale group %s: %w", s.group, err)
		if scalegroup.IsInvalid(err) && modelChange(s) {
			s.blocked = err
			log.FromContext(ctx).Info("The cloud refuses the new model; the rollout is blocked", "modelHash", s.modelHash, "error", err.Error())
			e.rec.Eventf(s.pool, nil, corev1.EventTypeWarning, events.RolloutBlocked, events.ActionApply,
				"Rollout blocked: the cloud cannot create instances of model %s (%v); no instance is deleted for it", s.modelHash, err)
			s.requeueAfter(e.timing.QuotaRetry)
			return nil
		}
		return e.cloudError(ctx, s, events.ActionApply, err)
	}
	s.latest = g
	e.applied.set(s.pool.GetUID(), s.specHash)
	a := s.pool.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[AppliedSpecAnnotation] = s.specHash
	s.pool.SetAnnotations(a)
	log.FromContext(ctx).Info("Applied scale group", "group", s.group.String(), "capacity", want, "modelHash", s.modelHash)
	note := ""
	if s.retrying > 0 {
		note = fmt.Sprintf(" (retry %d of the change the cloud gave up on)", s.retrying)
	}
	e.rec.Eventf(s.pool, nil, corev1.EventTypeNormal, events.ScaleGroupApplied, events.ActionApply,
		"Applied scale group %s: capacity %d, model %s%s", s.group, want, s.modelHash, note)
	return nil
}

// deleteNode deletes a workload-cluster Node; a Node already gone is fine.
func deleteNode(ctx context.Context, cs kubernetes.Interface, name string) error {
	err := cs.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Node %s: %w", name, err)
	}
	return nil
}

// parallel runs fn for 0..n-1 on at most e.workers goroutines and joins the
// errors.
func (e *Engine) parallel(ctx context.Context, n int, fn func(context.Context, int) error) error {
	return parallel.ForEach(ctx, e.workers, n, fn)
}

// event records an event on the pool and, when obj is not nil, on obj too.
func (e *Engine) event(s *pass, obj contract.InstanceObject, eventType, reason, action, format string, args ...any) {
	e.rec.Eventf(s.pool, nil, eventType, reason, action, format, args...)
	if obj != nil {
		e.rec.Eventf(obj, nil, eventType, reason, action, format, args...)
	}
}

func summarizeVictims(victims []rollout.Victim) string {
	ids := make([]string, len(victims))
	for i, v := range victims {
		ids[i] = fmt.Sprintf("%s (%s)", v.ID, v.Reason)
	}
	return summarize(ids)
}

func summarize(ids []string) string {
	const show = 10
	if len(ids) <= show {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:show], ", ") + fmt.Sprintf(" and %d more", len(ids)-show)
}
