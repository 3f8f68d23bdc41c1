package infrapool

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/rollout"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// report writes what this reconcile observed and did: the pool's contract
// fields and its conditions, and the per-instance objects, and decides when
// to look again. The per-instance objects are written once the pool is
// (pass.afterPatch): nothing in the pool's status depends on them, and at a
// thousand instances their creates and status patches take seconds, which
// held back the providerIDList and replica counts the MachinePool follows.
// A pool being deleted writes them first, as before: its finalizer goes
// last.
func (e *Engine) report(ctx context.Context, s *pass) error {
	var err error
	if s.observed && s.owner != nil {
		if s.pool.GetDeletionTimestamp().IsZero() {
			s.afterPatch = func(ctx context.Context) error { return e.syncInstances(ctx, s) }
		} else {
			err = e.syncInstances(ctx, s)
		}
	}
	last, reported := e.status.get(s.pool.GetUID())
	setPoolConditions(s, last, e.skip)
	if s.owner != nil {
		// After the conditions: adapters may mirror them in their kind's
		// own terms (AzureMachinePool's ScaleSetRunning, ...).
		e.a.WritePool(s.pool, e.poolReport(s))
	}
	if e.waitsQuietly(s, reported) {
		s.quiet, s.statusDeferred = true, true
	}
	e.requeueWhileConverging(s)
	return err
}

// waitsQuietly reports whether the pass's status would say only that a new
// pool waits for the controllers beside it — for its MachinePool's
// ownerReference or for its bootstrap data — while pools are being created
// (priority.Hold). Such a pool writes no status then: the status is a bulk
// write, left to a pass once the Hold is over (or MaxBulkDelay), which
// writes it if the pool still waits. At a thousand pools created at once
// every pool wrote "waiting for the bootstrap data", and most "waiting for
// the MachinePool" as well (their owner took longer than ownerQuiet in the
// burst), each replaced seconds later by the status of its created group;
// the MachinePool says meanwhile what it waits for. A pool that ever
// reported (reported: this engine wrote its status; or the server holds
// conditions) goes on reporting, as does a pool with any other news: a
// problem, an invalid spec, a group.
func (e *Engine) waitsQuietly(s *pass, reported bool) bool {
	if reported || !s.bulkLater || !e.hold.Active() || len(s.before.GetConditions()) > 0 {
		return false
	}
	c := meta.FindStatusCondition(s.pool.GetConditions(), infrav1.ScaleGroupReadyCondition)
	return c != nil && c.Status != metav1.ConditionTrue &&
		(c.Reason == infrav1.WaitingForOwnerReason || c.Reason == infrav1.WaitingForBootstrapDataReason)
}

// poolReport builds the infra machine pool contract's fields.
func (e *Engine) poolReport(s *pass) contract.PoolReport {
	r := contract.PoolReport{
		Observed:                  s.observed,
		ModelHash:                 s.modelHash,
		InfrastructureMachineKind: e.a.Kinds().Instance,
		ObservedGeneration:        s.pool.GetGeneration(),
	}
	if s.invalid != nil && !e.omitFailureFields {
		r.FailureReason = ptr.To(infrav1.InvalidSpecReason)
		r.FailureMessage = ptr.To(s.invalid.Error())
	}
	g := s.currentGroup()
	if g == nil {
		return r
	}
	r.Ready = groupReady(g)
	r.Operation = g.Operation
	r.Template = g.Template
	instances := s.instances()
	r.Instances = make([]contract.InstanceReport, 0, len(instances))
	for _, in := range instances {
		rep := e.reportOf(s, in)
		r.Instances = append(r.Instances, rep)
		if in.State != scalegroup.StateDeleting && in.ProviderID != "" {
			r.ProviderIDList = append(r.ProviderIDList, in.ProviderID)
		}
		if rep.State != contract.InstanceFailed && rep.State != contract.InstanceDeleting {
			r.Replicas++
		}
	}
	slices.Sort(r.ProviderIDList)
	r.Instances = reportedInstances(r.Instances, MaxReportedInstances)
	return r
}

