package infrapool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mpool-dev/mpool/internal/events"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/rollout"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// blueGreenOwnsDeadline reports whether the pool's blue-green rollout is
// in a phase whose waits are its own (cordoning, draining in batches,
// soaking): the progress deadline does not run there, as no instance is
// created or replaced.
func blueGreenOwnsDeadline(s *pass) bool {
	r, ok := preview.ParseBlueGreen(s.pool.GetAnnotations()[preview.BlueGreenAnnotation])
	if !ok || r.Green != s.modelHash {
		return false
	}
	switch r.Phase {
	case rollout.PhaseCordoningBlue, rollout.PhaseDrainingBlue, rollout.PhaseSoaking:
		return true
	}
	return false
}

// planBlueGreen runs the blue-green step after the rolling planner, for a
// pool whose strategy is BlueGreen (preview.RolloutStrategyAnnotation):
// while the step owns the phase, its capacity and victims replace the
// rolling planner's; in DeletingBluePool and RollingBack the rolling plan
// stands. A pool whose strategy changed away from BlueGreen mid-rollout
// gets its blue Nodes back and continues as a rolling update.
func (e *Engine) planBlueGreen(ctx context.Context, s *pass) {
	if e.cloudRollouts() || s.cloud == nil {
		return
	}
	owner := s.ownerObject()
	settings, err := preview.ReadBlueGreen(owner, s.pool)
	s.blueGreenErr = err
	prev, _ := preview.ParseBlueGreen(s.pool.GetAnnotations()[preview.BlueGreenAnnotation])
	if settings == nil {
		if prev != nil {
			all := make([]string, 0, len(s.cloud.Instances))
			for _, in := range s.cloud.Instances {
				all = append(all, in.ID)
			}
			// Removed once the blue Nodes serve again (actBlueGreen).
			s.blueGreen = &rollout.BlueGreenStep{Uncordon: all, Completed: true}
			s.blueGreenAbandoned = true
		}
		return
	}
	step, err := rollout.PlanBlueGreen(rollout.BlueGreenInput{Input: s.input, Settings: *settings, Record: prev})
	if err != nil {
		log.FromContext(ctx).Error(err, "Planning the blue-green rollout")
		s.blueGreenErr = errors.Join(s.blueGreenErr, err)
		return
	}
	s.blueGreen, s.blueGreenSettings = &step, *settings
	if step.Own && !s.input.Paused {
		p := &s.plan
		p.TargetCapacity, p.Delete, p.Done = step.TargetCapacity, step.Delete, false
		p.SurgeInUse = max(0, step.TargetCapacity-s.input.Desired)
		p.Waiting = []rollout.Wait{step.Wait}
		if d := step.RequeueAfter; d > 0 && (p.RequeueAfter == 0 || d < p.RequeueAfter) {
			p.RequeueAfter = d
		}
	}
	e.storeBlueGreen(ctx, s)
}

// storeBlueGreen keeps the step's record on the pool (patched at the end
// of the reconcile) and announces a new phase or the end.
func (e *Engine) storeBlueGreen(ctx context.Context, s *pass) {
	step := s.blueGreen
	a := s.pool.GetAnnotations()
	prev, had := preview.ParseBlueGreen(a[preview.BlueGreenAnnotation])
	logger := log.FromContext(ctx)
	switch {
	case step.Record == nil && had:
		s.pool.SetAnnotations(withoutEntry(a, preview.BlueGreenAnnotation))
		msg := fmt.Sprintf("Blue-green rollout of model %s complete: the blue set (model %s) is deleted", prev.Green, prev.Blue)
		switch {
		case s.blueGreenAbandoned:
			msg = fmt.Sprintf("The pool's strategy is no longer BlueGreen: the blue-green rollout of model %s ends, its blue Nodes serve again and the rest rolls as a rolling update", prev.Green)
		case prev.Phase == rollout.PhaseRollingBack || s.modelHash != prev.Green:
			msg = fmt.Sprintf("Blue-green rollout of model %s rolled back: the pool runs model %s on its blue instances, the green ones are deleted", prev.Green, s.modelHash)
		}
		logger.Info(msg)
		e.rec.Eventf(s.pool, nil, corev1.EventTypeNormal, events.BlueGreen, events.ActionReconcile, "%s", msg)
	case step.Record != nil:
		v := preview.FormatBlueGreen(step.Record)
		if a[preview.BlueGreenAnnotation] == v {
			return
		}
		s.pool.SetAnnotations(withEntry(a, preview.BlueGreenAnnotation, v))
		if had && prev.Phase == step.Record.Phase && prev.Green == step.Record.Green {
			return
		}
		r := step.Record
		msg := fmt.Sprintf("Blue-green rollout of model %s (blue: model %s): %s", r.Green, r.Blue, r.Phase)
		if step.Wait.Message != "" {
			msg += ": " + step.Wait.Message
		}
		logger.Info("Blue-green phase", "phase", r.Phase, "green", r.Green, "blue", r.Blue)
		e.rec.Eventf(s.pool, nil, corev1.EventTypeNormal, events.BlueGreen, events.ActionReconcile, "%s", msg)
	}
}

