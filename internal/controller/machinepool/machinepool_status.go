package machinepool

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capierrors "sigs.k8s.io/cluster-api/api/deprecated/errors"

	"github.com/mpool-dev/mpool/api/conditions"
	"github.com/mpool-dev/mpool/internal/condition"
	"github.com/mpool-dev/mpool/internal/events"
)

// updateStatus sets the phase, the failure fields and every owned condition
// from what the reconcile observed.
func (r *Reconciler) updateStatus(_ context.Context, s *scope) {
	pool := s.pool
	if !pool.DeletionTimestamp.IsZero() {
		pool.Status.SetTypedPhase(clusterv1.MachinePoolPhaseDeleting)
		setReadyCondition(s)
		return
	}
	if !s.observed {
		// Only the finalizer was added: nothing observed yet.
		if pool.Status.Phase == "" {
			pool.Status.SetTypedPhase(clusterv1.MachinePoolPhasePending)
		}
		return
	}
	if s.bootstrap.err == nil && s.infra.err == nil {
		setFailure(pool, s.failureReason, s.failureMessage)
	}
	if s.bootstrap.err == nil {
		pool.Status.Initialization.BootstrapDataSecretCreated = ptr.To(s.bootstrapReady)
	}

	setBootstrapReadyCondition(s)
	setInfrastructureReadyCondition(s)
	setReplicasReadyCondition(s)
	setAvailableCondition(s)
	setScalingUpCondition(s)
	setScalingDownCondition(s)
	setUpToDateCondition(s)
	setReadyCondition(s)

	pool.Status.SetTypedPhase(computePhase(phaseInput{
		failed:         failed(pool),
		bootstrapReady: ptr.Deref(pool.Status.Initialization.BootstrapDataSecretCreated, false),
		infraReady:     ptr.Deref(pool.Status.Initialization.InfrastructureProvisioned, false),
		desired:        s.desiredReplicas(),
		replicas:       ptr.Deref(pool.Status.Replicas, 0),
		ready:          ptr.Deref(pool.Status.ReadyReplicas, 0),
	}))
}

// phaseInput is what the phase depends on.
type phaseInput struct {
	deleting, failed, bootstrapReady, infraReady bool
	desired, replicas, ready                     int32
}

// computePhase implements the phase table of the package documentation.
func computePhase(in phaseInput) clusterv1.MachinePoolPhase {
	switch {
	case in.deleting:
		return clusterv1.MachinePoolPhaseDeleting
	case in.failed:
		return clusterv1.MachinePoolPhaseFailed
	case !in.bootstrapReady:
		return clusterv1.MachinePoolPhasePending
	case !in.infraReady:
		return clusterv1.MachinePoolPhaseProvisioning
	case in.replicas > in.desired || in.ready > in.desired:
		return clusterv1.MachinePoolPhaseScalingDown
	case in.replicas < in.desired:
		return clusterv1.MachinePoolPhaseScalingUp
	case in.ready == in.desired:
		return clusterv1.MachinePoolPhaseRunning
	default:
		return clusterv1.MachinePoolPhaseProvisioned
	}
}

func set(s *scope, t string, status metav1.ConditionStatus, reason, message string) {
	condition.Set(s.pool, condition.New(t, status, reason, message, s.pool.Generation), s.now)
}

func setBootstrapReadyCondition(s *scope) {
	const t = conditions.BootstrapReadyCondition
	b := s.pool.Spec.Template.Spec.Bootstrap
	st := s.bootstrap
	switch {
	case !b.ConfigRef.IsDefined() && b.DataSecretName == nil:
		set(s, t, metav1.ConditionFalse, clusterv1.WaitingForBootstrapDataReason, "Waiting for spec.template.spec.bootstrap.dataSecretName to be set")
	case !b.ConfigRef.IsDefined() && *b.DataSecretName == "":
		set(s, t, metav1.ConditionTrue, conditions.NoBootstrapDataReason, "dataSecretName is empty: no bootstrap data is needed")
	case !b.ConfigRef.IsDefined():
		set(s, t, metav1.ConditionTrue, clusterv1.ReadyReason, "")
	case st.err != nil:
		set(s, t, metav1.ConditionUnknown, clusterv1.InternalErrorReason, st.err.Error())
	case st.notFound:
		set(s, t, metav1.ConditionFalse, conditions.ObjectNotFoundReason, fmt.Sprintf("%s %s not found", b.ConfigRef.Kind, b.ConfigRef.Name))
	case st.notReadyMessage != "":
		set(s, t, metav1.ConditionFalse, clusterv1.WaitingForBootstrapDataReason, st.notReadyMessage)
	case !s.bootstrapReady:
		set(s, t, metav1.ConditionFalse, clusterv1.WaitingForBootstrapDataReason, fmt.Sprintf("%s %s is not ready", b.ConfigRef.Kind, b.ConfigRef.Name))
	default:
		set(s, t, metav1.ConditionTrue, clusterv1.ReadyReason, "")
	}
}

