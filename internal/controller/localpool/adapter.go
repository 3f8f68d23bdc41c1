package localpool

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/cloudsim"
	"github.com/mpool-dev/mpool/internal/controller/infrapool"
	"github.com/mpool-dev/mpool/internal/provider/local"
	"github.com/mpool-dev/mpool/internal/rollout"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// maxGroupName keeps group names DNS-1123 labels: the simulated cloud's
// Node names are "<group>-<instance>".
const maxGroupName = 63

// Tags the local provider puts on its groups.
const (
	// TagCluster names the Cluster a group's instances belong to.
	TagCluster = "mpool.dev/cluster"
	// TagPool names the LocalMachinePool ("namespace/name") that owns a group.
	TagPool = "mpool.dev/pool"
)

// Adapter maps LocalMachinePool and LocalMachinePoolMachine onto the
// infrapool engine.
type Adapter struct{}

var _ infrapool.Adapter = Adapter{}

// Provider implements infrapool.Adapter.
func (Adapter) Provider() string { return local.ProviderName }

// PoolKind implements infrapool.Adapter.
func (Adapter) PoolKind() string { return "LocalMachinePool" }

// InstanceKind implements infrapool.Adapter.
func (Adapter) InstanceKind() string { return infrav1.LocalMachinePoolMachineKind }

// PoolFinalizer implements infrapool.Adapter.
func (Adapter) PoolFinalizer() string { return infrav1.LocalMachinePoolFinalizer }

// InstanceFinalizer implements infrapool.Adapter.
func (Adapter) InstanceFinalizer() string { return infrav1.LocalMachinePoolMachineFinalizer }

// NewPool implements infrapool.Adapter.
func (Adapter) NewPool() infrapool.Pool { return &infrav1.LocalMachinePool{} }

// NewInstance implements infrapool.Adapter.
func (Adapter) NewInstance() infrapool.InstanceObject { return &infrav1.LocalMachinePoolMachine{} }

// NewInstanceList implements infrapool.Adapter.
func (Adapter) NewInstanceList() client.ObjectList { return &infrav1.LocalMachinePoolMachineList{} }

// GroupName implements infrapool.Adapter.
func (Adapter) GroupName(pool infrapool.Pool) string {
	return infrapool.GroupName(pool.GetNamespace(), pool.GetName(), maxGroupName)
}

// Desired implements infrapool.Adapter. The model's Extra carries the
// Kubernetes version the simulated Nodes report (hashed) and the
// simulation knobs (applied in place, not hashed).
func (Adapter) Desired(p infrapool.Pool, owner infrapool.Owner) (infrapool.Desired, error) {
	pool := p.(*infrav1.LocalMachinePool)
	t := pool.Spec.Template
	m := scalegroup.Model{
		InstanceType: t.InstanceType,
		Image:        t.Image,
		Zones:        slices.Clone(t.Zones),
		CustomData:   owner.BootstrapData,
		Tags:         map[string]string{TagPool: pool.Namespace + "/" + pool.Name},
		Extra:        map[string]string{},
	}
	if owner.MachinePool != nil && owner.MachinePool.Spec.ClusterName != "" {
		m.Tags[TagCluster] = owner.MachinePool.Spec.ClusterName
	}
	if owner.Version != "" {
		m.Extra[cloudsim.ExtraVersion] = owner.Version
	}
	inPlace, err := simulation(pool.Spec.Simulation, m.Extra)
	if err != nil {
		return infrapool.Desired{}, err
	}
	strategy, err := Strategy(pool.Spec.Strategy)
	if err != nil {
		return infrapool.Desired{}, err
	}
	return infrapool.Desired{Model: m, InPlace: inPlace, Strategy: strategy}, nil
}

// simulation writes the simulation knobs into extra and returns their keys.
func simulation(sim *infrav1.LocalSimulation, extra map[string]string) ([]string, error) {
	if sim == nil {
		return nil, nil
	}
	var keys []string
	if sim.BootDelay != nil {
		extra[local.ExtraBootDelay] = sim.BootDelay.Duration.String()
		keys = append(keys, local.ExtraBootDelay)
	}
	if sim.BootJitter != nil {
		extra[local.ExtraBootJitter] = sim.BootJitter.Duration.String()
		keys = append(keys, local.ExtraBootJitter)
	}
	if sim.FailureRate != nil {
		f, err := sim.FailureRateValue()
		if err != nil {
			return nil, fmt.Errorf("spec.simulation: %w", err)
		}
		extra[local.ExtraFailureRate] = fmt.Sprint(f)
		keys = append(keys, local.ExtraFailureRate)
	}
	return keys, nil
}

// Strategy maps an infra pool's deployment strategy onto the planner's.
// Unset fields take the planner's defaults (maxSurge 1, maxUnavailable 0,
// Oldest).
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

// WritePool implements infrapool.Adapter.
func (Adapter) WritePool(p infrapool.Pool, r infrapool.PoolReport) {
	pool := p.(*infrav1.LocalMachinePool)
	st := &pool.Status
	st.ModelHash = r.ModelHash
	st.InfrastructureMachineKind = r.InfrastructureMachineKind
	st.FailureReason, st.FailureMessage = r.FailureReason, r.FailureMessage
	st.ObservedGeneration = r.ObservedGeneration
	if !r.Observed {
		return
	}
	pool.Spec.ProviderIDList = r.ProviderIDList
	st.Ready = r.Ready
	st.Replicas = r.Replicas
	st.Instances = nil
	for _, in := range r.Instances {
		st.Instances = append(st.Instances, infrav1.LocalMachinePoolInstanceStatus{
			InstanceID:         in.InstanceID,
			ProviderID:         in.ProviderID,
			Zone:               in.Zone,
			State:              infrav1.LocalInstanceState(in.State),
			Ready:              in.Ready,
			LatestModelApplied: in.LatestModelApplied,
			ModelHash:          in.ModelHash,
		})
	}
}

// InstanceID implements infrapool.Adapter.
func (Adapter) InstanceID(obj infrapool.InstanceObject) string {
	return obj.(*infrav1.LocalMachinePoolMachine).Spec.InstanceID
}

// ProviderID implements infrapool.Adapter.
func (Adapter) ProviderID(obj infrapool.InstanceObject) string {
	return obj.(*infrav1.LocalMachinePoolMachine).Spec.ProviderID
}

// WriteInstanceSpec implements infrapool.Adapter.
func (Adapter) WriteInstanceSpec(obj infrapool.InstanceObject, instanceID, providerID string) {
	m := obj.(*infrav1.LocalMachinePoolMachine)
	m.Spec.InstanceID, m.Spec.ProviderID = instanceID, providerID
}

// WriteInstanceStatus implements infrapool.Adapter.
func (Adapter) WriteInstanceStatus(obj infrapool.InstanceObject, r infrapool.InstanceReport) {
	st := &obj.(*infrav1.LocalMachinePoolMachine).Status
	st.Ready = r.Ready
	st.LatestModelApplied = r.LatestModelApplied
	st.Zone = r.Zone
	st.State = infrav1.LocalInstanceState(r.State)
	st.Version = r.Version
	st.NodeRef = r.NodeRef
	st.FailureReason, st.FailureMessage = r.FailureReason, r.FailureMessage
}
