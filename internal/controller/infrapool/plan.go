package infrapool

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	clusterv1 "github.com/mpool-dev/mpool/api/core/v1beta1"
	"github.com/mpool-dev/mpool/internal/rollout"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// planRollout runs the planner over the observation.
func (e *Engine) planRollout(_ context.Context, s *scope) error {
	s.input = e.rolloutInput(s)
	res, err := rollout.Plan(s.input)
	if err != nil {
		s.invalid = fmt.Errorf("planning the rollout: %w", err)
		s.halt = true
		return nil
	}
	s.plan, s.planned = res, true
	return nil
}

// rolloutInput translates the observation into the planner's terms.
// Without the workload cluster's Nodes no instance is known to be Ready, and
// the planner would treat every instance as free to delete: the input is
// then paused, so that only the status is reported.
func (e *Engine) rolloutInput(s *scope) rollout.Input {
	in := rollout.Input{
		Desired:                 s.replicas,
		Strategy:                s.desired.Strategy,
		ModelHash:               s.modelHash,
		SkipModelReconciliation: e.skip,
		Paused:                  s.paused || !s.nodesKnown,
		Now:                     s.now,
		RandSeed:                seed(string(s.pool.GetUID())),
	}
	if s.cloud == nil {
		return in
	}
	in.Instances = make([]rollout.Instance, 0, len(s.cloud.Instances))
	for _, inst := range s.cloud.Instances {
		in.Instances = append(in.Instances, e.rolloutInstance(s, inst))
	}
	return in
}

// rolloutInstance describes one cloud instance to the planner. An instance
// whose removal started — the cloud deletes it, its per-instance object or
// Machine is being deleted, or its drain started — is Deleting, so that the
// planner lists it again until it is gone and never counts it as live.
func (e *Engine) rolloutInstance(s *scope, inst scalegroup.Instance) rollout.Instance {
	out := rollout.Instance{
		ID:        inst.ID,
		Zone:      inst.Zone,
		CreatedAt: inst.CreatedAt,
		ModelHash: inst.ModelHash,
	}
	switch inst.State {
	case scalegroup.StateRunning:
		out.State = rollout.StateRunning
		out.ReadySince = readySince(s.nodes[inst.ProviderID])
	case scalegroup.StateFailed:
		out.State = rollout.StateFailed
	case scalegroup.StateDeleting:
		out.State = rollout.StateDeleting
	default:
		out.State = rollout.StatePending
	}
	obj := s.objects[inst.ID]
	var machine *clusterv1.Machine
	if obj != nil {
		machine = s.machines[obj.GetName()]
	}
	if _, ok := e.removalStart(s, inst.ID); ok || (obj != nil && !obj.GetDeletionTimestamp().IsZero()) ||
		(machine != nil && !machine.DeletionTimestamp.IsZero()) {
		out.State = rollout.StateDeleting
		out.ReadySince = nil
	}
	if obj != nil && hasAnnotation(obj.GetAnnotations(), clusterv1.DeleteMachineAnnotation) ||
		machine != nil && hasAnnotation(machine.Annotations, clusterv1.DeleteMachineAnnotation) {
		out.MarkedForDeletion = true
	}
	return out
}

// removalStart returns when the removal of instance id started: from its
// per-instance object's annotation, or from this process's memory when the
// cache has not caught up with the annotation yet.
func (e *Engine) removalStart(s *scope, id string) (time.Time, bool) {
	if obj := s.objects[id]; obj != nil {
		if v, ok := obj.GetAnnotations()[DrainStartedAnnotation]; ok {
			if t, err := time.Parse(time.RFC3339, v); err == nil {
				return t, true
			}
			return s.now, true
		}
	}
	return e.tracker.started(s.pool.GetUID(), id)
}

// capacity returns the capacity to apply once the victims deleted this
// reconcile are gone: the planner's TargetCapacity plus every instance the
// cloud still counts that the plan does not keep (victims still draining,
// failed instances not deleted yet). The cloud then only ever adds
// instances; it never picks a victim itself.
func capacity(plan rollout.Result, input rollout.Input, instances []scalegroup.Instance, deletedNow map[string]bool) int32 {
	victims := make(map[string]bool, len(plan.Delete))
	for _, v := range plan.Delete {
		victims[v.ID] = true
	}
	live := make(map[string]bool, len(input.Instances))
	for _, in := range input.Instances {
		if in.State != rollout.StateFailed && in.State != rollout.StateDeleting && !victims[in.ID] {
			live[in.ID] = true
		}
	}
	var extra int32
	for _, in := range instances {
		if in.State != scalegroup.StateDeleting && !deletedNow[in.ID] && !live[in.ID] {
			extra++
		}
	}
	return plan.TargetCapacity + extra
}

func hasAnnotation(a map[string]string, key string) bool {
	_, ok := a[key]
	return ok
}

// seed derives a stable random seed from a pool's UID, so that a Random
// delete policy picks the same instances on every reconcile.
func seed(uid string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(uid))
	return int64(h.Sum64())
}
