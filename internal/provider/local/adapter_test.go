package local

import (
	"bytes"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/provider/contract/contracttest"
	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/rollout"
)

func pool() *infrav1.LocalMachinePool {
	return &infrav1.LocalMachinePool{
		ObjectMeta: metav1.ObjectMeta{Name: "pool-0", Namespace: "team-a"},
		Spec: infrav1.LocalMachinePoolSpec{
			Template: infrav1.LocalMachinePoolMachineTemplate{InstanceType: "sim.large", Image: "ubuntu-2404", Zones: []string{"zone-a", "zone-b"}},
			Strategy: infrav1.MachinePoolDeploymentStrategy{
				Type: infrav1.RollingUpdateMachinePoolDeploymentStrategyType,
				RollingUpdate: &infrav1.MachineRollingUpdateDeployment{
					MaxSurge: ptr.To(intstr.FromString("25%")), MaxUnavailable: ptr.To(intstr.FromInt32(1)), DeletePolicy: infrav1.NewestDeletePolicyType,
				},
			},
		},
	}
}

func owner() contract.Owner {
	return contract.Owner{
		MachinePool:   &clusterv1.MachinePool{Spec: clusterv1.MachinePoolSpec{ClusterName: "c1"}},
		Version:       "v1.31.2",
		BootstrapData: joinData("abcdef.0123456789abcdef", "--node-labels=a=b"),
	}
}

// joinData is bootstrap data as the renderer writes it: a JoinConfiguration
// with a bootstrap token and kubelet arguments.
func joinData(token, kubeletArgs string) []byte {
	return []byte("#cloud-config\nwrite_files:\n- path: /run/kubeadm/kubeadm-join-config.yaml\n  content: |\n" +
		"    discovery:\n      bootstrapToken:\n        token: " + token + "\n    nodeRegistration:\n      kubeletExtraArgs: " + kubeletArgs + "\n")
}

func TestDesiredMapsTheTemplate(t *testing.T) {
	d, err := Adapter{}.Desired(pool(), owner())
	if err != nil {
		t.Fatal(err)
	}
	m := d.Model
	if m.InstanceType != "sim.large" || m.Image != "ubuntu-2404" || !slices.Equal(m.Zones, []string{"zone-a", "zone-b"}) {
		t.Errorf("template not mapped: %+v", m)
	}
	if m.Version != "v1.31.2" || m.Provider != nil || m.InPlace != nil {
		t.Errorf("version not mapped, or provider fields set: %+v", m)
	}
	if !bytes.Equal(m.CustomData, owner().BootstrapData) {
		t.Error("bootstrap data not mapped")
	}
	if m.Tags[TagCluster] != "c1" || m.Tags[kit.TagPool] != "team-a/pool-0" {
		t.Errorf("tags: %v", m.Tags)
	}
	s := d.Strategy
	if s.MaxSurge.String() != "25%" || s.MaxUnavailable.IntValue() != 1 || s.DeletePolicy != rollout.DeletePolicyNewest {
		t.Errorf("strategy not mapped: %+v", s)
	}
}

func TestSimulationKnobsAreAppliedInPlace(t *testing.T) {
	p := pool()
	base, err := Adapter{}.Desired(p, owner())
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.Simulation = &infrav1.LocalSimulation{
		BootDelay:   &metav1.Duration{Duration: 3 * time.Second},
		BootJitter:  &metav1.Duration{Duration: time.Second},
		FailureRate: ptr.To("0.25"),
	}
	d, err := Adapter{}.Desired(p, owner())
	if err != nil {
		t.Fatal(err)
	}
	sim, ok := d.Model.InPlace.(Simulation)
	if !ok || *sim.BootDelay != 3*time.Second || *sim.BootJitter != time.Second || *sim.FailureRate != 0.25 {
		t.Errorf("knobs not mapped: %#v", d.Model.InPlace)
	}
	if contracttest.ModelHash(t, d.Model) != contracttest.ModelHash(t, base.Model) {
		t.Error("simulation knobs change the model hash: tuning the simulation would roll the pool")
	}
}

