package aws

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	"github.com/mpool-dev/mpool/internal/provider/aws"
	"github.com/mpool-dev/mpool/internal/provider/aws/eks"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/sim/server"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// The names seed 004's example and examples/aws/cluster.yaml use.
const (
	clusterName = "capa"
	poolName    = "capa-mp-0"
	identity    = "capa-static-identity"
	// seedVersion is the version seed 004's MachinePool asks for.
	seedVersion = "v1.16.8"
	converge    = 2 * time.Minute
)

// startCloud starts a simulated cloud whose instances join the test API
// server; bootDelay is how long an instance takes to boot.
func startCloud(t testing.TB, bootDelay time.Duration) *server.Server {
	t.Helper()
	return itest.StartCloud(t, env, core.Options{Seed: 11, DefaultSimulation: &core.Simulation{BootDelay: bootDelay}})
}

// testManager is a running mpool manager with the AWS provider on.
type testManager = itest.Manager

// startManager starts a manager for the fixture's namespace whose AWS
// provider reaches the simulated AWS with no credentials of its own: pools
// use their AWSClusterStaticIdentity, whose Secret is in the fixture's
// namespace (the manager's, here).
func startManager(t testing.TB, f *fixture, tune func(*manager.Options)) *testManager {
	t.Helper()
	mopts := itest.ManagerOptions(env, f.ns)
	mopts.Providers = itest.Providers(f.cloud, f.ns, aws.ProviderName, eks.ProviderName)
	if tune != nil {
		tune(&mopts)
	}
	return itest.StartManager(t, env.Config, mopts, aws.ProviderName)
}

// fixture is one test's namespace: the Cluster capa, its AWSCluster,
// static identity and Secret (examples/aws/cluster.yaml), the workload
// cluster being the test API server.
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
	// Seed 004's pool is capa-mp-0 in every test, and the static identity
	// is cluster-scoped: once the test's cloud is stopped, its Nodes and
	// the identity go.
	t.Cleanup(func() {
		_ = cloud.Stop()
		for _, n := range f.poolNodes() {
			_ = cs.CoreV1().Nodes().Delete(f.ctx, n.Name, metav1.DeleteOptions{})
		}
		_ = env.Client.Delete(f.ctx, &infrav1.AWSClusterStaticIdentity{ObjectMeta: metav1.ObjectMeta{Name: identity}})
	})
	itest.CreateCluster(t, env, f.ns, clusterName, "examples", "aws", "cluster.yaml")
	return f
}

func (f *fixture) manifest(path ...string) []*unstructured.Unstructured {
	f.t.Helper()
	return itest.Manifest(f.t, f.ns, path...)
}

