package azure

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/provider/azure"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/azureface"
	"github.com/mpool-dev/mpool/sim/server"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// The names seed 000's example and examples/azure/cluster.yaml use.
const (
	clusterName = "capz"
	poolName    = "capz-mp-0"
)

// startCloud starts a simulated cloud whose VMs join the test API server;
// bootDelay is how long a VM takes to boot.
func startCloud(t testing.TB, bootDelay time.Duration, faces ...core.Face) *server.Server {
	t.Helper()
	return itest.StartCloud(t, env, core.Options{Seed: 7, DefaultSimulation: &core.Simulation{BootDelay: bootDelay}, Faces: faces})
}

// testManager is a running mpool manager with the Azure provider on.
type testManager = itest.Manager

// startManager starts a manager for the fixture's namespace whose Azure
// provider reaches the simulated Azure, trusting its CA, as `mpool up`
// configures it (but with no credentials of its own: pools use their
// AzureClusterIdentity).
func startManager(t testing.TB, f *fixture, tune func(*manager.Options)) *testManager {
	t.Helper()
	mopts := itest.ManagerOptions(env, f.ns)
	mopts.Providers = itest.Providers(f.cloud, f.ns, azure.ProviderName)
	if tune != nil {
		tune(&mopts)
	}
	return itest.StartManager(t, env.Config, mopts, azure.ProviderName)
}

// fixture is one test's namespace: the Cluster capz, its AzureCluster and
// identity (examples/azure/cluster.yaml) and the workload cluster's
// Secrets, the workload cluster being the test API server.
type fixture struct {
	t     testing.TB
	ctx   context.Context
	ns    string
	cloud *server.Server
	cs    kubernetes.Interface
}

func newFixture(t testing.TB, cloud *server.Server) *fixture {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, ctx: context.Background(), ns: env.NewNamespace(t), cloud: cloud, cs: cs}
	// Every test's pool is seed 000's capz-mp-0, and Azure names Nodes after
	// the pool: the Nodes a test leaves would be taken by the next test's
	// VMs. Once the test's cloud is stopped (its VMs no longer heartbeat),
	// they go.
	t.Cleanup(func() {
		_ = cloud.Stop()
		env.DeleteNodes(t, func(n *corev1.Node) bool { return f.ownsProviderID(n.Spec.ProviderID) })
	})
	itest.CreateCluster(t, env, f.ns, clusterName, "examples", "azure", "cluster.yaml")
	return f
}

// manifest reads a manifest of the repository into objects of the
// fixture's namespace.
func (f *fixture) manifest(path ...string) []*unstructured.Unstructured {
	f.t.Helper()
	return itest.Manifest(f.t, f.ns, path...)
}

// applySeed creates seed 000's example (MachinePool, AzureMachinePool,
// KubeadmConfig), changed by mutate first when not nil.
func (f *fixture) applySeed(mutate func(*unstructured.Unstructured)) {
	f.t.Helper()
	for _, obj := range f.manifest("examples", "seeds", "azure-machinepool.yaml") {
		if mutate != nil {
			mutate(obj)
		}
		f.create(obj)
	}
}

