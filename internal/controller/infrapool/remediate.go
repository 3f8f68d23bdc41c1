package infrapool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	v1beta1conditions "sigs.k8s.io/cluster-api/util/conditions/deprecated/v1beta1"
	"sigs.k8s.io/cluster-api/util/patch"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/events"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/rollout"
)

// Remediation: a MachineHealthCheck (upstream's, in every mode) marks an
// unhealthy pool Machine with HealthCheckSucceeded and OwnerRemediated False
// and leaves the remediation to the Machine's owner. For a pool Machine the
// owner's part is the engine's: the planner replaces the instance like one
// marked for deletion, first, within maxUnavailable and the pool's cap on
// remediations in flight (preview.RemediationMaxInFlightAnnotation), and the
// engine cordons, drains (bounded by nodeDrainTimeout) and deletes it; the
// group then creates its replacement. A cloud that runs its own rollouts
// deletes no chosen instance; one that can replace it
// (scalegroup.Capabilities.ReplaceInstances: an EKS managed node group,
// through its Auto Scaling group) terminates it after the drain and
// launches the replacement itself, the capacity unchanged. The Machine's OwnerRemediated
// condition says what happens, with upstream's MachineSet reasons: set to
// MachineDeleting before the removal starts (so a restarted manager counts
// the remediation as in flight and never starts another for it),
// RemediationDeferred while the cap holds it back, and removed once the
// check finds the Machine healthy again.

// remediation is what the engine found to say about remediation in one
// pass, for the Remediating condition.
type remediation struct {
	// inFlight are the instances being remediated (started now or before),
	// by ID, with why.
	inFlight map[string]string
	// deferred are the unhealthy instances the cap holds back.
	deferred []string
	// capErr is an unreadable cap annotation (nothing is remediated then).
	capErr error
	// unsupported are the unhealthy instances of a cloud that can neither
	// remove nor replace chosen instances.
	unsupported []string
}

// cannotRemediateMessage is the OwnerRemediated message of an unhealthy
// instance of a cloud that can neither remove nor replace chosen
// instances.
const cannotRemediateMessage = "Machine won't be remediated by mpool: its scale group can neither remove nor replace a chosen instance; " +
	"rely on the cloud's own repair, or replace the instance in the cloud"

// remediate patches the Machines of the plan's remediations before their
// removal starts, those the cap defers, and those found healthy again. It
// runs before the victims are removed, so that the Machine says
// MachineDeleting before its instance goes.
func (e *Engine) remediate(ctx context.Context, s *pass) error {
	if !s.planned || s.input.Paused {
		return nil
	}
	var errs []error
	started := make([]string, 0)
	for _, v := range s.plan.Delete {
		if v.Reason != rollout.ReasonRemediate {
			continue
		}
		m := s.machineOf(v.ID)
		why := preview.Unhealthy(m)
		if e.cloudRollouts() && !e.caps.ReplaceInstances {
			// A cloud that runs its own rollouts, removes no chosen
			// instance and replaces none: the instance stays, and the
			// Machine says why.
			s.skipRemoval[v.ID] = true
			s.remediation.unsupported = append(s.remediation.unsupported, v.ID)
			if m != nil && !conditionIs(m, clusterv1.MachineOwnerRemediatedCondition, clusterv1.MachineSetMachineCannotBeRemediatedReason) {
				if err := e.patchOwnerRemediated(ctx, m, &metav1.Condition{
					Type: clusterv1.MachineOwnerRemediatedCondition, Status: metav1.ConditionFalse,
					Reason: clusterv1.MachineSetMachineCannotBeRemediatedReason, Message: cannotRemediateMessage,
				}, nil); err != nil {
					errs = append(errs, err)
				}
			}
			continue
		}
		s.remediation.inFlight[v.ID] = why
		if m == nil || conditionIs(m, clusterv1.MachineOwnerRemediatedCondition, clusterv1.MachineSetMachineRemediationMachineDeletingReason) {
			continue
		}
		err := e.patchOwnerRemediated(ctx, m, &metav1.Condition{
			Type:    clusterv1.MachineOwnerRemediatedCondition,
			Status:  metav1.ConditionFalse,
			Reason:  clusterv1.MachineSetMachineRemediationMachineDeletingReason,
			Message: "Machine is deleting",
		}, &clusterv1.Condition{Type: clusterv1.MachineOwnerRemediatedV1Beta1Condition, Status: corev1.ConditionTrue})
		if err != nil {
			// Not started: the instance is not removed in this pass.
			errs = append(errs, err)
			s.skipRemoval[v.ID] = true
			continue
		}
		started = append(started, v.ID)
		log.FromContext(ctx).Info("Remediating an unhealthy instance", "instance", v.ID, "machine", klog.KObj(m), "why", why)
		how := "draining and deleting it, the pool replaces it"
		if e.replaces(v.Reason) {
			how = "draining and terminating it, the cloud replaces it"
		}
		e.event(s, s.objects[v.ID], corev1.EventTypeWarning, events.Remediating, events.ActionDelete,
			"Remediating instance %s (Machine %s): %s; %s", v.ID, m.Name, why, how)
	}
	for _, in := range s.input.Instances {
		if in.State == rollout.StateDeleting && in.Remediate {
			if _, ok := s.remediation.inFlight[in.ID]; !ok {
				s.remediation.inFlight[in.ID] = preview.Unhealthy(s.machineOf(in.ID))
			}
		}
	}
	s.remediation.deferred = s.plan.Deferred
	for _, id := range s.plan.Deferred {
		m := s.machineOf(id)
		if m == nil || conditionIs(m, clusterv1.MachineOwnerRemediatedCondition, clusterv1.MachineSetMachineRemediationDeferredReason) {
			continue
		}
		msg := fmt.Sprintf("Waiting because there are already too many remediations in progress (%s is %s)",
			preview.RemediationMaxInFlightAnnotation, remediationCap(s))
		if err := e.patchOwnerRemediated(ctx, m, &metav1.Condition{
			Type: clusterv1.MachineOwnerRemediatedCondition, Status: metav1.ConditionFalse,
			Reason: clusterv1.MachineSetMachineRemediationDeferredReason, Message: msg,
		}, nil); err != nil {
			errs = append(errs, err)
			continue
		}
		e.event(s, s.objects[id], corev1.EventTypeNormal, events.RemediationDeferred, events.ActionDelete,
			"Remediation of instance %s (Machine %s) deferred: %s", id, m.Name, msg)
	}
	// As upstream's MachineSet: a Machine found healthy again while its
	// remediation waited is no longer to be remediated.
	for id, obj := range s.objects {
		m := s.machines[obj.GetName()]
		if m == nil || !m.DeletionTimestamp.IsZero() || preview.HasAnnotation(obj.GetAnnotations(), preview.DrainStartedAnnotation) {
			continue
		}
		if meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.MachineHealthCheckSucceededCondition) &&
			meta.IsStatusConditionFalse(m.Status.Conditions, clusterv1.MachineOwnerRemediatedCondition) {
			if err := e.patchOwnerRemediated(ctx, m, nil, nil); err != nil {
				errs = append(errs, err)
				continue
			}
			log.FromContext(ctx).Info("Unhealthy instance recovered before its remediation", "instance", id, "machine", klog.KObj(m))
		}
	}
	return errors.Join(errs...)
}