// applySeed creates seed 004's example, changed by mutate first when not
// nil.
func (f *fixture) applySeed(mutate func(*unstructured.Unstructured)) {
	f.t.Helper()
	for _, obj := range f.manifest("examples", "seeds", "aws-machinepool.yaml") {
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

// asg is the pool's Auto Scaling Group name.
func (f *fixture) asg() string { return aws.GroupName(f.ns, poolName) }

// group returns the pool's group as the simulated cloud's core has it, nil
// when it does not exist.
func (f *fixture) group() *core.Group {
	k := awsface.AWSGroupKey(awsface.AWSDefaultAccountID, awsface.AWSDefaultRegion, f.asg())
	g, err := f.cloud.Cloud().Scope(k.Face, k.Scope).GetGroup(k.Name)
	if err != nil {
		return nil
	}
	return g
}

func (f *fixture) instanceIDs() []string {
	var out []string
	if g := f.group(); g != nil {
		for _, in := range g.Instances {
			if in.State != core.StateDeleting {
				out = append(out, in.ID)
			}
		}
	}
	return out
}

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

func (f *fixture) updateAWSPool(mutate func(*infrav1.AWSMachinePool)) {
	f.t.Helper()
	p := &infrav1.AWSMachinePool{}
	if err := env.Client.Get(f.ctx, f.key(poolName), p); err != nil {
		f.t.Fatal(err)
	}
	before := p.DeepCopy()
	mutate(p)
	if err := env.Client.Patch(f.ctx, p, client.MergeFrom(before)); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) scale(n int32) {
	f.updateMachinePool(func(mp *clusterv1.MachinePool) { mp.Spec.Replicas = &n })
}

// poolNodes returns the Nodes of the pool's instances.
func (f *fixture) poolNodes() []corev1.Node {
	f.t.Helper()
	list, err := f.cs.CoreV1().Nodes().List(f.ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	ids := map[string]bool{}
	if g := f.group(); g != nil {
		for _, in := range g.Instances {
			ids[in.ProviderID] = true
		}
	}
	var out []corev1.Node
	for _, n := range list.Items {
		if ids[n.Spec.ProviderID] {
			out = append(out, n)
		}
	}
	return out
}

// waitConverged waits until the pool is Running with n Ready Nodes on
// version, each instance on the latest model, one AWSMachinePoolMachine
// and one Machine per instance.
func (f *fixture) waitConverged(n int, version string) {
	f.t.Helper()
	testenv.Eventually(f.t, converge, func() error { return f.converged(n, version) })
}

// waitRolled waits until none of the instances in before is left and the
// pool has converged again.
func (f *fixture) waitRolled(before []string, n int, version string) {
	f.t.Helper()
	testenv.Eventually(f.t, converge, func() error {
		for _, id := range f.instanceIDs() {
			for _, b := range before {
				if id == b {
					return fmt.Errorf("instance %s has not been replaced yet", id)
				}
			}
		}
		return f.converged(n, version)
	})
}

func (f *fixture) converged(n int, version string) error {
	mp := &clusterv1.MachinePool{}
	if err := env.Client.Get(f.ctx, f.key(poolName), mp); err != nil {
		return err
	}
	if mp.Status.Phase != string(clusterv1.MachinePoolPhaseRunning) || ptr.Deref(mp.Status.ReadyReplicas, -1) != int32(n) || ptr.Deref(mp.Status.Replicas, -1) != int32(n) {
		return fmt.Errorf("MachinePool phase %s, replicas %v, ready %v; want Running with %d", mp.Status.Phase, mp.Status.Replicas, mp.Status.ReadyReplicas, n)
	}
	ap := &infrav1.AWSMachinePool{}
	if err := env.Client.Get(f.ctx, f.key(poolName), ap); err != nil {
		return err
	}
	if c := meta.FindStatusCondition(ap.Status.Conditions, infrav1.RolloutProgressingCondition); c == nil || c.Reason != infrav1.ConvergedReason {
		return fmt.Errorf("AWSMachinePool not converged: %+v", c)
	}
	if c := meta.FindStatusCondition(ap.Status.Conditions, infrav1.ASGReadyCondition); c == nil || c.Status != metav1.ConditionTrue {
		return fmt.Errorf("AWSMachinePool ASGReady: %+v", c)
	}
	if len(ap.Spec.ProviderIDList) != n || ap.Status.Replicas != int32(n) || !ap.Status.Ready {
		return fmt.Errorf("AWSMachinePool reports %d providerIDs, %d replicas, ready %v", len(ap.Spec.ProviderIDList), ap.Status.Replicas, ap.Status.Ready)
	}
	if ids := f.instanceIDs(); len(ids) != n {
		return fmt.Errorf("the group has %d live instances, want %d", len(ids), n)
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
	machines := &infrav1.AWSMachinePoolMachineList{}
	if err := env.Client.List(f.ctx, machines, client.InNamespace(f.ns)); err != nil {
		return err
	}
	if len(machines.Items) != n {
		return fmt.Errorf("%d AWSMachinePoolMachines, want %d", len(machines.Items), n)
	}
	for _, m := range machines.Items {
		if !m.Status.Ready || !m.Status.LatestModelApplied || m.Status.NodeRef == nil {
			return fmt.Errorf("AWSMachinePoolMachine %s: %+v", m.Name, m.Status)
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

// ops returns how many requests of operation op the AWS face answered
// with a status below 300.
func (f *fixture) ops(op string) int64 {
	var n int64
	for _, r := range f.cloud.Stats().Requests {
		if r.Face == awsface.AWSFaceName && r.Operation == op && r.Status < 300 {
			n += r.Count
		}
	}
	return n
}

// deletePoolAndWaitGone deletes the MachinePool and waits until no group,
// launch template, Node, AWSMachinePool(Machine), Machine or bootstrap
// data Secret is left.
func (f *fixture) deletePoolAndWaitGone() {
	f.t.Helper()
	mp := &clusterv1.MachinePool{}
	if err := env.Client.Get(f.ctx, f.key(poolName), mp); err != nil {
		f.t.Fatal(err)
	}
	dataSecret := ptr.Deref(mp.Spec.Template.Spec.Bootstrap.DataSecretName, "")
	nodes := f.poolNodes()
	if err := env.Client.Delete(f.ctx, mp); err != nil {
		f.t.Fatal(err)
	}
	testenv.Eventually(f.t, converge, func() error {
		if g := f.group(); g != nil {
			return fmt.Errorf("the group still has %d instances", len(g.Instances))
		}
		for _, n := range nodes {
			if _, err := f.cs.CoreV1().Nodes().Get(f.ctx, n.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("Node %s still there (%v)", n.Name, err)
			}
		}
		for _, l := range []client.ObjectList{&infrav1.AWSMachinePoolMachineList{}, &infrav1.AWSMachinePoolList{}, &clusterv1.MachineList{}, &clusterv1.MachinePoolList{}} {
			if err := env.Client.List(f.ctx, l, client.InNamespace(f.ns)); err != nil {
				return err
			}
			if n := meta.LenList(l); n > 0 {
				return fmt.Errorf("%d %T items left", n, l)
			}
		}
		if dataSecret != "" {
			if err := env.Client.Get(f.ctx, f.key(dataSecret), &corev1.Secret{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("bootstrap data Secret %s still there (%v)", dataSecret, err)
			}
		}
		return nil
	})
	if lts := f.launchTemplates(); len(lts) > 0 {
		f.t.Errorf("launch templates left: %v", lts)
	}
}