func setInfrastructureReadyCondition(s *scope) {
	const t = clusterv1.InfrastructureReadyCondition
	ref := s.pool.Spec.Template.Spec.InfrastructureRef
	st := s.infra
	switch {
	case st.err != nil:
		set(s, t, metav1.ConditionUnknown, clusterv1.InternalErrorReason, st.err.Error())
	case st.notFound:
		set(s, t, metav1.ConditionFalse, conditions.ObjectNotFoundReason, fmt.Sprintf("%s %s not found", ref.Kind, ref.Name))
	case st.notReadyMessage != "":
		set(s, t, metav1.ConditionFalse, conditions.WaitingForInfrastructureReason, st.notReadyMessage)
	case !st.ready:
		set(s, t, metav1.ConditionFalse, conditions.WaitingForInfrastructureReason, fmt.Sprintf("%s %s is not ready", ref.Kind, ref.Name))
	default:
		set(s, t, metav1.ConditionTrue, clusterv1.ReadyReason, "")
	}
}

// nodesUnknown sets t to Unknown when the Nodes could not be read and
// reports whether it did.
func nodesUnknown(s *scope, t string) bool {
	switch {
	case s.nodesKnown:
		return false
	case s.workloadErr != nil:
		set(s, t, metav1.ConditionUnknown, conditions.WorkloadClusterNotConnectedReason, s.workloadErr.Error())
	default:
		set(s, t, metav1.ConditionUnknown, clusterv1.InternalErrorReason, "the Nodes of the workload cluster could not be read")
	}
	return true
}

func setReplicasReadyCondition(s *scope) {
	const t = conditions.ReplicasReadyCondition
	desired := s.desiredReplicas()
	ready, replicas := ptr.Deref(s.pool.Status.ReadyReplicas, 0), ptr.Deref(s.pool.Status.Replicas, 0)
	switch {
	case nodesUnknown(s, t):
	case !s.infra.ready:
		set(s, t, metav1.ConditionFalse, conditions.WaitingForInfrastructureReason, "Waiting for the infrastructure pool to be ready")
	case ready == desired && replicas == desired:
		set(s, t, metav1.ConditionTrue, clusterv1.ReadyReason, "")
	default:
		set(s, t, metav1.ConditionFalse, conditions.WaitingForReplicasReadyReason,
			fmt.Sprintf("%d of %d replicas ready (%d instances)", ready, desired, replicas))
	}
}

func setAvailableCondition(s *scope) {
	const t = conditions.AvailableCondition
	available, desired := ptr.Deref(s.pool.Status.AvailableReplicas, 0), s.desiredReplicas()
	switch {
	case nodesUnknown(s, t):
	case available >= desired:
		set(s, t, metav1.ConditionTrue, conditions.AvailableReason, "")
	default:
		set(s, t, metav1.ConditionFalse, conditions.NotAvailableReason,
			fmt.Sprintf("%d of %d replicas available (Ready for at least %s)", available, desired, minReady(s.pool.Spec.Template.Spec.MinReadySeconds)))
	}
}

func setScalingUpCondition(s *scope) {
	const t = conditions.ScalingUpCondition
	replicas, desired := ptr.Deref(s.pool.Status.Replicas, 0), s.desiredReplicas()
	switch {
	case !s.infra.ready:
		set(s, t, metav1.ConditionUnknown, conditions.WaitingForInfrastructureReason, "Waiting for the infrastructure pool to be ready")
	case replicas < desired:
		set(s, t, metav1.ConditionTrue, conditions.ScalingUpReason, fmt.Sprintf("Scaling up from %d to %d replicas", replicas, desired))
	default:
		set(s, t, metav1.ConditionFalse, conditions.NotScalingUpReason, "")
	}
}

func setScalingDownCondition(s *scope) {
	const t = conditions.ScalingDownCondition
	replicas, desired := ptr.Deref(s.pool.Status.Replicas, 0), s.desiredReplicas()
	switch {
	case !s.infra.ready:
		set(s, t, metav1.ConditionUnknown, conditions.WaitingForInfrastructureReason, "Waiting for the infrastructure pool to be ready")
	case replicas > desired:
		set(s, t, metav1.ConditionTrue, conditions.ScalingDownReason, fmt.Sprintf("Scaling down from %d to %d replicas", replicas, desired))
	default:
		set(s, t, metav1.ConditionFalse, conditions.NotScalingDownReason, "")
	}
}

