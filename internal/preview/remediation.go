package preview

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// RemediationMaxInFlightAnnotation on a MachinePool (or its infra pool, which
// wins) caps the pool's remediations in flight: an integer, or a percentage
// of the desired replicas rounded up, as a MachineDeployment's
// spec.remediation.maxInFlight. Unset, remediation is bounded by the
// MachineHealthCheck's triggerIf and the rollout budgets only, as upstream's
// MachineSet remediates without maxInFlight.
const RemediationMaxInFlightAnnotation = "mpool.dev/remediation-max-in-flight"

// Remediate reports what a pool Machine says about its remediation, read as
// upstream's MachineSet reads its Machines. For a live instance: whether a
// MachineHealthCheck found it unhealthy and left the remediation to the
// owner (HealthCheckSucceeded and OwnerRemediated both False). For an
// instance being removed (deleting): whether the removal is a remediation
// in flight (OwnerRemediated False with reason MachineDeleting, which the
// engine sets before it starts).
func Remediate(machine *clusterv1.Machine, deleting bool) bool {
	if machine == nil {
		return false
	}
	owner := meta.FindStatusCondition(machine.Status.Conditions, clusterv1.MachineOwnerRemediatedCondition)
	if owner == nil || owner.Status != metav1.ConditionFalse {
		return false
	}
	if deleting {
		return owner.Reason == clusterv1.MachineSetMachineRemediationMachineDeletingReason
	}
	return meta.IsStatusConditionFalse(machine.Status.Conditions, clusterv1.MachineHealthCheckSucceededCondition)
}

// Unhealthy returns why a MachineHealthCheck found machine unhealthy: the
// first line of its HealthCheckSucceeded message (without the list marker),
// or the condition's reason; "" when it is not unhealthy.
func Unhealthy(machine *clusterv1.Machine) string {
	if machine == nil {
		return ""
	}
	c := meta.FindStatusCondition(machine.Status.Conditions, clusterv1.MachineHealthCheckSucceededCondition)
	if c == nil || c.Status != metav1.ConditionFalse {
		return ""
	}
	for _, line := range strings.Split(c.Message, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "*"))
		if line != "" && line != "Health check failed:" {
			return line
		}
	}
	return c.Reason
}

// MaxRemediationsInFlight resolves the RemediationMaxInFlightAnnotation of
// the pool's objects (later ones win) against the desired replicas; nil
// when none sets it.
func MaxRemediationsInFlight(desired int32, objs ...metav1.Object) (*int32, error) {
	v := lastAnnotation(RemediationMaxInFlightAnnotation, objs)
	if v == "" {
		return nil, nil
	}
	is := intstr.Parse(v)
	if is.Type == intstr.String && !strings.HasSuffix(is.StrVal, "%") {
		return nil, fmt.Errorf("annotation %s: %q is neither an integer nor a percentage", RemediationMaxInFlightAnnotation, v)
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&is, int(desired), true)
	if err != nil {
		return nil, fmt.Errorf("annotation %s: %w", RemediationMaxInFlightAnnotation, err)
	}
	if n < 0 {
		return nil, fmt.Errorf("annotation %s: %q is negative", RemediationMaxInFlightAnnotation, v)
	}
	return ptr.To(int32(n)), nil
}
