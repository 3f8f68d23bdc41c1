package infrapool

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/rollout"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// planRollout runs the planner over the observation.
func (e *Engine) planRollout(ctx context.Context, s *pass) error {
	s.input = e.rolloutInput(s)
	e.readDisruptionPolicy(s)
	e.trackProgress(ctx, s)
	s.input.HoldStale = s.windowHold
	res, err := rollout.Plan(s.input)
	if err != nil {
		s.invalid = fmt.Errorf("planning the rollout: %w", err)
		s.halt = true
		return nil
	}
	s.plan, s.planned = res, true
	e.planBlueGreen(ctx, s)
	return nil
}

// rolloutInput translates the observation into the planner's terms. For a
// cloud that runs its own rollouts (scalegroup.Capabilities.CloudRollouts)
// out-of-date instances are the cloud's to replace: the planner neither
// replaces them nor prefers them as victims, as with the
// SkipMachinePoolModelReconciliation gate, or a pool's own
// Desired.SkipModelReconciliation.
// Without the workload cluster's Nodes no instance is known to be Ready, and
// the planner would treat every instance as free to delete; without the
// bootstrap data (its Secret is being re-rendered, or was deleted) the
// model hash lacks it and every instance would look stale. The input is
// then paused, so that only the status is reported.
func (e *Engine) rolloutInput(s *pass) rollout.Input {
	in := rollout.Input{
		Desired:                 s.replicas,
		Strategy:                s.desired.Strategy,
		ModelHash:               s.modelHash,
		SkipModelReconciliation: e.skip || e.cloudRollouts() || s.desired.SkipModelReconciliation != "",
		Paused:                  s.paused || !s.nodesKnown || !s.bootstrap,
		Now:                     s.now,
		RandSeed:                preview.Seed(string(s.pool.GetUID())),
	}
	// The pool's cap on remediations in flight; an unreadable one stops
	// remediation (cap 0) and says so in the Remediating condition.
	owner := s.ownerObject()
	maxInFlight, err := preview.MaxRemediationsInFlight(s.replicas, owner, s.pool)
	if err != nil {
		s.remediation.capErr = err
		maxInFlight = ptr.To[int32](0)
	}
	in.MaxRemediationsInFlight = maxInFlight
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
func (e *Engine) rolloutInstance(s *pass, inst scalegroup.Instance) rollout.Instance {
	var (
		obj     metav1.Object
		machine *clusterv1.Machine
	)
	if o := s.objects[inst.ID]; o != nil {
		obj, machine = o, s.machines[o.GetName()]
	}
	_, started := e.tracker.started(s.pool.GetUID(), inst.ID)
	state := reportedState(inst.State)
	joinFrom := inst.CreatedAt
	if inst.Held {
		e.held.mark(s.pool.GetUID(), inst.ID, s.now)
	} else if at, ok := e.held.started(s.pool.GetUID(), inst.ID); ok && at.After(joinFrom) {
		joinFrom = at
	}
	if joinTimedOut(s, inst, joinFrom) {
		// Replaced like a failed instance: deleted at once (it serves
		// nothing, so the budgets do not hold it back) and refilled.
		if s.joinTimedOut == nil {
			s.joinTimedOut = map[string]bool{}
		}
		s.joinTimedOut[inst.ID] = true
		state = contract.InstanceFailed
	}
	return preview.PlannerInstance(rollout.Instance{
		ID:         inst.ID,
		Zone:       inst.Zone,
		CreatedAt:  inst.CreatedAt,
		ModelHash:  inst.ModelHash,
		ReadySince: preview.NodeReadySince(s.nodes[inst.ProviderID]),
	}, state, obj, machine, started)
}

// joinTimedOut reports whether inst has had no Node for the join timeout
// since from (when the cloud created it, or when this process last saw the
// cloud hold it: see scalegroup.Instance.Held), as Cluster API's
// MachineHealthCheck treats a Machine without a nodeRef after
// nodeStartupTimeout: its bootstrap token may have been wrong or expired,
// its boot may hang. Only instances the cloud has not given up on count
// (failed ones are replaced anyway), never held ones, and only while the
// workload cluster's Nodes are known. A manager restarted right after a
// long hold ended counts from the instance's creation again: the cloud
// does not say when the hold ended.
func joinTimedOut(s *pass, inst scalegroup.Instance, from time.Time) bool {
	if s.joinTimeout <= 0 || inst.Held || !s.nodesKnown || s.nodes[inst.ProviderID] != nil {
		return false
	}
	switch inst.State {
	case scalegroup.StateCreating, scalegroup.StateBooting, scalegroup.StateRunning:
		return !s.now.Before(from.Add(s.joinTimeout))
	default:
		return false
	}
}

// reportedState maps the cloud's view of an instance onto the state the
// engine reports in the per-instance objects and the pool's status.
func reportedState(s scalegroup.InstanceState) contract.InstanceState {
	switch s {
	case scalegroup.StateBooting:
		return contract.InstanceBooting
	case scalegroup.StateRunning:
		return contract.InstanceRunning
	case scalegroup.StateFailed:
		return contract.InstanceFailed
	case scalegroup.StateDeleting:
		return contract.InstanceDeleting
	default:
		return contract.InstancePending
	}
}

// removalStart returns when the removal of instance id started: from its
// per-instance object's annotation, or from this process's memory when the
// cache has not caught up with the annotation yet.
func (e *Engine) removalStart(s *pass, id string) (time.Time, bool) {
	if obj := s.objects[id]; obj != nil {
		if v, ok := obj.GetAnnotations()[preview.DrainStartedAnnotation]; ok {
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
	for _, in := range input.Instances {
		if in.Quarantined && !in.MarkedForDeletion && !in.Remediate {
			// Left out of the plan, kept in the group.
			delete(live, in.ID)
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
