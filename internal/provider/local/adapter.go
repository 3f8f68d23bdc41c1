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

// TagCluster names the Cluster a group's instances belong to: the tag
// the local provider puts on its groups beside kit.PoolTags'.
const TagCluster = "mpool.dev/cluster"

// Adapter maps LocalMachinePool and LocalMachinePoolMachine onto the
// infrapool engine.
type Adapter struct {
	kit.Objects[infrav1.LocalMachinePool, infrav1.LocalMachinePoolMachine, infrav1.LocalMachinePoolMachineList, kit.NoInfraCluster]
}

var _ contract.Adapter = Adapter{}

// Kinds implements contract.Adapter.
func (a Adapter) Kinds() contract.Kinds {
	return a.Named(contract.Kinds{Provider: ProviderName, PoolFinalizer: infrav1.LocalMachinePoolFinalizer, InstanceFinalizer: infrav1.LocalMachinePoolMachineFinalizer})
}

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
		Tags:         kit.PoolTags(pool),
	}
	if cluster := owner.ClusterName(); cluster != "" {
		m.Tags[TagCluster] = cluster
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
func (a Adapter) WritePool(p contract.Pool, r contract.PoolReport) {
	pool := p.(*infrav1.LocalMachinePool)
	st := &pool.Status
	st.ModelHash = r.ModelHash
	observed := a.Pool(pool).Write(r)
	if !observed {
		return
	}
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

// WriteInstanceStatus implements contract.Adapter: the state, in mpool's
// own vocabulary, and the zone.
func (a Adapter) WriteInstanceStatus(obj contract.InstanceObject, r contract.InstanceReport) {
	m := obj.(*infrav1.LocalMachinePoolMachine)
	a.Instance(m).WriteStatus(r)
	m.Status.Zone = r.Zone
	m.Status.State = infrav1.LocalInstanceState(r.State)
}

// ReadPool implements contract.Reader: the pool rolls by its
// spec.strategy.
func (Adapter) ReadPool(p contract.Pool) (contract.PoolView, error) {
	pool := p.(*infrav1.LocalMachinePool)
	return kit.SpecStrategy(pool.Spec.Strategy, pool.Status.ObservedGeneration)
}

// ReadInstance implements contract.Reader: a LocalMachinePoolMachine's
// status.state is in mpool's own vocabulary.
func (a Adapter) ReadInstance(obj contract.InstanceObject) contract.InstanceView {
	m := obj.(*infrav1.LocalMachinePoolMachine)
	return a.Instance(m).View(string(m.Status.State), contract.InstanceState(m.Status.State), m.Status.Zone)
}