func TestVersionAndTemplateChangeTheHash(t *testing.T) {
	base, _ := Adapter{}.Desired(pool(), owner())
	h := contracttest.ModelHash(t, base.Model)
	for _, tc := range []struct {
		name   string
		change func(*infrav1.LocalMachinePool, *contract.Owner)
	}{
		{name: "version", change: func(_ *infrav1.LocalMachinePool, o *contract.Owner) { o.Version = "v1.32.0" }},
		{name: "image", change: func(p *infrav1.LocalMachinePool, _ *contract.Owner) { p.Spec.Template.Image = "ubuntu-2604" }},
		{name: "instance type", change: func(p *infrav1.LocalMachinePool, _ *contract.Owner) { p.Spec.Template.InstanceType = "sim.xlarge" }},
		{name: "zones", change: func(p *infrav1.LocalMachinePool, _ *contract.Owner) { p.Spec.Template.Zones = []string{"zone-c"} }},
		{name: "bootstrap content (a KubeadmConfig change)", change: func(_ *infrav1.LocalMachinePool, o *contract.Owner) {
			o.BootstrapData = joinData("abcdef.0123456789abcdef", "--node-labels=a=c")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, o := pool(), owner()
			tc.change(p, &o)
			d, err := Adapter{}.Desired(p, o)
			if err != nil {
				t.Fatal(err)
			}
			if contracttest.ModelHash(t, d.Model) == h {
				t.Error("hash unchanged")
			}
		})
	}
	o := owner()
	o.BootstrapData = joinData("ghijkl.fedcba9876543210", "--node-labels=a=b")
	d, _ := Adapter{}.Desired(pool(), o)
	if contracttest.ModelHash(t, d.Model) != h {
		t.Error("a new bootstrap token changes the hash")
	}
}

func TestWritePoolAndInstance(t *testing.T) {
	p := pool()
	Adapter{}.WritePool(p, contract.PoolReport{
		Observed: true, ProviderIDList: []string{"local:///g/i-1"}, Ready: true, Replicas: 1, ModelHash: "h",
		InfrastructureMachineKind: infrav1.LocalMachinePoolMachineKind,
		Instances:                 []contract.InstanceReport{{InstanceID: "i-1", ProviderID: "local:///g/i-1", State: contract.InstanceRunning, Ready: true, LatestModelApplied: true}},
	})
	if !slices.Equal(p.Spec.ProviderIDList, []string{"local:///g/i-1"}) || !p.Status.Ready || p.Status.Replicas != 1 ||
		p.Status.InfrastructureMachineKind != "LocalMachinePoolMachine" || len(p.Status.Instances) != 1 || p.Status.Instances[0].State != infrav1.LocalInstanceRunning {
		t.Errorf("pool not written: %+v %+v", p.Spec, p.Status)
	}
	// An unobserved report keeps what the group last said.
	Adapter{}.WritePool(p, contract.PoolReport{ModelHash: "h2"})
	if p.Status.Replicas != 1 || p.Status.ModelHash != "h2" {
		t.Errorf("unobserved report: %+v", p.Status)
	}
	m := &infrav1.LocalMachinePoolMachine{}
	Adapter{}.WriteInstanceSpec(m, "i-1", "local:///g/i-1")
	Adapter{}.WriteInstanceStatus(m, contract.InstanceReport{State: contract.InstanceDeleting, Zone: "zone-a", Version: "v1.31.2"})
	if v := (Adapter{}).ReadInstance(m); v.InstanceID != "i-1" || v.ProviderID != "local:///g/i-1" || v.State != contract.InstanceDeleting || m.Status.State != infrav1.LocalInstanceDeleting || m.Status.Zone != "zone-a" {
		t.Errorf("instance not written: %+v", m)
	}
}

func TestGroupRefIsADNSLabelInTheOnlyScope(t *testing.T) {
	ref, err := Adapter{}.GroupRef(pool(), nil)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Adapter{}.GroupRef(pool(), nil)
	if len(ref.Name) > 63 || ref.Name == "" || ref.Scope != "" || ref != again {
		t.Errorf("group ref %+v, then %+v", ref, again)
	}
}
