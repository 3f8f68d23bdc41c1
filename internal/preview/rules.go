package preview

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/rollout"
)

// Annotations the engine reads or writes, and `mpool rollout` with it.
const (
	// RolloutPausedAnnotation set to "true" on a MachinePool or its infra
	// pool pauses the rollout: nothing is created or deleted, the status is
	// still reported.
	RolloutPausedAnnotation = "mpool.dev/rollout-paused"
	// DrainStartedAnnotation on a per-instance object records (RFC 3339)
	// when the removal of its instance started: its Node is cordoned and
	// drained, then the instance is deleted. A restarted manager resumes
	// from it and measures nodeDrainTimeout from it.
	DrainStartedAnnotation = "mpool.dev/drain-started"
	// ManagedCapacityAnnotation on a pool whose MachinePool carries
	// cluster.x-k8s.io/replicas-managed-by records "<capacity>/<replicas>":
	// the group capacity the engine last left and the replica count it
	// planned for. A group capacity that differs was changed by the external
	// actor; one that matches means the replicas are still those recorded,
	// even while the engine's own surge or victims still draining are
	// counted in the capacity.
	ManagedCapacityAnnotation = "mpool.dev/managed-capacity"
)

// DefaultJoinTimeout is how long an instance may take from its creation
// until its Node joins before the engine replaces it, like Cluster API's
// MachineHealthCheck nodeStartupTimeout.
const DefaultJoinTimeout = 10 * time.Minute

// PlannerInstance completes the planner's view of one instance, the
// engine's and `mpool rollout plan`'s alike: in carries the ID, zone,
// creation time, model and when its Node became Ready; state is the
// instance's state as the engine reports it; obj (its per-instance object)
// and machine (its pool Machine) may be nil. started is true when the engine
// remembers starting the removal although obj does not show it yet.
//
// Only a Running instance can be Ready. An instance whose removal started —
// the drain-started annotation, obj or machine being deleted, or started —
// is Deleting and never Ready. The delete-machine annotation on obj or
// machine marks it for deletion; machine's conditions say whether a
// MachineHealthCheck asks for its remediation (see Remediate).
func PlannerInstance(in rollout.Instance, state contract.InstanceState, obj metav1.Object, machine *clusterv1.Machine, started bool) rollout.Instance {
	in.State = PlannerState(state)
	if in.State != rollout.StateRunning {
		in.ReadySince = nil
	}
	removing, marked := RemovalMarks(obj, machine)
	if removing || started {
		in.State = rollout.StateDeleting
		in.ReadySince = nil
	}
	in.MarkedForDeletion = marked
	in.Remediate = Remediate(machine, in.State == rollout.StateDeleting)
	in.Quarantined = obj != nil && HasAnnotation(obj.GetAnnotations(), QuarantinedAnnotation)
	return in
}

// RemovalMarks reads what an instance's per-instance object and Machine
// (either may be nil) say about its removal: removing when the drain
// started or either is being deleted, marked when either carries the
// cluster.x-k8s.io/delete-machine annotation.
func RemovalMarks(obj metav1.Object, machine *clusterv1.Machine) (removing, marked bool) {
	if obj != nil {
		a := obj.GetAnnotations()
		removing = HasAnnotation(a, DrainStartedAnnotation) || !obj.GetDeletionTimestamp().IsZero()
		marked = HasAnnotation(a, clusterv1.DeleteMachineAnnotation)
	}
	if machine != nil {
		removing = removing || !machine.DeletionTimestamp.IsZero()
		marked = marked || HasAnnotation(machine.Annotations, clusterv1.DeleteMachineAnnotation)
	}
	return removing, marked
}

// PlannerState maps a reported instance state onto the planner's: the
// states before running (Pending, Booting, and anything unknown) are all
// Pending.
func PlannerState(s contract.InstanceState) rollout.InstanceState {
	switch s {
	case contract.InstanceRunning:
		return rollout.StateRunning
	case contract.InstanceFailed:
		return rollout.StateFailed
	case contract.InstanceDeleting:
		return rollout.StateDeleting
	default:
		return rollout.StatePending
	}
}