// actBlueGreen does what the step asks of the workload cluster's Nodes,
// before anything is deleted: blue Nodes that serve again are made
// schedulable first (a rollback, a superseded rollout), blue Nodes are
// cordoned (and labelled) once the green set is available, and the batch
// is drained. The record moves on when the cordon or the batch is done.
func (e *Engine) actBlueGreen(ctx context.Context, s *pass) error {
	step := s.blueGreen
	if step == nil || (len(step.Uncordon) == 0 && len(step.Cordon) == 0 && len(step.Drain) == 0) {
		return nil
	}
	cs, err := e.clientsets.get(ctx, s.cluster)
	if err != nil {
		return err
	}
	nodes := make(map[string]*corev1.Node, len(s.cloud.Instances))
	for _, in := range s.cloud.Instances {
		if n := s.nodes[in.ProviderID]; n != nil && in.State != scalegroup.StateDeleting {
			nodes[in.ID] = n
		}
	}
	var errs []error
	for _, id := range step.Uncordon {
		if n := nodes[id]; n != nil && n.Labels[preview.BlueGreenNodeLabel] == preview.BlueGreenCordonedStatus {
			errs = append(errs, markBlue(ctx, cs, n.Name, false))
		}
	}
	if err := errors.Join(errs...); err != nil {
		// Nothing is cordoned or drained before the blue Nodes serve again.
		return err
	}
	if s.blueGreenAbandoned {
		e.storeBlueGreen(ctx, s)
		return nil
	}
	for _, id := range step.Cordon {
		if n := nodes[id]; n != nil && (!n.Spec.Unschedulable || n.Labels[preview.BlueGreenNodeLabel] != preview.BlueGreenCordonedStatus) {
			errs = append(errs, markBlue(ctx, cs, n.Name, true))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	r := step.Record
	if r == nil {
		return nil
	}
	if r.Phase == rollout.PhaseCordoningBlue {
		r.Cordoned(s.now)
		step.Wait.Message = fmt.Sprintf("blue-green: %d blue Nodes cordoned; draining them in batches", len(step.Cordon))
		defer e.storeBlueGreen(ctx, s)
		return nil
	}
	if len(step.Drain) == 0 {
		return nil
	}
	defer e.storeBlueGreen(ctx, s)
	done, err := e.drainBatch(ctx, s, cs, nodes, step.Drain, r)
	if err != nil || !done {
		return err
	}
	r.BatchDrained(s.now)
	if soak := s.blueGreenSettings.BatchSoak; soak > 0 {
		s.requeueAfter(soak)
	} else {
		s.requeueAfter(e.timing.Converging)
	}
	return nil
}

// drainBatch makes one drain pass over the batch's Nodes, bounded by
// nodeDrainTimeout from the batch's start. It reports whether the batch is
// drained. A Node not drained in time is left cordoned (the blue instance
// is deleted at the end of the soak) unless the pool's undrainable-node
// behavior is Schedule, which makes it schedulable and pauses the rollout;
// the batch then starts again once resumed.
func (e *Engine) drainBatch(ctx context.Context, s *pass, cs kubernetes.Interface, nodes map[string]*corev1.Node, batch []string, r *rollout.BlueGreenRecord) (bool, error) {
	var (
		mu      sync.Mutex
		pending bool
		blocked []string
	)
	timeout := drainTimeout(s)
	expired := timeout > 0 && !s.now.Before(r.Since.Add(timeout))
	err := e.parallel(ctx, len(batch), func(ctx context.Context, i int) error {
		n := nodes[batch[i]]
		if n == nil {
			return nil
		}
		res, err := e.drainNode(ctx, s, n, r.Since)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil && !expired:
			pending = true
			log.FromContext(ctx).Info("Drain of a blue Node failed, will retry", "node", n.Name, "error", err.Error())
		case err != nil || res.TimedOut:
			blocked = append(blocked, fmt.Sprintf("Node %s of instance %s (%s)", n.Name, batch[i], drainMessage(res, err)))
			if s.undrainable == preview.UndrainableSchedule {
				return markBlue(ctx, cs, n.Name, false)
			}
		case !res.Done:
			pending = true
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	if pending {
		s.requeueAfter(e.timing.Drain)
		return false, nil
	}
	if len(blocked) > 0 {
		slices.Sort(blocked)
		msg := fmt.Sprintf("blue Nodes not drained within nodeDrainTimeout %s: %v", timeout, blocked)
		if s.undrainable == preview.UndrainableSchedule {
			r.Batch = nil
			e.pauseForDrain(s, msg+"; they are schedulable again")
			e.rec.Eventf(s.pool, nil, corev1.EventTypeWarning, events.DrainBlocked, events.ActionDrain,
				"Blue-green rollout paused: %s. Resume with 'mpool rollout resume %s' once the PodDisruptionBudget allows the eviction", msg, ownerName(s))
			return false, nil
		}
		e.rec.Eventf(s.pool, nil, corev1.EventTypeWarning, events.DrainTimeout, events.ActionDrain,
			"%s; they stay cordoned, and their instances are deleted at the end of the soak", msg)
	}
	return true, nil
}

// markBlue cordons the Node name and labels it as a blue Node of a
// blue-green rollout, or makes it schedulable again and removes the label.
// A Node already gone is fine.
func markBlue(ctx context.Context, cs kubernetes.Interface, name string, cordon bool) error {
	value := ""
	if cordon {
		value = preview.BlueGreenCordonedStatus
	}
	if err := markNode(ctx, cs, name, preview.BlueGreenNodeLabel, value); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("marking Node %s blue (cordon %t): %w", name, cordon, err)
	}
	return nil
}