func setUpToDateCondition(s *scope) {
	const t = conditions.UpToDateCondition
	if s.machinesKnown {
		// v1beta2's status.upToDateReplicas: the machines known to run the
		// pool's latest model.
		s.pool.Status.UpToDateReplicas = ptr.To(int32(s.machinesTotal - s.machinesUnknown - s.machinesNotUpToDate))
	}
	switch {
	case !s.machinesKnown && s.infra.obj != nil && s.infraMachineKind == "":
		set(s, t, metav1.ConditionUnknown, conditions.UpToDateUnknownReason,
			"The infrastructure pool does not report per-machine objects (status.infrastructureMachineKind)")
	case !s.machinesKnown:
		set(s, t, metav1.ConditionUnknown, conditions.UpToDateUnknownReason, "The infrastructure machines could not be read")
	case s.machinesUnknown > 0:
		set(s, t, metav1.ConditionUnknown, conditions.UpToDateUnknownReason,
			fmt.Sprintf("%d of %d machines do not report status.latestModelApplied", s.machinesUnknown, s.machinesTotal))
	case s.machinesNotUpToDate > 0:
		set(s, t, metav1.ConditionFalse, conditions.NotUpToDateReason,
			fmt.Sprintf("%d of %d machines do not run the latest model", s.machinesNotUpToDate, s.machinesTotal))
	default:
		set(s, t, metav1.ConditionTrue, conditions.UpToDateReason, "")
	}
}

// setReadyCondition summarises BootstrapReady, InfrastructureReady and
// ReplicasReady: True when all three are, otherwise the first that is not
// (False before Unknown).
func setReadyCondition(s *scope) {
	const t = clusterv1.ReadyCondition
	pool := s.pool
	switch {
	case !pool.DeletionTimestamp.IsZero():
		msg := s.deleteStep
		if msg == "" {
			msg = "The MachinePool is being deleted"
		}
		set(s, t, metav1.ConditionFalse, clusterv1.DeletingReason, msg)
		return
	case failed(pool):
		reason, message := failure(pool)
		msg := ptr.Deref(message, "")
		if msg == "" {
			msg = ptr.Deref(reason, "")
		}
		set(s, t, metav1.ConditionFalse, conditions.FailedReason, msg)
		return
	}
	var firstUnknown *metav1.Condition
	for _, ct := range []string{conditions.BootstrapReadyCondition, clusterv1.InfrastructureReadyCondition, conditions.ReplicasReadyCondition} {
		c := condition.Get(pool, ct)
		switch {
		case c == nil:
			set(s, t, metav1.ConditionUnknown, clusterv1.InternalErrorReason, ct+" is not set")
			return
		case c.Status == metav1.ConditionFalse:
			set(s, t, metav1.ConditionFalse, c.Reason, summaryMessage(c))
			return
		case c.Status == metav1.ConditionUnknown && firstUnknown == nil:
			cc := *c
			firstUnknown = &cc
		}
	}
	if firstUnknown != nil {
		set(s, t, metav1.ConditionUnknown, firstUnknown.Reason, summaryMessage(firstUnknown))
		return
	}
	set(s, t, metav1.ConditionTrue, clusterv1.ReadyReason, "")
}

func summaryMessage(c *metav1.Condition) string {
	if c.Message == "" {
		return c.Type + ": " + c.Reason
	}
	return c.Type + ": " + c.Message
}

func setPausedCondition(s *scope, paused bool) {
	if paused {
		set(s, clusterv1.PausedCondition, metav1.ConditionTrue, clusterv1.PausedReason, "The Cluster or the MachinePool is paused")
		return
	}
	set(s, clusterv1.PausedCondition, metav1.ConditionFalse, clusterv1.NotPausedReason, "")
}

