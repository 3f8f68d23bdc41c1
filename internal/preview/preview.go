package preview

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/capi"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/rollout"
)

// Model hashes of a preview. The API server does not hold the instances'
// model hashes, only whether each runs the pool's current model, so a
// preview's instances are either on CurrentModel or on
// StaleModel.
const (
	// CurrentModel stands for the pool's current model.
	CurrentModel = "current"
	// StaleModel stands for any older model.
	StaleModel = "stale"
)

// State is what the management cluster's API server holds about one
// infra pool: the owner MachinePool's spec and what the engine last reported
// in the per-instance objects. Input turns it into the planner's
// input without asking the cloud, so that `mpool rollout plan` shows what
// the engine would do next. It is provider-neutral: the per-instance objects
// are described in the infra machine pool contract's terms.
type State struct {
	// MachinePool is the owner MachinePool: spec.replicas (unset means 1,
	// as the engine reads it) and spec.minReadySeconds.
	MachinePool *clusterv1.MachinePool
	// PoolUID is the infra pool's UID: the engine seeds the Random delete
	// policy with it.
	PoolUID types.UID
	// PoolAnnotations are the infra pool's annotations. For a MachinePool
	// whose replicas an external autoscaler manages, ManagedCapacityAnnotation
	// holds the replica count the engine last planned for; spec.replicas
	// may then include the engine's own surge.
	PoolAnnotations map[string]string
	// Strategy is the infra pool's rolling update strategy as its adapter
	// maps it. MinReadySeconds is taken from MachinePool, as the engine does.
	Strategy rollout.Strategy
	// InstanceKind is the kind of the per-instance objects. A Machine is
	// matched to the object its infrastructureRef names when the ref is of
	// this kind.
	InstanceKind string
	// Instances are the pool's per-instance objects.
	Instances []Instance
	// Machines are the MachinePool's Machines (its pool-name label).
	Machines []clusterv1.Machine
	// Nodes are the workload cluster's Nodes by providerID, nil when they
	// could not be read. When set, an instance is Ready since its Node's
	// Ready condition last changed, as the engine reads it; when nil, since
	// the Ready condition of its per-instance object changed.
	Nodes map[string]*corev1.Node
	// SkipModelReconciliation is the manager's
	// SkipMachinePoolModelReconciliation feature gate.
	SkipModelReconciliation bool
	// Now is the time availability is measured against.
	Now time.Time
}

// Instance is one per-instance object (LocalMachinePoolMachine,
// AzureMachinePoolMachine, ...) as its provider's contract.Reader reads it.
type Instance struct {
	// ObjectMeta is the object's metadata: its name, creation time (the
	// instance's age), deletion time and annotations (drain-started,
	// delete-machine).
	ObjectMeta metav1.ObjectMeta
	// InstanceView is the object in provider-neutral terms: an empty
	// InstanceID makes the object's name stand in.
	contract.InstanceView
}

// ID returns the instance's ID within its group.
func (p *Instance) ID() string {
	if p.InstanceID != "" {
		return p.InstanceID
	}
	return p.ObjectMeta.Name
}

// Input translates a pool's reported state into the planner's input,
// with the engine's own rules (plannerInstance, seed): replicas and
// minReadySeconds from the MachinePool, the seed from the pool's UID, the
// delete-machine marks of the objects and Machines, and an instance being
// removed (drain-started, or its object or Machine being deleted) as
// Deleting. What the API server does not hold is approximated:
//
//   - The instance's creation time is its object's creationTimestamp, which
//     has whole seconds: instances created within one second are ordered by
//     ID, as the planner breaks ties.
//   - An instance is on CurrentModel when it is up to date
//     or the engine has not reported it yet (new instances are
//     created on the current model), else on StaleModel.
//   - An instance is Ready since its Node became Ready (with Nodes), else
//     since its object's InstanceReady (or Ready) condition became True,
//     else since Now.
//
// Instances the cloud has but the engine has not made objects for yet are
// unknown to it. The input is never paused: Input shows what the
// engine would do once resumed (see RolloutPaused).
func Input(s State) (rollout.Input, error) {
	if s.MachinePool == nil {
		return rollout.Input{}, fmt.Errorf("previewing the rollout: no MachinePool")
	}
	strategy := s.Strategy
	strategy.MinReadySeconds = ptr.Deref(s.MachinePool.Spec.Template.Spec.MinReadySeconds, 0)
	in := rollout.Input{
		Desired:                 ptr.Deref(s.MachinePool.Spec.Replicas, 1),
		Strategy:                strategy,
		ModelHash:               CurrentModel,
		SkipModelReconciliation: s.SkipModelReconciliation,
		Now:                     s.Now,
		RandSeed:                Seed(string(s.PoolUID)),
		Instances:               make([]rollout.Instance, 0, len(s.Instances)),
	}
	if capi.ReplicasManagedExternally(s.MachinePool) {
		if rec, ok := ParseManagedCapacity(s.PoolAnnotations[ManagedCapacityAnnotation]); ok {
			in.Desired = rec.Replicas
		}
	}
	// The cap on remediations in flight, as the engine reads it; an
	// unreadable one stops remediation there too.
	pool := &metav1.ObjectMeta{Annotations: s.PoolAnnotations}
	maxInFlight, err := MaxRemediationsInFlight(in.Desired, s.MachinePool, pool)
	if err != nil {
		maxInFlight = ptr.To[int32](0)
	}
	in.MaxRemediationsInFlight = maxInFlight
	machines := make(map[string]*clusterv1.Machine, len(s.Machines))
	for i := range s.Machines {
		m := &s.Machines[i]
		if ref := m.Spec.InfrastructureRef; ref.Kind == s.InstanceKind {
			machines[ref.Name] = m
		}
	}
	for i := range s.Instances {
		p := &s.Instances[i]
		model := CurrentModel
		if p.Reported && !p.UpToDate {
			model = StaleModel
		}
		in.Instances = append(in.Instances, PlannerInstance(rollout.Instance{
			ID:         p.ID(),
			Zone:       p.Zone,
			CreatedAt:  p.ObjectMeta.CreationTimestamp.Time,
			ModelHash:  model,
			ReadySince: readySince(p, s.Nodes, s.Now),
		}, p.State, &p.ObjectMeta, machines[p.ObjectMeta.Name], false))
	}
	return in, nil
}