// MaxReportedInstances bounds the instances a pool lists in its status: a
// Kubernetes object must stay well under etcd's 1.5 MiB, and at 10,000
// instances the list alone would not. The per-instance objects describe
// every instance.
const MaxReportedInstances = 1000

// reportedInstances keeps at most limit instances, those that need attention
// first (failed, being removed, not ready, on an older model), and orders
// them by ID.
func reportedInstances(in []contract.InstanceReport, limit int) []contract.InstanceReport {
	rank := func(r contract.InstanceReport) int {
		switch {
		case r.State == contract.InstanceFailed:
			return 0
		case r.State == contract.InstanceDeleting:
			return 1
		case !r.Ready:
			return 2
		case !r.LatestModelApplied:
			return 3
		default:
			return 4
		}
	}
	byID := func(a, b contract.InstanceReport) int { return strings.Compare(a.InstanceID, b.InstanceID) }
	if len(in) > limit {
		slices.SortFunc(in, func(a, b contract.InstanceReport) int {
			if d := rank(a) - rank(b); d != 0 {
				return d
			}
			return byID(a, b)
		})
		in = in[:limit]
	}
	slices.SortFunc(in, byID)
	return in
}

// requeueWhileConverging polls while the cloud or the Nodes are still moving:
// the cloud has no watch.
func (e *Engine) requeueWhileConverging(s *pass) {
	if !s.planned {
		return
	}
	s.requeueAfter(s.plan.RequeueAfter)
	if g := s.currentGroup(); g != nil && g.Pending() {
		s.requeueAfter(e.timing.Converging)
	}
	for _, in := range s.instances() {
		switch in.State {
		case scalegroup.StateCreating, scalegroup.StateBooting, scalegroup.StateDeleting:
			s.requeueAfter(e.timing.Converging)
		case scalegroup.StateRunning:
			if preview.NodeReadySince(s.nodes[in.ProviderID]) == nil {
				s.requeueAfter(e.timing.Converging)
			}
		}
	}
	if len(s.deletedNow) > 0 || s.latest != nil {
		s.requeueAfter(e.timing.Converging)
	}
	if !s.plan.Done {
		s.requeueAfter(e.timing.NotConverged)
	}
	if s.managedBy != "" {
		// The external actor changes the group without an event.
		s.requeueAfter(e.timing.ExternalReplicas)
	}
}

// setPoolConditions sets every condition the engine owns on the pool.
// written is the pool as the engine's last status write left it (nil when
// none is known): a pass that reads the pool from a cache that does not show
// that write yet finds a condition missing or at its old status, and would
// stamp it with a new transition time; when the last write already gave the
// condition this status, its transition time stands (the status did not
// change since), and the pass has nothing to write again.
func setPoolConditions(s *pass, written contract.Pool, skip bool) {
	set := func(c metav1.Condition) {
		c.ObservedGeneration = s.pool.GetGeneration()
		c.LastTransitionTime = metav1.NewTime(s.now)
		conds := s.pool.GetConditions()
		if prev := meta.FindStatusCondition(conds, c.Type); written != nil && (prev == nil || prev.Status != c.Status) {
			if w := meta.FindStatusCondition(written.GetConditions(), c.Type); w != nil && w.Status == c.Status {
				c.LastTransitionTime = w.LastTransitionTime
			}
		}
		meta.SetStatusCondition(&conds, c)
		s.pool.SetConditions(conds)
	}
	groupReady := scaleGroupReadyCondition(s)
	set(groupReady)
	set(modelUpdatedCondition(s, skip))
	set(desiredReplicasCondition(s))
	set(rolloutProgressingCondition(s))
	set(remediatingCondition(s))
	set(readyCondition(groupReady))
}