// recordEvents records the changes this reconcile made visible: phase
// changes, scaling, readiness and failures. A new pool's first phase,
// Pending, is where every pool starts, not a change, and the bootstrap data
// and the infrastructure pool becoming ready are what move a pool out of
// Pending and Provisioning, so when they come with the phase change they are
// told in its event rather than in one of their own: a created pool records
// two events where it recorded five, each a write to the API server.
func (r *Reconciler) recordEvents(s *scope) {
	pool, orig := s.pool, s.orig
	_, bootstrapReady := becameTrue(orig, pool, conditions.BootstrapReadyCondition)
	_, infraReady := becameTrue(orig, pool, clusterv1.InfrastructureReadyCondition)
	if from, to := orig.Status.Phase, pool.Status.Phase; from != to {
		if to == string(clusterv1.MachinePoolPhaseFailed) {
			msg := "The MachinePool failed"
			if _, m := failure(pool); m != nil {
				msg = *m
			}
			r.Recorder.Eventf(pool, nil, corev1.EventTypeWarning, events.Failed, events.ActionReconcile, "%s", msg)
		}
		if from != "" || to != string(clusterv1.MachinePoolPhasePending) {
			if from == "" {
				from = "(none)"
			}
			r.Recorder.Eventf(pool, nil, corev1.EventTypeNormal, events.PhaseChanged, events.ActionReconcile, "Phase changed from %s to %s%s", from, to, readyNote(bootstrapReady, infraReady))
			bootstrapReady, infraReady = false, false
		}
	}
	if c, ok := becameTrue(orig, pool, conditions.ScalingUpCondition); ok {
		r.Recorder.Eventf(pool, nil, corev1.EventTypeNormal, events.ScalingUp, events.ActionReconcile, "%s", c.Message)
	}
	if c, ok := becameTrue(orig, pool, conditions.ScalingDownCondition); ok {
		r.Recorder.Eventf(pool, nil, corev1.EventTypeNormal, events.ScalingDown, events.ActionReconcile, "%s", c.Message)
	}
	if bootstrapReady {
		r.Recorder.Eventf(pool, nil, corev1.EventTypeNormal, events.BootstrapReady, events.ActionReconcile, "%s", "Bootstrap data is ready")
	}
	if infraReady {
		r.Recorder.Eventf(pool, nil, corev1.EventTypeNormal, events.InfrastructureReady, events.ActionReconcile, "%s", "The infrastructure pool is ready")
	}
	for _, t := range []string{conditions.BootstrapReadyCondition, clusterv1.InfrastructureReadyCondition} {
		if c, ok := gotReason(orig, pool, t, conditions.ObjectNotFoundReason); ok {
			r.Recorder.Eventf(pool, nil, corev1.EventTypeWarning, events.ExternalObjectNotFound, events.ActionReconcile, "%s", c.Message)
		}
	}
	if c, ok := gotReason(orig, pool, conditions.ReplicasReadyCondition, conditions.WorkloadClusterNotConnectedReason); ok {
		r.Recorder.Eventf(pool, nil, corev1.EventTypeWarning, events.WorkloadClusterUnreachable, events.ActionReconcile, "%s", c.Message)
	}
}

// readyNote is what a phase change's event adds when the bootstrap data or
// the infrastructure pool became ready with it.
func readyNote(bootstrap, infra bool) string {
	switch {
	case bootstrap && infra:
		return ": bootstrap data and the infrastructure pool are ready"
	case bootstrap:
		return ": bootstrap data is ready"
	case infra:
		return ": the infrastructure pool is ready"
	}
	return ""
}

// becameTrue returns condition t of pool when it is True and was not in orig.
func becameTrue(orig, pool *clusterv1.MachinePool, t string) (*metav1.Condition, bool) {
	c := condition.Get(pool, t)
	if c == nil || c.Status != metav1.ConditionTrue || condition.IsTrue(orig, t) {
		return nil, false
	}
	return c, true
}

// gotReason returns condition t of pool when its reason became reason.
func gotReason(orig, pool *clusterv1.MachinePool, t, reason string) (*metav1.Condition, bool) {
	c := condition.Get(pool, t)
	if c == nil || c.Reason != reason {
		return nil, false
	}
	if o := condition.Get(orig, t); o != nil && o.Reason == reason {
		return nil, false
	}
	return c, true
}

// failure returns the failureReason and failureMessage a referenced object
// reported, kept (as v1beta2 keeps them) in status.deprecated.v1beta1, where
// v1beta1 readers find them as status.failureReason and failureMessage.
func failure(pool *clusterv1.MachinePool) (reason, message *string) {
	d := pool.Status.Deprecated
	if d == nil || d.V1Beta1 == nil {
		return nil, nil
	}
	if d.V1Beta1.FailureReason != nil {
		reason = ptr.To(string(*d.V1Beta1.FailureReason))
	}
	return reason, d.V1Beta1.FailureMessage
}

// failed reports whether the pool records a failure (see failure).
func failed(pool *clusterv1.MachinePool) bool {
	reason, message := failure(pool)
	return reason != nil || message != nil
}

// setFailure records a failure (see failure); nil and nil clear it.
func setFailure(pool *clusterv1.MachinePool, reason, message *string) {
	d := deprecatedV1Beta1(pool)
	d.FailureMessage = message
	d.FailureReason = nil
	if reason != nil {
		d.FailureReason = ptr.To(capierrors.MachinePoolStatusFailure(*reason))
	}
}

// deprecatedV1Beta1 returns the pool's status.deprecated.v1beta1, creating it.
func deprecatedV1Beta1(pool *clusterv1.MachinePool) *clusterv1.MachinePoolV1Beta1DeprecatedStatus {
	if pool.Status.Deprecated == nil {
		pool.Status.Deprecated = &clusterv1.MachinePoolDeprecatedStatus{}
	}
	if pool.Status.Deprecated.V1Beta1 == nil {
		pool.Status.Deprecated.V1Beta1 = &clusterv1.MachinePoolV1Beta1DeprecatedStatus{}
	}
	return pool.Status.Deprecated.V1Beta1
}
