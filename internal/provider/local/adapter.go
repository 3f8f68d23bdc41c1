package local

import (
	"fmt"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/controller/infrapool"
	"github.com/mpool-dev/mpool/internal/preview"
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
func (Adapter) Provider() string { return ProviderName }

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

// InfraClusterKind implements infrapool.Adapter: the simulated cloud has
// one scope, so local pools need no infrastructure cluster.
func (Adapter) InfraClusterKind() string { return "" }

// NewInfraCluster implements infrapool.Adapter.
func (Adapter) NewInfraCluster() client.Object { return nil }

// GroupRef implements infrapool.Adapter: the group is named after the
// pool, in the simulated cloud's only scope.
func (Adapter) GroupRef(pool infrapool.Pool, _ client.Object) (scalegroup.Ref, error) {
	return scalegroup.Ref{Name: infrapool.GroupName(pool.GetNamespace(), pool.GetName(), maxGroupName)}, nil
}

// Desired implements infrapool.Adapter. The model is the pool's template
// and the MachinePool's Kubernetes version, which the simulated Nodes
// report; the pool's simulation knobs are the model's in-place part
// (Simulation): tuning them replaces no instance.
func (Adapter) Desired(p infrapool.Pool, owner infrapool.Owner) (infrapool.Desired, error) {
	pool := p.(*infrav1.LocalMachinePool)
	t := pool.Spec.Template
	m := scalegroup.Model{
		InstanceType: t.InstanceType,
		Image:        t.Image,
		Zones:        slices.Clone(t.Zones),
		Version:      owner.Version,
		CustomData:   owner.BootstrapData,
		Tags:         map[string]string{TagPool: pool.Namespace + "/" + pool.Name},
	}
	if owner.MachinePool != nil && owner.MachinePool.Spec.ClusterName != "" {
		m.Tags[TagCluster] = owner.MachinePool.Spec.ClusterName
	}
	sim, err := simulation(pool.Spec.Simulation)
	if err != nil {
		return infrapool.Desired{}, err
	}
	if sim != nil {
		m.InPlace = *sim
	}
	strategy, err := preview.Strategy(pool.Spec.Strategy)
	if err != nil {
		return infrapool.Desired{}, err
	}
	return infrapool.Desired{Model: m, Strategy: strategy}, nil
}

// simulation maps the pool's simulation knobs, nil when it sets none.
func simulation(sim *infrav1.LocalSimulation) (*Simulation, error) {
	if sim == nil {
		return nil, nil
	}
	out := &Simulation{}
	if sim.BootDelay != nil {
		out.BootDelay = &sim.BootDelay.Duration
	}
	if sim.BootJitter != nil {
		out.BootJitter = &sim.BootJitter.Duration
	}
	if sim.FailureRate != nil {
		f, err := sim.FailureRateValue()
		if err != nil {
			return nil, fmt.Errorf("spec.simulation: %w", err)
		}
		out.FailureRate = &f
	}
	return out, nil
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