func scaleGroupReadyCondition(s *pass) metav1.Condition {
	c := metav1.Condition{Type: infrav1.ScaleGroupReadyCondition}
	switch {
	case s.owner == nil && s.invalid == nil && s.problem == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1.WaitingForOwnerReason, "Waiting for the owner MachinePool"
	case s.invalid != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1.InvalidSpecReason, s.invalid.Error()
	case s.blocked != nil:
		// The group serves, but refuses what it is asked for: said here as
		// an invalid spec (CAPA's and CAPZ's readiness aliases show the
		// cloud's words), without status.failureReason, so that the
		// MachinePool is not Failed; RolloutProgressing says the rest.
		c.Status, c.Reason = metav1.ConditionFalse, infrav1.InvalidSpecReason
		c.Message = fmt.Sprintf("The cloud refuses the pool's new model: %v; the group keeps its instances of the previous model (rollout blocked)", s.blocked)
	case s.problem != nil && s.currentGroup() == nil:
		status := metav1.ConditionFalse
		if !s.observed {
			status = metav1.ConditionUnknown
		}
		c.Status, c.Reason, c.Message = status, s.problem.reason, s.problem.message
	case s.problem != nil:
		// The group exists; a later call failed.
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, s.problem.reason, s.problem.message
	case s.currentGroup() == nil && !s.bootstrap:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1.WaitingForBootstrapDataReason, "Waiting for the MachinePool's bootstrap data"
	case s.currentGroup() == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1.ScaleGroupNotFoundReason, fmt.Sprintf("Scale group %s does not exist yet", s.group)
	default:
		g := s.currentGroup()
		c.Status, c.Reason = metav1.ConditionTrue, clusterv1.ReadyReason
		c.Message = fmt.Sprintf("Scale group %s has capacity %d", s.group, g.Capacity)
		if g.Message != "" {
			c.Status, c.Reason = metav1.ConditionFalse, infrav1.ScaleGroupProblemReason
			c.Message += "; the cloud reports: " + g.Message
		}
		if g.Failed && s.retryNote != "" {
			c.Status, c.Reason = metav1.ConditionFalse, infrav1.ScaleGroupProblemReason
			c.Message += "; " + s.retryNote
		}
		if op := g.Operation; op != nil {
			c.Message += fmt.Sprintf("; %s operation in progress: %s", op.Type, op.Message)
		}
		if !s.bootstrap {
			c.Message += "; waiting for the MachinePool's bootstrap data before creating instances"
		}
	}
	return c
}

func modelUpdatedCondition(s *pass, skip bool) metav1.Condition {
	c := metav1.Condition{Type: infrav1.ScaleGroupModelUpdatedCondition}
	switch n := s.plan.Counts; {
	case !s.planned:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, unknownReason(s), "The instances have not been observed"
	case n.Stale == 0:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, clusterv1.ReadyReason, fmt.Sprintf("All instances run model %s", s.modelHash)
	default:
		c.Status, c.Reason = metav1.ConditionFalse, infrav1.ScaleGroupModelOutOfDateReason
		c.Message = fmt.Sprintf("%d of %d instances run an older model than %s", n.Stale, n.Replicas, s.modelHash)
		switch {
		case s.cloudRollouts:
			c.Message += "; the cloud replaces them itself, with its own rolling update"
		case skip:
			c.Message += "; SkipMachinePoolModelReconciliation is enabled: they stay until the pool is scaled in or they are deleted"
		case s.desired.SkipModelReconciliation != "":
			c.Message += "; " + s.desired.SkipModelReconciliation + ": they are not replaced (new instances get the current model), they stay until the pool is scaled in or they are deleted"
		}
	}
	return c
}