// patchOwnerRemediated sets (or, when c is nil, removes) m's OwnerRemediated
// condition, and its v1beta1 counterpart, with upstream's patch helper, as
// upstream's MachineSet does. m is the cache's and is not changed.
func (e *Engine) patchOwnerRemediated(ctx context.Context, cached *clusterv1.Machine, c *metav1.Condition, v1beta1 *clusterv1.Condition) error {
	m := cached.DeepCopy()
	h, err := patch.NewHelper(m, e.c)
	if err != nil {
		return fmt.Errorf("patching Machine %s: %w", m.Name, err)
	}
	if c == nil {
		conditions.Delete(m, clusterv1.MachineOwnerRemediatedCondition)
		v1beta1conditions.Delete(m, clusterv1.MachineOwnerRemediatedV1Beta1Condition)
	} else {
		conditions.Set(m, *c)
		if v1beta1 != nil {
			v1beta1conditions.Set(m, v1beta1)
		}
	}
	err = h.Patch(ctx, m,
		patch.WithOwnedV1Beta1Conditions{Conditions: []clusterv1.ConditionType{clusterv1.MachineOwnerRemediatedV1Beta1Condition}},
		patch.WithOwnedConditions{Conditions: []string{clusterv1.MachineOwnerRemediatedCondition}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("setting the OwnerRemediated condition of Machine %s: %w", m.Name, err)
	}
	return nil
}

// machineOf returns the pool Machine of instance id, nil when there is none.
func (s *pass) machineOf(id string) *clusterv1.Machine {
	if obj := s.objects[id]; obj != nil {
		return s.machines[obj.GetName()]
	}
	return nil
}

func conditionIs(m *clusterv1.Machine, t, reason string) bool {
	c := meta.FindStatusCondition(m.Status.Conditions, t)
	return c != nil && c.Status == metav1.ConditionFalse && c.Reason == reason
}

func remediationCap(s *pass) string {
	if c := s.input.MaxRemediationsInFlight; c != nil {
		return fmt.Sprint(*c)
	}
	return "unset"
}

// remediatingCondition says whether unhealthy instances are being replaced,
// as upstream's MachineSet Remediating condition does for its Machines.
func remediatingCondition(s *pass) metav1.Condition {
	c := metav1.Condition{Type: infrav1.RemediatingCondition}
	r := s.remediation
	switch {
	case r.capErr != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1.InvalidSpecReason, r.capErr.Error()+"; no instance is remediated"
	case len(r.unsupported) > 0 && len(r.inFlight) == 0:
		c.Status, c.Reason = metav1.ConditionFalse, clusterv1.MachineSetMachineCannotBeRemediatedReason
		c.Message = fmt.Sprintf("%d unhealthy instance%s (%s) not remediated: %s", len(r.unsupported), plural(len(r.unsupported)),
			summarize(r.unsupported), strings.TrimPrefix(cannotRemediateMessage, "Machine won't be remediated by mpool: "))
	case len(r.inFlight) > 0 || len(r.deferred) > 0:
		c.Status, c.Reason = metav1.ConditionTrue, clusterv1.MachineSetRemediatingReason
		ids := make([]string, 0, len(r.inFlight))
		for id := range r.inFlight {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		parts := make([]string, 0, len(ids))
		for _, id := range ids {
			if why := r.inFlight[id]; why != "" {
				parts = append(parts, fmt.Sprintf("%s: %s", id, why))
			} else {
				parts = append(parts, id)
			}
		}
		var msgs []string
		if len(ids) > 0 {
			msgs = append(msgs, fmt.Sprintf("remediating %d instance%s (%s)", len(ids), plural(len(ids)), strings.Join(parts, "; ")))
		}
		if len(r.deferred) > 0 {
			msgs = append(msgs, fmt.Sprintf("%d unhealthy instance%s waiting (%s): %s is %s",
				len(r.deferred), plural(len(r.deferred)), summarize(r.deferred), preview.RemediationMaxInFlightAnnotation, remediationCap(s)))
		}
		c.Message = strings.Join(msgs, "; ")
	default:
		c.Status, c.Reason = metav1.ConditionFalse, clusterv1.MachineSetNotRemediatingReason
	}
	return c
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