func (f *fixture) create(obj client.Object) {
	f.t.Helper()
	if err := env.Client.Create(f.ctx, obj); err != nil {
		f.t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

func (f *fixture) key(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: f.ns, Name: name}
}

// vmss is the pool's scale set name.
func (f *fixture) vmss() string { return azure.ScaleSetName(f.ns, poolName) }

// group returns the pool's scale set as the simulated cloud's core has it
// (not counted, never faulted), nil when it does not exist.
func (f *fixture) group() *core.Group {
	k := azureface.AzureGroupKey(azureface.AzureDefaultSubscriptionID, azureface.AzureDefaultResourceGroup, f.vmss())
	g, err := f.cloud.Cloud().Scope(k.Face, k.Scope).GetGroup(k.Name)
	if err != nil {
		return nil
	}
	return g
}

// updateMachinePool changes the MachinePool with a merge patch.
func (f *fixture) updateMachinePool(mutate func(*clusterv1.MachinePool)) {
	f.t.Helper()
	mp := &clusterv1.MachinePool{}
	if err := env.Client.Get(f.ctx, f.key(poolName), mp); err != nil {
		f.t.Fatal(err)
	}
	before := mp.DeepCopy()
	mutate(mp)
	if err := env.Client.Patch(f.ctx, mp, client.MergeFrom(before)); err != nil {
		f.t.Fatal(err)
	}
}

// scale sets the MachinePool's replicas.
func (f *fixture) scale(n int32) {
	f.updateMachinePool(func(mp *clusterv1.MachinePool) { mp.Spec.Replicas = &n })
}

// updateAzurePool changes the AzureMachinePool with a merge patch.
func (f *fixture) updateAzurePool(mutate func(*infrav1.AzureMachinePool)) {
	f.t.Helper()
	p := &infrav1.AzureMachinePool{}
	if err := env.Client.Get(f.ctx, f.key(poolName), p); err != nil {
		f.t.Fatal(err)
	}
	before := p.DeepCopy()
	mutate(p)
	if err := env.Client.Patch(f.ctx, p, client.MergeFrom(before)); err != nil {
		f.t.Fatal(err)
	}
}

// poolNodes returns the Nodes of the pool's VMs (by providerID prefix).
func (f *fixture) poolNodes() []corev1.Node {
	f.t.Helper()
	list, err := f.cs.CoreV1().Nodes().List(f.ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []corev1.Node
	for _, n := range list.Items {
		if f.ownsProviderID(n.Spec.ProviderID) {
			out = append(out, n)
		}
	}
	return out
}

// ownsProviderID: a Uniform VM of the pool's scale set, or a Flexible VM
// named after it.
func (f *fixture) ownsProviderID(id string) bool {
	base := "azure:///subscriptions/" + azureface.AzureDefaultSubscriptionID + "/resourceGroups/" + azureface.AzureDefaultResourceGroup + "/providers/Microsoft.Compute/"
	return strings.HasPrefix(id, base+"virtualMachineScaleSets/"+f.vmss()+"/virtualMachines/") ||
		strings.HasPrefix(id, base+"virtualMachines/"+f.vmss()+"_")
}

// waitConverged waits until the pool is Running with n Ready Nodes on
// version, each VM Succeeded on the latest model, one
// AzureMachinePoolMachine and one Machine per VM, nothing else left.
func (f *fixture) waitConverged(n int, version string, timeout time.Duration) {
	f.t.Helper()
	testenv.Eventually(f.t, timeout, func() error { return f.converged(n, version) })
}

func (f *fixture) converged(n int, version string) error {
	mp := &clusterv1.MachinePool{}
	if err := env.Client.Get(f.ctx, f.key(poolName), mp); err != nil {
		return err
	}
	if mp.Status.Phase != string(clusterv1.MachinePoolPhaseRunning) || ptr.Deref(mp.Status.ReadyReplicas, -1) != int32(n) || ptr.Deref(mp.Status.Replicas, -1) != int32(n) {
		return fmt.Errorf("MachinePool phase %s, replicas %v, ready %v; want Running with %d", mp.Status.Phase, mp.Status.Replicas, mp.Status.ReadyReplicas, n)
	}
	ap := &infrav1.AzureMachinePool{}
	if err := env.Client.Get(f.ctx, f.key(poolName), ap); err != nil {
		return err
	}
	if c := meta.FindStatusCondition(ap.Status.Conditions, infrav1.RolloutProgressingCondition); c == nil || c.Reason != infrav1.ConvergedReason {
		return fmt.Errorf("AzureMachinePool not converged: %+v", c)
	}
	if c := meta.FindStatusCondition(ap.Status.Conditions, infrav1.ScaleSetRunningCondition); c == nil || c.Status != metav1.ConditionTrue {
		return fmt.Errorf("AzureMachinePool ScaleSetRunning: %+v", c)
	}
	if len(ap.Spec.ProviderIDList) != n || ap.Status.Replicas != int32(n) || !ap.Status.Ready {
		return fmt.Errorf("AzureMachinePool reports %d providerIDs, %d replicas, ready %v", len(ap.Spec.ProviderIDList), ap.Status.Replicas, ap.Status.Ready)
	}
	g := f.group()
	if g == nil || len(g.Instances) != n {
		return fmt.Errorf("scale set has %d instances, want %d", instanceCount(g), n)
	}
	nodes := f.poolNodes()
	if len(nodes) != n {
		return fmt.Errorf("%d Nodes, want %d", len(nodes), n)
	}
	for i := range nodes {
		node := &nodes[i]
		if !testenv.NodeReady(node) || node.Spec.Unschedulable {
			return fmt.Errorf("Node %s ready %v unschedulable %v", node.Name, testenv.NodeReady(node), node.Spec.Unschedulable)
		}
		if node.Status.NodeInfo.KubeletVersion != version {
			return fmt.Errorf("Node %s runs %s, want %s", node.Name, node.Status.NodeInfo.KubeletVersion, version)
		}
	}
	machines := &infrav1.AzureMachinePoolMachineList{}
	if err := env.Client.List(f.ctx, machines, client.InNamespace(f.ns)); err != nil {
		return err
	}
	if len(machines.Items) != n {
		return fmt.Errorf("%d AzureMachinePoolMachines, want %d", len(machines.Items), n)
	}
	for _, m := range machines.Items {
		if !m.Status.Ready || !m.Status.LatestModelApplied || m.Status.NodeRef == nil ||
			m.Status.ProvisioningState == nil || *m.Status.ProvisioningState != infrav1.Succeeded {
			return fmt.Errorf("AzureMachinePoolMachine %s: %+v", m.Name, m.Status)
		}
	}
	cm := &clusterv1.MachineList{}
	if err := env.Client.List(f.ctx, cm, client.InNamespace(f.ns)); err != nil {
		return err
	}
	if len(cm.Items) != n {
		return fmt.Errorf("%d Machines, want %d", len(cm.Items), n)
	}
	return nil
}

func instanceCount(g *core.Group) int {
	if g == nil {
		return 0
	}
	return len(g.Instances)
}

// ops returns how many requests of operation op the Azure face answered
// with a status below 300.
func (f *fixture) ops(op string) int64 {
	var n int64
	for _, r := range f.cloud.Stats().Requests {
		if r.Face == azureface.AzureFaceName && r.Operation == op && r.Status < 300 {
			n += r.Count
		}
	}
	return n
}