// readySince says since when p is Ready, nil when it is not.
func readySince(p *Instance, nodes map[string]*corev1.Node, now time.Time) *time.Time {
	if nodes != nil {
		if p.ProviderID == "" {
			return nil
		}
		return NodeReadySince(nodes[p.ProviderID])
	}
	if !p.Ready {
		return nil
	}
	for _, t := range []string{infrav1.InstanceReadyCondition, clusterv1.ReadyCondition} {
		for _, c := range p.Conditions {
			if c.Type == t && c.Status == metav1.ConditionTrue && !c.LastTransitionTime.IsZero() {
				since := c.LastTransitionTime.Time
				return &since
			}
		}
	}
	return &now
}

// RolloutPaused says whether the rollout of a pool is paused: the
// mpool.dev/rollout-paused annotation is "true" on its MachinePool or on the
// infra pool (poolAnnotations), as the engine reads it, or the engine
// paused the rollout itself (see SelfPaused).
func RolloutPaused(mp *clusterv1.MachinePool, poolAnnotations map[string]string) bool {
	if reason, _ := SelfPaused(poolAnnotations); reason != "" {
		return true
	}
	return mp != nil && mp.Annotations[RolloutPausedAnnotation] == "true" || poolAnnotations[RolloutPausedAnnotation] == "true"
}

// NewInstancePrefix starts the IDs Project gives the instances it
// assumes the engine creates; the cloud picks the real IDs.
const NewInstancePrefix = "+new-"

// Wave is one step of a projected rollout: the planner's decision on one
// observation, and how many instances it adds.
type Wave struct {
	// Result is the planner's decision.
	Result rollout.Result
	// Create is how many instances the engine creates on the current model:
	// Result.TargetCapacity less the live instances the plan keeps.
	Create int32
}

// Project shows how a rollout would unfold from in: the first wave is
// rollout.Plan(in) itself; each next one plans again on the group as it
// would be if every victim of the previous wave were gone and every other
// instance — the new ones included — were Running and available. New
// instances run the current model, are newer than any other and get IDs
// starting with NewInstancePrefix. It stops when the pool has converged
// (converged is true), when a wave would change nothing (the pool is stuck,
// for a reason the last wave's Waiting gives), or after maxWaves waves
// (default: enough for every instance to be replaced twice).
//
// The projection is the engine's order only as long as its assumption
// holds: an instance that fails, a Node that stays NotReady or a change to
// the pool changes the later waves.
func Project(in rollout.Input, maxWaves int) (waves []Wave, converged bool, err error) {
	if maxWaves <= 0 {
		maxWaves = 2*(len(in.Instances)+int(max(in.Desired, 0))) + 2
	}
	cur := in
	cur.Instances = slices.Clone(in.Instances)
	latest := in.Now
	for _, inst := range in.Instances {
		if inst.CreatedAt.After(latest) {
			latest = inst.CreatedAt
		}
	}
	available := in.Now.Add(-time.Duration(in.Strategy.MinReadySeconds) * time.Second)
	created := 0
	for len(waves) < maxWaves {
		res, err := rollout.Plan(cur)
		if err != nil {
			return waves, false, err
		}
		victims := make(map[string]bool, len(res.Delete))
		for _, v := range res.Delete {
			victims[v.ID] = true
		}
		next := make([]rollout.Instance, 0, res.TargetCapacity)
		for _, inst := range cur.Instances {
			if victims[inst.ID] || inst.State == rollout.StateFailed || inst.State == rollout.StateDeleting {
				continue
			}
			inst.State, inst.ReadySince = rollout.StateRunning, &available
			next = append(next, inst)
		}
		w := Wave{Result: res, Create: max(0, res.TargetCapacity-int32(len(next)))}
		waves = append(waves, w)
		if res.Done {
			return waves, true, nil
		}
		changed := len(res.Delete) > 0 || w.Create > 0
		for range w.Create {
			created++
			next = append(next, rollout.Instance{
				ID:         fmt.Sprintf("%s%d", NewInstancePrefix, created),
				CreatedAt:  latest.Add(time.Duration(created) * time.Second),
				ModelHash:  in.ModelHash,
				State:      rollout.StateRunning,
				ReadySince: &available,
			})
		}
		if !changed && !becameAvailable(cur.Instances, next, available) {
			return waves, false, nil
		}
		cur.Instances = next
	}
	return waves, false, nil
}

// becameAvailable reports whether the projection made an instance of
// before available, at the time available, that was not: a wave that only
// waits for instances to become available still makes progress.
func becameAvailable(before, after []rollout.Instance, available time.Time) bool {
	was := make(map[string]bool, len(before))
	for _, in := range before {
		was[in.ID] = in.State == rollout.StateRunning && in.ReadySince != nil && !in.ReadySince.After(available)
	}
	for _, in := range after {
		if ok, seen := was[in.ID]; seen && !ok {
			return true
		}
	}
	return false
}

// IsNewInstance says whether id is one Project made up.
func IsNewInstance(id string) bool { return strings.HasPrefix(id, NewInstancePrefix) }
