package manager_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/provider"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/provider/contract/contracttest"
	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/scalegroup"
	"github.com/mpool-dev/mpool/internal/scalegroup/fake"
	"github.com/mpool-dev/mpool/internal/testenv"
)

// toyAdapter is a provider written in a test: a cloud of in-memory groups
// (scalegroup/fake) serving LocalMachinePools, since a test cannot add a
// CustomResourceDefinition of its own. It is the recipe of
// docs/adding-a-provider.md with nothing else edited: an Adapter (here
// borrowing the local provider's field mapping, under its own provider
// name), a ScaleGroup, a Config, one registry entry.
type toyAdapter struct{ contract.Adapter }

// Kinds implements contract.Adapter: the local kinds under the toy's name.
func (a toyAdapter) Kinds() contract.Kinds {
	k := a.Adapter.Kinds()
	k.Provider = "toy"
	return k
}

// toyConfig is the toy provider's own configuration: its cloud.
type toyConfig struct{ cloud *fake.ScaleGroup }

func (toyConfig) AddFlags(*pflag.FlagSet)         {}
func (toyConfig) ForSimulatedCloud(kit.Simulated) {}
func (c toyConfig) ScaleGroup(context.Context, kit.Env) (scalegroup.ScaleGroup, error) {
	return c.cloud, nil
}

// TestAddingAToyProvider adds a provider the way docs/adding-a-provider.md
// says, in this test alone: its Adapter and ScaleGroup pass the contract
// suites, and with one registry entry the manager runs the engine for it
// — the pool's group is created at the pool's size, the engine keeps a
// per-instance object for every instance and reports the pool — with no
// line of the engine, the manager or the metrics edited.
func TestAddingAToyProvider(t *testing.T) {
	local := provider.All()[0]
	if local.Name != "local" {
		t.Fatalf("the registry's first entry is %s, not the local provider whose kinds the toy borrows", local.Name)
	}
	toy := provider.Provider{Name: "toy", Adapter: toyAdapter{local.Adapter}}
	cloud := fake.New(clock.RealClock{}, scalegroup.Capabilities{})
	toy.Config = func(provider.Configs) kit.Config { return toyConfig{cloud} }

	contracttest.Adapter(t, toy.Adapter)
	contracttest.ScaleGroup(t, contracttest.ScaleGroupCase{
		ScaleGroup: fake.New(clock.RealClock{}, scalegroup.Capabilities{}),
		Ref:        func(name string) scalegroup.Ref { return scalegroup.Ref{Name: name} },
		Spec: func(n int32, hash string) scalegroup.GroupSpec {
			return scalegroup.GroupSpec{Capacity: n, ModelHash: hash}
		},
	})

	ctx, cancel := context.WithCancel(context.Background())
	ns := env.NewNamespace(t)
	opts := manager.DefaultOptions()
	opts.MetricsBindAddress, opts.HealthProbeBindAddress = "0", "0"
	opts.CacheNamespaces = []string{ns}
	opts.SkipNameValidation = true
	opts.Registry = []provider.Provider{toy}
	opts.Providers = provider.Configs{"toy": toy.Config(nil)}
	mgr, err := manager.New(ctx, env.Config, opts)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	if got := mgr.GetControllerOptions().ReconciliationTimeout; got != manager.ReconcileTimeout {
		t.Fatalf("a reconcile is bounded by %s, want %s", got, manager.ReconcileTimeout)
	}
	if len(mgr.Providers) != 1 || mgr.Providers[0].Provider.Name != "toy" {
		t.Fatalf("the manager runs %v, want the toy provider alone", mgr.Providers)
	}

	env.RegisterWorkloadCluster(t, ns, "toy")
	c := env.Client
	for _, obj := range []client.Object{
		&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "toy"}, Spec: clusterv1.ClusterSpec{ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "127.0.0.1", Port: 6443}}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "toy-bootstrap"}, Data: map[string][]byte{"value": []byte("#cloud-config\n")}},
		&infrav1.LocalMachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "toy-pool"}},
		&clusterv1.MachinePool{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "toy-pool"},
			Spec: clusterv1.MachinePoolSpec{ClusterName: "toy", Replicas: ptr.To[int32](3), Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				ClusterName:       "toy",
				Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To("toy-bootstrap")},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "LocalMachinePool", Name: "toy-pool"},
				Version:           "v1.31.0",
			}}},
		},
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}

	testenv.Eventually(t, time.Minute, func() error {
		pool := &infrav1.LocalMachinePool{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "toy-pool"}, pool); err != nil {
			return err
		}
		if len(pool.Spec.ProviderIDList) != 3 || pool.Status.Replicas != 3 {
			return fmt.Errorf("the pool reports %d providerIDs, %d replicas", len(pool.Spec.ProviderIDList), pool.Status.Replicas)
		}
		list := &infrav1.LocalMachinePoolMachineList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(list.Items) != 3 {
			return fmt.Errorf("%d per-instance objects, want 3", len(list.Items))
		}
		for i := range list.Items {
			if v := toy.Adapter.ReadInstance(&list.Items[i]); v.State != contract.InstanceRunning || !v.UpToDate {
				return fmt.Errorf("%s reads %s, up to date %v", list.Items[i].Name, v.State, v.UpToDate)
			}
		}
		return nil
	})
	if n := cloud.Calls("Apply"); n == 0 {
		t.Error("the engine never applied the toy group")
	}
}