// Seed derives a stable random seed from a pool's UID, so that a Random
// delete policy picks the same instances on every reconcile.
func Seed(uid string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(uid))
	return int64(h.Sum64())
}

// NodeReadySince returns when node last became Ready, nil when it is not
// Ready (or is nil, or is being deleted).
func NodeReadySince(node *corev1.Node) *time.Time {
	if node == nil || !node.DeletionTimestamp.IsZero() {
		return nil
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status != corev1.ConditionTrue {
				return nil
			}
			t := c.LastTransitionTime.Time
			return &t
		}
	}
	return nil
}

// HasAnnotation reports whether a holds key, whatever its value.
func HasAnnotation(a map[string]string, key string) bool {
	_, ok := a[key]
	return ok
}

// ManagedCapacity is what the engine last did to the group of a pool whose
// replicas an external actor manages (ManagedCapacityAnnotation).
type ManagedCapacity struct {
	// Capacity is the group capacity the engine left.
	Capacity int32
	// Replicas is the replica count it planned for.
	Replicas int32
}

// String formats r as ManagedCapacityAnnotation's value.
func (r ManagedCapacity) String() string { return fmt.Sprintf("%d/%d", r.Capacity, r.Replicas) }

// ParseManagedCapacity reads ManagedCapacityAnnotation's value; ok is false
// when it is absent or malformed.
func ParseManagedCapacity(v string) (r ManagedCapacity, ok bool) {
	c, n, found := strings.Cut(v, "/")
	if !found {
		return r, false
	}
	capacity, err1 := strconv.ParseInt(c, 10, 32)
	replicas, err2 := strconv.ParseInt(n, 10, 32)
	if err1 != nil || err2 != nil || capacity < 0 || replicas < 0 {
		return r, false
	}
	return ManagedCapacity{Capacity: int32(capacity), Replicas: int32(replicas)}, true
}

// Strategy maps an infra pool's deployment strategy (AzureMachinePool,
// LocalMachinePool) onto the planner's, the same for every provider. Unset
// fields take the planner's defaults (maxSurge 1, maxUnavailable 0,
// Oldest). An error names the field to fix.
func Strategy(s infrav1.MachinePoolDeploymentStrategy) (rollout.Strategy, error) {
	if s.Type != "" && s.Type != infrav1.RollingUpdateMachinePoolDeploymentStrategyType {
		return rollout.Strategy{}, fmt.Errorf("spec.strategy.type %q is not supported; use RollingUpdate", s.Type)
	}
	ru := s.RollingUpdate
	if ru == nil {
		return rollout.Strategy{}, nil
	}
	out := rollout.Strategy{
		MaxSurge:       cloneIntOrString(ru.MaxSurge),
		MaxUnavailable: cloneIntOrString(ru.MaxUnavailable),
	}
	switch ru.DeletePolicy {
	case "", infrav1.OldestDeletePolicyType:
		out.DeletePolicy = rollout.DeletePolicyOldest
	case infrav1.NewestDeletePolicyType:
		out.DeletePolicy = rollout.DeletePolicyNewest
	case infrav1.RandomDeletePolicyType:
		out.DeletePolicy = rollout.DeletePolicyRandom
	default:
		return rollout.Strategy{}, fmt.Errorf("spec.strategy.rollingUpdate.deletePolicy %q is not one of Oldest, Newest, Random", ru.DeletePolicy)
	}
	if _, _, err := rollout.ResolveBudgets(1, out); err != nil {
		return rollout.Strategy{}, fmt.Errorf("spec.strategy.rollingUpdate: %w", err)
	}
	return out, nil
}

func cloneIntOrString(v *intstr.IntOrString) *intstr.IntOrString {
	if v == nil {
		return nil
	}
	c := *v
	return &c
}