func desiredReplicasCondition(s *pass) metav1.Condition {
	c := metav1.Condition{Type: infrav1.ScaleGroupDesiredReplicasCondition}
	switch n := s.plan.Counts.Replicas; {
	case !s.planned:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, unknownReason(s), "The instances have not been observed"
	case n == s.replicas:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, clusterv1.ReadyReason, fmt.Sprintf("%d of %d replicas", n, s.replicas)
	case n < s.replicas:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1.ScaleGroupScaleUpReason, fmt.Sprintf("%d of %d replicas", n, s.replicas)
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1.ScaleGroupScaleDownReason, fmt.Sprintf("%d of %d replicas", n, s.replicas)
	}
	if s.planned && s.managedBy != "" {
		c.Message += fmt.Sprintf(" (replicas managed by %s: the group's capacity is not changed from the MachinePool's spec.replicas)", s.managedBy)
	}
	return c
}

func rolloutProgressingCondition(s *pass) metav1.Condition {
	c := metav1.Condition{Type: infrav1.RolloutProgressingCondition}
	switch {
	case !s.planned:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, unknownReason(s), "The instances have not been observed"
	case !s.nodesKnown:
		c.Status, c.Reason = metav1.ConditionFalse, infrav1.WorkloadClusterUnreachableReason
		c.Message = "Nothing is created or deleted while the workload cluster's Nodes cannot be read"
		if s.nodesErr != nil {
			c.Message += ": " + s.nodesErr.Error()
		}
	case !s.bootstrap:
		c.Status, c.Reason = metav1.ConditionFalse, infrav1.WaitingForBootstrapDataReason
		c.Message = "Nothing is created or deleted until the MachinePool's bootstrap data is available: the instances' model includes it"
	case s.selfPaused != nil && s.selfPaused.Paused == infrav1.DrainBlockedReason:
		c.Status, c.Reason = metav1.ConditionFalse, s.selfPaused.Paused
		c.Message = fmt.Sprintf("Rollout paused by the engine: %s. Nothing more is drained or deleted; "+
			"once the PodDisruptionBudget allows the eviction, resume with 'mpool rollout resume %s' (it removes the %s annotation of this pool), "+
			"or set %s to Cordon or Delete and resume", s.selfPaused.Message, ownerName(s), preview.RolloutProgressAnnotation, preview.UndrainableNodeBehaviorAnnotation)
	case s.selfPaused != nil:
		c.Status, c.Reason = metav1.ConditionFalse, s.selfPaused.Paused
		c.Message = fmt.Sprintf("Rollout paused by the engine: %s. The old instances are kept and nothing more is deleted; "+
			"change the template, or resume with 'mpool rollout resume %s' (it removes the %s annotation of this pool)",
			s.selfPaused.Message, ownerName(s), preview.RolloutProgressAnnotation)
	case s.blocked != nil:
		c.Status, c.Reason = metav1.ConditionFalse, infrav1.RolloutBlockedReason
		c.Message = fmt.Sprintf("Rollout blocked: the cloud cannot create instances of model %s: %v. "+
			"%d instances on the previous model keep serving and none is deleted for the new model; "+
			"fix the template (or revert it) and the rollout goes on", s.modelHash, s.blocked, s.plan.Counts.Stale)
	case s.input.Paused:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, string(rollout.WaitPaused), "The rollout is paused by the "+preview.RolloutPausedAnnotation+" annotation"
	case s.cloudRollouts && s.plan.Counts.Stale > 0:
		c.Status, c.Reason = metav1.ConditionTrue, infrav1.CloudRolloutReason
		c.Message = fmt.Sprintf("The cloud is replacing %d out-of-date instances itself", s.plan.Counts.Stale)
		if g := s.currentGroup(); g.Pending() {
			c.Message += fmt.Sprintf(" (%s operation: %s)", g.Operation.Type, g.Operation.Message)
		}
	case s.plan.Done:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1.ConvergedReason, fmt.Sprintf("%d replicas, all available and on model %s", s.plan.Counts.Replicas, s.modelHash)
	default:
		c.Status, c.Reason = metav1.ConditionTrue, infrav1.ProgressingReason
		msgs := make([]string, 0, len(s.plan.Waiting)+1)
		if len(s.plan.Delete) > 0 {
			msgs = append(msgs, fmt.Sprintf("removing %d instances", len(s.plan.Delete)))
		}
		for i, w := range s.plan.Waiting {
			if i == 0 {
				c.Reason = string(w.Reason)
			}
			if i == 0 && w.Reason == rollout.WaitWindow {
				// Nothing voluntary happens until the window opens.
				c.Status = metav1.ConditionFalse
			}
			msgs = append(msgs, w.Message)
		}
		c.Message = strings.Join(msgs, "; ")
		if c.Message == "" {
			c.Message = fmt.Sprintf("%d of %d replicas available", s.plan.Counts.Available, s.replicas)
		}
		if bg := s.blueGreen; bg != nil && bg.Record != nil && !bg.Own {
			// The rolling planner removes the old set within the budgets.
			c.Reason = string(bg.Record.Phase)
			what := fmt.Sprintf("deleting the blue set (model %s) after the soak", bg.Record.Blue)
			if bg.Record.Phase == rollout.PhaseRollingBack {
				what = fmt.Sprintf("rolling back to the blue set (model %s): its Nodes serve again, the green ones (model %s) are drained and deleted", bg.Record.Blue, bg.Record.Green)
			}
			c.Message = "blue-green: " + what + "; " + c.Message
		}
		if rb, ok := preview.ParseRollBack(s.pool.GetAnnotations()[preview.RolledBackAnnotation]); ok && rb.To == s.modelHash {
			c.Message = fmt.Sprintf("Rolling back automatically to revision %d (the rollout of model %s stopped: %s): %s", rb.Revision, rb.From, rb.Reason, c.Message)
		}
	}
	if s.progressErr != nil {
		c.Message += " (" + s.progressErr.Error() + ")"
	}
	if s.undrainableErr != nil {
		c.Message += " (" + s.undrainableErr.Error() + ")"
	}
	if s.blueGreenErr != nil {
		c.Message += " (" + s.blueGreenErr.Error() + ")"
	}
	if n := s.plan.Counts.Quarantined; s.planned && n > 0 {
		c.Message += fmt.Sprintf("; %d instance%s quarantined (Nodes that could not be drained, left cordoned, %s): "+
			"mark the Machines with cluster.x-k8s.io/delete-machine to delete them, or remove the annotation to replace them again", n, plural(int(n)), preview.QuarantinedAnnotation)
	}
	return c
}

