package local

import (
	"fmt"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/provider/kit"
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

var _ contract.Adapter = Adapter{}

// Kinds implements contract.Adapter.
func (Adapter) Kinds() contract.Kinds {
	return contract.Kinds{
		Provider:          ProviderName,
		Pool:              "LocalMachinePool",
		Instance:          infrav1.LocalMachinePoolMachineKind,
		PoolFinalizer:     infrav1.LocalMachinePoolFinalizer,
		InstanceFinalizer: infrav1.LocalMachinePoolMachineFinalizer,
		InfraCluster:      "",
	}
}

// NewPool implements contract.Adapter.
func (Adapter) NewPool() contract.Pool { return &infrav1.LocalMachinePool{} }

// NewInstance implements contract.Adapter.
func (Adapter) NewInstance() contract.InstanceObject { return &infrav1.LocalMachinePoolMachine{} }

// NewInstanceList implements contract.Adapter.
func (Adapter) NewInstanceList() client.ObjectList { return &infrav1.LocalMachinePoolMachineList{} }

// NewInfraCluster implements contract.Adapter.
func (Adapter) NewInfraCluster() client.Object { return nil }

// GroupRef implements contract.Adapter: the group is named after the
// pool, in the simulated cloud's only scope.
func (Adapter) GroupRef(pool contract.Pool, _ client.Object) (scalegroup.Ref, error) {
	return scalegroup.Ref{Name: contract.GroupName(pool.GetNamespace(), pool.GetName(), maxGroupName)}, nil
}

// Desired implements contract.Adapter. The model is the pool's template
// and the MachinePool's Kubernetes version, which the simulated Nodes
// report; the pool's simulation knobs are the model's in-place part
// (Simulation): tuning them replaces no instance.
func (Adapter) Desired(p contract.Pool, owner contract.Owner) (contract.Desired, error) {
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
		return contract.Desired{}, err
	}
	if sim != nil {
		m.InPlace = *sim
	}
	view, err := Adapter{}.ReadPool(pool)
	if err != nil {
		return contract.Desired{}, err
	}
	return contract.Desired{Model: m, Strategy: view.Rollout.Strategy}, nil
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

// WritePool implements contract.Adapter.
func (Adapter) WritePool(p contract.Pool, r contract.PoolReport) {
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

// WriteInstanceSpec implements contract.Adapter.
func (Adapter) WriteInstanceSpec(obj contract.InstanceObject, instanceID, providerID string) {
	m := obj.(*infrav1.LocalMachinePoolMachine)
	m.Spec.InstanceID, m.Spec.ProviderID = instanceID, providerID
}

// WriteInstanceStatus implements contract.Adapter.
func (Adapter) WriteInstanceStatus(obj contract.InstanceObject, r contract.InstanceReport) {
	st := &obj.(*infrav1.LocalMachinePoolMachine).Status
	st.Ready = r.Ready
	st.LatestModelApplied = r.LatestModelApplied
	st.Zone = r.Zone
	st.State = infrav1.LocalInstanceState(r.State)
	st.Version = r.Version
	st.NodeRef = r.NodeRef
	st.FailureReason, st.FailureMessage = r.FailureReason, r.FailureMessage
}

// ReadPool implements contract.Reader: the pool rolls by its
// spec.strategy.
func (Adapter) ReadPool(p contract.Pool) (contract.PoolView, error) {
	pool := p.(*infrav1.LocalMachinePool)
	return kit.SpecStrategy(pool.Spec.Strategy, pool.Status.ObservedGeneration)
}

// ReadInstance implements contract.Reader: a LocalMachinePoolMachine's
// status.state is in mpool's own vocabulary.
func (Adapter) ReadInstance(obj contract.InstanceObject) contract.InstanceView {
	m := obj.(*infrav1.LocalMachinePoolMachine)
	st := &m.Status
	return kit.InstanceView(m, kit.InstanceRecord{
		InstanceID: m.Spec.InstanceID, ProviderID: m.Spec.ProviderID,
		CloudState: string(st.State), State: contract.InstanceState(st.State), Zone: st.Zone,
		Ready: st.Ready, LatestModelApplied: st.LatestModelApplied, Version: st.Version, NodeRef: st.NodeRef,
		FailureReason: st.FailureReason, FailureMessage: st.FailureMessage, Conditions: st.Conditions,
	})
}