// ownerName is the owner MachinePool's name, for commands to run on it.
func ownerName(s *pass) string {
	if s.owner == nil {
		return "<machinepool>"
	}
	return s.owner.Name
}

// readyCondition mirrors ScaleGroupReady: the pool is ready when its group
// exists and is usable.
func readyCondition(groupReady metav1.Condition) metav1.Condition {
	c := groupReady
	c.Type = clusterv1.ReadyCondition
	return c
}

// unknownReason explains why the instances were not observed.
func unknownReason(s *pass) string {
	switch {
	case s.invalid != nil:
		return infrav1.InvalidSpecReason
	case s.problem != nil:
		return s.problem.reason
	case s.owner == nil:
		return infrav1.WaitingForOwnerReason
	default:
		return clusterv1.InternalErrorReason
	}
}

// groupReady is the pool's status.ready: the group is at rest, or it is
// being changed (scaled, rolled) while some of its instances run. A pool
// stays ready through a rollout, so that the MachinePool keeps following its
// providerIDList and Nodes; it is not ready while its group is first
// provisioned (nothing runs yet) or deleted.
func groupReady(g *scalegroup.Group) bool {
	if !g.Pending() {
		return true
	}
	if g.Operation.Type == scalegroup.OperationDelete {
		return false
	}
	for _, in := range g.Instances {
		if in.State == scalegroup.StateRunning {
			return true
		}
	}
	return false
}
