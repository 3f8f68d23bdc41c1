package itest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/controller/kubeadmconfig"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/server"
)

// CloudOptions tune a test's simulated cloud.
type CloudOptions struct {
	// Seed seeds the cloud's randomness (0: the provider's seed).
	Seed uint64
	// BootDelay and BootJitter are how long an instance takes to boot.
	BootDelay, BootJitter time.Duration
	// Faults are injected from the start.
	Faults core.Faults
	// Faces configure faces otherwise than by default.
	Faces []core.Face
	// Version is the Kubernetes version of the provider's managed control
	// plane, for providers that have one (EKS).
	Version string
	// NodeAgentTransport, when set, wraps the transport of every request
	// the node agent makes to the API server (RequestCounter.Wrap).
	NodeAgentTransport transport.WrapperFunc
	// MaxHeartbeatQPS, when set, caps the simulated kubelets' Lease
	// renewals per second (nodeagent.Options; default 50).
	MaxHeartbeatQPS float64
}

// StartCloud starts the simulated cloud of a test of p (StartCloud's), with
// what p needs in it before a pool is created.
func (p *Provider) StartCloud(t testing.TB, env *testenv.Env, o CloudOptions) *server.Server {
	t.Helper()
	if o.Seed == 0 {
		o.Seed = p.Seed
	}
	opts := core.Options{
		Seed:              o.Seed,
		DefaultSimulation: &core.Simulation{BootDelay: o.BootDelay, BootJitter: o.BootJitter},
		Faults:            o.Faults,
		Faces:             o.Faces,
	}
	opts.NodeAgent.WrapTransport = o.NodeAgentTransport
	opts.NodeAgent.MaxHeartbeatQPS = o.MaxHeartbeatQPS
	srv := StartCloud(t, env, opts)
	if p.PrepareCloud != nil {
		if err := p.PrepareCloud(srv, o); err != nil {
			t.Fatalf("preparing the simulated cloud: %v", err)
		}
	}
	return srv
}

// Fixture is one integration test's namespace: a Cluster whose workload
// cluster is the test API server, the provider's cluster objects and
// credentials, and the simulated cloud the pool lives in. Its methods read
// and change the pool named Provider.PoolName the same way for every
// provider.
type Fixture struct {
	// T is the test the fixture belongs to and Ctx its context.
	T   testing.TB
	Ctx context.Context
	// Env is the package's control plane; NS the test's namespace in it.
	Env *testenv.Env
	NS  string
	// Cloud is the simulated cloud the pool lives in.
	Cloud *server.Server
	// CS is a clientset of the workload cluster (the test API server).
	CS kubernetes.Interface
	// Provider is the pool's provider.
	Provider *Provider
}

// NewFixture creates a namespace with p's cluster in it, registered as a
// workload cluster served by env's API server. When the test ends it stops
// cloud and deletes the pool's Nodes (they are cluster-scoped: the next
// test's instances could take their names) and what p.Cleanup deletes.
func NewFixture(t testing.TB, env *testenv.Env, p *Provider, cloud *server.Server) *Fixture {
	t.Helper()
	f := EmptyFixture(t, env, p, cloud)
	if p.ClusterManifest == nil {
		f.Create(&clusterv1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: p.ClusterName},
			Spec:       clusterv1.ClusterSpec{ControlPlaneEndpoint: env.ControlPlaneEndpoint(t)},
		})
		env.RegisterWorkloadCluster(t, f.NS, p.ClusterName)
	} else {
		CreateCluster(t, env, f.NS, p.ClusterName, p.ClusterManifest...)
	}
	return f
}

// EmptyFixture is NewFixture without the cluster: a fresh namespace for p's
// pool in cloud, cleaned up as NewFixture's, for a caller that creates the
// Cluster its own way (beside upstream Cluster API, test/interop). A failed
// test logs the pool's state first (logStateOnFailure).
func EmptyFixture(t testing.TB, env *testenv.Env, p *Provider, cloud *server.Server) *Fixture {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	f := &Fixture{T: t, Ctx: context.Background(), Env: env, NS: env.NewNamespace(t), Cloud: cloud, CS: cs, Provider: p}
	t.Cleanup(func() {
		f.logStateOnFailure()
		f.pauseClusters()
		_ = cloud.Stop()
		env.DeleteNodes(t, p.OwnsNode(f))
		if p.Cleanup != nil {
			p.Cleanup(f)
		}
	})
	return f
}

// pauseClusters pauses every Cluster of the fixture's namespace, first
// thing when the test ends: controllers that outlive the test (upstream
// Cluster API's, beside mpool in test/interop) must not act on its objects
// any more. A failed test leaves them as they were, and their Machines name
// Nodes by the names the next test's instances take (the simulated AWS
// numbers every new cloud's addresses from the same start): upstream's
// Machine controller deleted the next test's fresh Nodes that way.
func (f *Fixture) pauseClusters() {
	list := &clusterv1.ClusterList{}
	if err := f.Env.Client.List(f.Ctx, list, client.InNamespace(f.NS)); err != nil {
		f.T.Errorf("listing the test's Clusters to pause them: %v", err)
		return
	}
	for i := range list.Items {
		c := &list.Items[i]
		patch := client.MergeFrom(c.DeepCopy())
		c.Spec.Paused = ptr.To(true)
		if err := f.Env.Client.Patch(f.Ctx, c, patch); err != nil && !apierrors.IsNotFound(err) {
			f.T.Errorf("pausing Cluster %s: %v", c.Name, err)
		}
	}
}

// Start starts what most tests of p run on: p's simulated cloud (o), a
// fixture in it and a manager (tune as StartManager's).
func Start(t testing.TB, env *testenv.Env, p *Provider, o CloudOptions, tune ...func(*manager.Options)) (*Fixture, *Manager) {
	t.Helper()
	f := NewFixture(t, env, p, p.StartCloud(t, env, o))
	return f, f.StartManager(tune...)
}

// StartManager starts a manager for the fixture's namespace with p's
// provider reaching the fixture's cloud (ManagerOptions, then
// Provider.Configure, then tune), against the test API server.
func (f *Fixture) StartManager(tune ...func(*manager.Options)) *Manager {
	f.T.Helper()
	return f.StartManagerWith(f.Env.Config, tune...)
}

// StartManagerWith is StartManager against the API server of cfg (a
// connection with other limits).
func (f *Fixture) StartManagerWith(cfg *rest.Config, tune ...func(*manager.Options)) *Manager {
	f.T.Helper()
	o := ManagerOptions(f.Env, f.NS)
	f.Provider.Configure(f, &o)
	for _, fn := range tune {
		if fn != nil {
			fn(&o)
		}
	}
	return StartManager(f.T, cfg, o, f.Provider.Name)
}

// Create creates obj, failing the test when it cannot.
func (f *Fixture) Create(obj client.Object) {
	f.T.Helper()
	if err := f.Env.Client.Create(f.Ctx, obj); err != nil {
		f.T.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// Key is the key of the object name in the fixture's namespace.
func (f *Fixture) Key(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: f.NS, Name: name}
}

// PoolKey is the key of the pool's MachinePool, infra pool and
// KubeadmConfig.
func (f *Fixture) PoolKey() types.NamespacedName { return f.Key(f.Provider.PoolName) }

// Manifest reads a manifest of the repository into objects of the
// fixture's namespace.
func (f *Fixture) Manifest(path ...string) []*unstructured.Unstructured {
	f.T.Helper()
	return Manifest(f.T, f.NS, path...)
}

// ApplySeed creates the provider's seed example (MachinePool, infra pool,
// KubeadmConfig), changed first by each mutation that is not nil (see
// OnKind, SetField, Replicas).
func (f *Fixture) ApplySeed(mutate ...func(*unstructured.Unstructured)) {
	f.T.Helper()
	for _, obj := range f.Manifest(f.Provider.SeedManifest...) {
		for _, m := range mutate {
			if m != nil {
				m(obj)
			}
		}
		f.Create(obj)
	}
}

// Patch reads obj at key, changes it with mutate and writes the change
// with a merge patch (no conflict with the controllers' status writes).
func Patch[T client.Object](f *Fixture, key types.NamespacedName, obj T, mutate func(T)) {
	f.T.Helper()
	if err := f.Env.Client.Get(f.Ctx, key, obj); err != nil {
		f.T.Fatal(err)
	}
	before := obj.DeepCopyObject().(client.Object)
	mutate(obj)
	if err := f.Env.Client.Patch(f.Ctx, obj, client.MergeFrom(before)); err != nil {
		f.T.Fatal(err)
	}
}

// UpdatePool changes the fixture's infra pool (of the provider's kind T)
// with a merge patch.
func UpdatePool[T client.Object](f *Fixture, mutate func(T)) {
	f.T.Helper()
	Patch(f, f.PoolKey(), f.Provider.NewPool().(T), mutate)
}

// Pool returns the fixture's infra pool, of the provider's kind T.
func Pool[T client.Object](f *Fixture) T {
	f.T.Helper()
	p := f.Provider.NewPool().(T)
	if err := f.Env.Client.Get(f.Ctx, f.PoolKey(), p); err != nil {
		f.T.Fatal(err)
	}
	return p
}

// UpdateMachinePool changes the MachinePool with a merge patch.
func (f *Fixture) UpdateMachinePool(mutate func(*clusterv1.MachinePool)) {
	f.T.Helper()
	Patch(f, f.PoolKey(), &clusterv1.MachinePool{}, mutate)
}

// Scale sets the MachinePool's replicas.
func (f *Fixture) Scale(n int32) {
	f.T.Helper()
	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) { mp.Spec.Replicas = ptr.To(n) })
}

// SetVersion sets the MachinePool's Kubernetes version.
func (f *Fixture) SetVersion(v string) {
	f.T.Helper()
	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) { mp.Spec.Template.Spec.Version = v })
}

// DataSecret returns the pool's bootstrap data Secret.
func (f *Fixture) DataSecret() *corev1.Secret { return f.Env.DataSecret(f.T, f.PoolKey()) }

// poolRef is the infra pool with only its name, for patches.
func (f *Fixture) poolRef() client.Object {
	p := f.Provider.NewPool()
	p.SetNamespace(f.NS)
	p.SetName(f.Provider.PoolName)
	return p
}

// PokeUntilReconciled changes an annotation of the infra pool until its
// controller has finished n more reconciles. At most one reconcile of the
// pool runs at a time, so of n >= 2 reconciles counted after this call
// starts, at least n-1 started after it: they saw everything the manager's
// cache held when it was called.
func (f *Fixture) PokeUntilReconciled(t testing.TB, n int64) {
	t.Helper()
	f.Env.PokeUntilReconciled(t, f.poolRef(), f.Provider.Controller(), n)
}

// Reconciles returns how many reconciles the provider's infra pool
// controllers of this process have finished.
func (f *Fixture) Reconciles() int64 { return testenv.Reconciles(f.T, f.Provider.Controller()) }

// Group returns the pool's group as the simulated cloud's core has it (not
// counted, never faulted), nil when it does not exist or the provider has
// none.
func (f *Fixture) Group() *core.Group {
	if f.Provider.GroupKey == nil {
		return nil
	}
	k := f.Provider.GroupKey(f)
	g, err := f.Cloud.Cloud().Scope(k.Face, k.Scope).GetGroup(k.Name)
	if err != nil {
		return nil
	}
	return g
}

// SetInstanceFault sets (core.FaultNone: clears) the health fault of the
// pool's instance id (core.InstanceFault): a kubelet that stops, a Node
// NotReady, an instance that never joins, a failing cloud status check.
func (f *Fixture) SetInstanceFault(id string, fault core.InstanceFault) {
	f.T.Helper()
	k := f.groupKey()
	if _, err := f.Cloud.Cloud().Scope(k.Face, k.Scope).SetInstanceFault(k.Name, id, fault); err != nil {
		f.T.Fatalf("setting fault %q on instance %s: %v", fault, id, err)
	}
}

// SetPoolFault gives the health fault to a fraction of the pool's live
// instances, chosen at random with the cloud's seed among those without it
// (see core.Scope.SetGroupInstanceFault), and returns their IDs.
func (f *Fixture) SetPoolFault(fraction float64, fault core.InstanceFault) []string {
	f.T.Helper()
	k := f.groupKey()
	ids, err := f.Cloud.Cloud().Scope(k.Face, k.Scope).SetGroupInstanceFault(k.Name, fraction, fault)
	if err != nil {
		f.T.Fatalf("setting fault %q on %v of the pool's instances: %v", fault, fraction, err)
	}
	return ids
}

func (f *Fixture) groupKey() core.GroupKey {
	f.T.Helper()
	if f.Provider.GroupKey == nil {
		f.T.Fatalf("provider %s has no group in the simulated cloud", f.Provider.PoolKind())
	}
	return f.Provider.GroupKey(f)
}

// Instances returns the group's instances that are not being deleted.
func (f *Fixture) Instances() []core.Instance { return f.Group().Live() }

// InstanceIDs returns the IDs of the group's instances that are not being
// deleted, sorted.
func (f *Fixture) InstanceIDs() []string { return IDs(f.Instances()) }

// IDs returns the IDs of instances, sorted.
func IDs(instances []core.Instance) []string {
	out := make([]string, len(instances))
	for i := range instances {
		out[i] = instances[i].ID
	}
	slices.Sort(out)
	return out
}

// PoolNodes returns the Nodes of the pool's instances.
func (f *Fixture) PoolNodes() []corev1.Node {
	f.T.Helper()
	list, err := f.CS.CoreV1().Nodes().List(f.Ctx, metav1.ListOptions{})
	if err != nil {
		f.T.Fatal(err)
	}
	owns := f.Provider.OwnsNode(f)
	var out []corev1.Node
	for i := range list.Items {
		if owns(&list.Items[i]) {
			out = append(out, list.Items[i])
		}
	}
	return out
}

// NodeNames returns the names of the pool's Nodes, as a set.
func (f *Fixture) NodeNames() map[string]bool {
	f.T.Helper()
	out := map[string]bool{}
	for _, n := range f.PoolNodes() {
		out[n.Name] = true
	}
	return out
}

// Requests counts the requests the provider's faces (Provider.Faces)
// answered since the cloud's statistics were last reset, but the ignored
// operations (Provider.Ignored): all of them, and the writes among them
// (IsWrite).
func (f *Fixture) Requests() (all, writes int64) {
	p := f.Provider
	for _, r := range f.Cloud.Stats().Requests {
		if !slices.Contains(p.Faces, r.Face) || slices.Contains(p.Ignored, r.Operation) {
			continue
		}
		all += r.Count
		if IsWrite(r.Operation) {
			writes += r.Count
		}
	}
	return all, writes
}

// IsWrite reports whether a face's operation ("aws.autoscaling.SetDesiredCapacity",
// "azure.VirtualMachineScaleSets.Get", "GetGroup") may change something:
// whether its action is neither a Describe, a Get nor a List.
func IsWrite(op string) bool {
	action := op[strings.LastIndexByte(op, '.')+1:]
	return !strings.HasPrefix(action, "Describe") && !strings.HasPrefix(action, "Get") && !strings.HasPrefix(action, "List")
}

// Ops returns how many requests of operation op the cloud's face answered
// with a status below 300.
func (f *Fixture) Ops(face, op string) int64 {
	var n int64
	for _, r := range f.Cloud.Stats().Requests {
		if r.Face == face && r.Operation == op && r.Status < 300 {
			n += r.Count
		}
	}
	return n
}

// conditioned is an object with metav1.Conditions (every infra pool).
type conditioned interface {
	GetConditions() []metav1.Condition
}

// poolConditions reads the infra pool's conditions.
func (f *Fixture) poolConditions() ([]metav1.Condition, error) {
	p := f.Provider.NewPool()
	if err := f.Env.Client.Get(f.Ctx, f.PoolKey(), p); err != nil {
		return nil, err
	}
	return p.(conditioned).GetConditions(), nil
}

// PoolCondition returns the infra pool's condition t, nil when it has
// none.
func (f *Fixture) PoolCondition(t string) *metav1.Condition {
	f.T.Helper()
	conds, err := f.poolConditions()
	if err != nil {
		f.T.Fatal(err)
	}
	return meta.FindStatusCondition(conds, t)
}

// PoolConditionsTrue returns nil when the infra pool's conditions of
// every one of types are True (ConditionsTrue), and says what differs
// otherwise.
func (f *Fixture) PoolConditionsTrue(types ...string) error {
	conds, err := f.poolConditions()
	if err != nil {
		return err
	}
	return ConditionsTrue(conds, types...)
}

// PoolConverged returns nil once the infra pool's engine reports the
// rollout converged.
func (f *Fixture) PoolConverged() error {
	conds, err := f.poolConditions()
	if err != nil {
		return err
	}
	if c := meta.FindStatusCondition(conds, infrav1.RolloutProgressingCondition); c == nil || c.Reason != infrav1.ConvergedReason {
		return fmt.Errorf("%s not converged: %+v", f.Provider.PoolKind(), c)
	}
	return nil
}

// WaitCondition waits until the infra pool's condition t is not True,
// with reason and a message containing every one of words (see
// ConditionNotTrue).
func (f *Fixture) WaitCondition(timeout time.Duration, t, reason string, words ...string) {
	f.T.Helper()
	f.waitPoolConditions(timeout, func(conds []metav1.Condition) error { return ConditionNotTrue(conds, t, reason, words...) })
}

// WaitPoolCondition waits until the infra pool's condition t has status
// and a message containing every one of words.
func (f *Fixture) WaitPoolCondition(timeout time.Duration, t string, status metav1.ConditionStatus, words ...string) {
	f.T.Helper()
	f.waitPoolConditions(timeout, func(conds []metav1.Condition) error {
		c := meta.FindStatusCondition(conds, t)
		if c == nil || c.Status != status {
			return fmt.Errorf("%s %s: %+v, want %s", f.Provider.PoolKind(), t, c, status)
		}
		for _, w := range words {
			if !strings.Contains(c.Message, w) {
				return fmt.Errorf("%s %s's message %q does not mention %q", f.Provider.PoolKind(), t, c.Message, w)
			}
		}
		return nil
	})
}

// waitPoolConditions waits until check accepts the infra pool's
// conditions.
func (f *Fixture) waitPoolConditions(timeout time.Duration, check func([]metav1.Condition) error) {
	f.T.Helper()
	testenv.Eventually(f.T, timeout, func() error {
		conds, err := f.poolConditions()
		if err != nil {
			return err
		}
		return check(conds)
	})
}

// Converged returns nil when the pool is Running with n Ready Nodes on
// version and says what is missing otherwise: the MachinePool Running with
// n ready replicas; the infra pool converged, its provider's own condition
// True, ready, with n providerIDs and replicas (Cluster API's contract
// fields); the cloud's group with n instances; n schedulable Ready Nodes
// on version; one Ready per-instance object on the latest model with a
// Node and one Machine per instance; and whatever Provider.Check,
// CheckNode and CheckMachine add.
func (f *Fixture) Converged(n int, version string) error {
	p := f.Provider
	mp := &clusterv1.MachinePool{}
	if err := f.Env.Client.Get(f.Ctx, f.PoolKey(), mp); err != nil {
		return err
	}
	if mp.Status.Phase != string(clusterv1.MachinePoolPhaseRunning) || ptr.Deref(mp.Status.ReadyReplicas, -1) != int32(n) || ptr.Deref(mp.Status.Replicas, -1) != int32(n) {
		return fmt.Errorf("MachinePool phase %s, replicas %v, ready %v; want Running with %d", mp.Status.Phase, mp.Status.Replicas, mp.Status.ReadyReplicas, n)
	}
	pool := p.NewPool()
	if err := f.Env.Client.Get(f.Ctx, f.PoolKey(), pool); err != nil {
		return err
	}
	conds := pool.(conditioned).GetConditions()
	if c := meta.FindStatusCondition(conds, infrav1.RolloutProgressingCondition); c == nil || c.Reason != infrav1.ConvergedReason {
		return fmt.Errorf("%s not converged: %+v", p.PoolKind(), c)
	}
	if p.ReadyCondition != "" {
		if c := meta.FindStatusCondition(conds, p.ReadyCondition); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("%s %s: %+v", p.PoolKind(), p.ReadyCondition, c)
		}
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pool)
	if err != nil {
		return err
	}
	ids, _, _ := unstructured.NestedStringSlice(u, "spec", "providerIDList")
	replicas, _, _ := unstructured.NestedInt64(u, "status", "replicas")
	ready, _, _ := unstructured.NestedBool(u, "status", "ready")
	if len(ids) != n || replicas != int64(n) || !ready {
		return fmt.Errorf("%s reports %d providerIDs, %d replicas, ready %v", p.PoolKind(), len(ids), replicas, ready)
	}
	if p.GroupKey != nil {
		if g := f.Group(); g == nil || len(g.Instances) != n {
			return fmt.Errorf("the cloud's group has instances %v, want %d", InstanceStates(g), n)
		}
	}
	if p.Check != nil {
		if err := p.Check(f, pool); err != nil {
			return err
		}
	}
	if err := f.nodesConverged(n, version); err != nil {
		return err
	}
	if err := f.machinesConverged(n); err != nil {
		return err
	}
	cm := &clusterv1.MachineList{}
	if err := f.Env.Client.List(f.Ctx, cm, client.InNamespace(f.NS)); err != nil {
		return err
	}
	if len(cm.Items) != n {
		return fmt.Errorf("%d Machines, want %d", len(cm.Items), n)
	}
	return nil
}

func (f *Fixture) nodesConverged(n int, version string) error {
	nodes := f.PoolNodes()
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
		if f.Provider.CheckNode != nil {
			if err := f.Provider.CheckNode(node); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *Fixture) machinesConverged(n int) error {
	p := f.Provider
	list := p.NewMachineList()
	if err := f.Env.Client.List(f.Ctx, list, client.InNamespace(f.NS)); err != nil {
		return err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	if len(items) != n {
		return fmt.Errorf("%d %ss, want %d", len(items), p.MachineKind(), n)
	}
	for _, item := range items {
		m := item.(contract.InstanceObject)
		if v := p.Adapter().ReadInstance(m); !v.Ready || !v.UpToDate || v.NodeRef == nil {
			return fmt.Errorf("%s %s: %+v", p.MachineKind(), m.GetName(), v)
		}
		if p.CheckMachine != nil {
			if err := p.CheckMachine(m); err != nil {
				return err
			}
		}
	}
	return nil
}

// WaitConverged waits until Converged(n, version) holds.
func (f *Fixture) WaitConverged(n int, version string, timeout time.Duration) {
	f.T.Helper()
	testenv.Eventually(f.T, timeout, func() error { return f.Converged(n, version) })
}

// WaitRolled waits until none of the instances in before is left and the
// pool has converged again with n instances on version.
func (f *Fixture) WaitRolled(before []string, n int, version string, timeout time.Duration) {
	f.T.Helper()
	testenv.Eventually(f.T, timeout, func() error {
		if g := f.Group(); g != nil {
			for _, in := range g.Instances {
				if slices.Contains(before, in.ID) {
					return fmt.Errorf("instance %s has not been replaced yet", in.ID)
				}
			}
		}
		return f.Converged(n, version)
	})
}

// DeleteOneMachine deletes one of the pool's per-instance objects and
// waits (up to timeout) until its instance alone was replaced: the pool
// converged at n instances of version, the other n-1 kept.
func (f *Fixture) DeleteOneMachine(n int, version string, timeout time.Duration) {
	f.T.Helper()
	kind := f.Provider.MachineKind()
	before := f.InstanceIDs()
	list := f.Provider.NewMachineList()
	if err := f.Env.Client.List(f.Ctx, list, client.InNamespace(f.NS)); err != nil {
		f.T.Fatal(err)
	}
	items, err := meta.ExtractList(list)
	if err != nil || len(items) == 0 {
		f.T.Fatalf("no %s to delete (%v)", kind, err)
	}
	victim := items[0].(contract.InstanceObject)
	id := f.Provider.Adapter().ReadInstance(victim).InstanceID
	if err := f.Env.Client.Delete(f.Ctx, victim); err != nil {
		f.T.Fatal(err)
	}
	f.WaitRolled([]string{id}, n, version, timeout)
	after := f.InstanceIDs()
	kept := 0
	for _, id := range before {
		if slices.Contains(after, id) {
			kept++
		}
	}
	if kept != n-1 {
		f.T.Errorf("deleting %s %s (instance %s) kept %d of the other %d instances (before %v, after %v)", kind, victim.GetName(), id, kept, n-1, before, after)
	}
}

// DeletePoolAndWaitGone deletes the MachinePool and waits until no group,
// Node, infra pool, per-instance object, Machine, MachinePool or bootstrap
// data Secret of it is left.
func (f *Fixture) DeletePoolAndWaitGone(timeout time.Duration) {
	f.T.Helper()
	mp := &clusterv1.MachinePool{}
	if err := f.Env.Client.Get(f.Ctx, f.PoolKey(), mp); err != nil {
		f.T.Fatal(err)
	}
	dataSecret := ptr.Deref(mp.Spec.Template.Spec.Bootstrap.DataSecretName, "")
	nodes := f.PoolNodes()
	if err := f.Env.Client.Delete(f.Ctx, mp); err != nil {
		f.T.Fatal(err)
	}
	testenv.Eventually(f.T, timeout, func() error {
		if g := f.Group(); g != nil {
			return fmt.Errorf("the cloud's group still has %d instances", len(g.Instances))
		}
		for _, n := range nodes {
			if _, err := f.CS.CoreV1().Nodes().Get(f.Ctx, n.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("Node %s still there (%v)", n.Name, err)
			}
		}
		if n := len(f.PoolNodes()); n > 0 {
			return fmt.Errorf("%d Nodes left", n)
		}
		lists := []client.ObjectList{f.Provider.NewMachineList(), f.Provider.NewPoolList(), &clusterv1.MachineList{}, &clusterv1.MachinePoolList{}}
		for _, l := range lists {
			if err := f.Env.Client.List(f.Ctx, l, client.InNamespace(f.NS)); err != nil {
				return err
			}
			if n := meta.LenList(l); n > 0 {
				return fmt.Errorf("%d %T items left", n, l)
			}
		}
		if dataSecret != "" {
			if err := f.Env.Client.Get(f.Ctx, f.Key(dataSecret), &corev1.Secret{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("bootstrap data Secret %s still there (%v)", dataSecret, err)
			}
		}
		return nil
	})
}

// SteadyState measures, with the pool converged, the reconciles of pokes
// changes to the infra pool that change nothing in the cloud: it resets
// the ScaleGroup's counts and the cloud's statistics, annotates the pool
// pokes times (each time waiting for the ScaleGroup's read), waits until
// every read's reconcile has finished and returns how many reconciles
// finished. For a benchmark, only that part is timed.
func (f *Fixture) SteadyState(t testing.TB, m *Manager, pokes int) int64 {
	t.Helper()
	testenv.Eventually(t, 5*time.Minute, f.PoolConverged)
	sg := m.ScaleGroup
	// The reconciles are counted from before the reads are reset: a
	// reconcile still running from the convergence that read the cloud
	// after the reset and returned before the count was taken would leave
	// a read no finished reconcile answers for, and the wait below would
	// never end.
	before := f.Reconciles()
	sg.ResetCounts()
	f.Cloud.ResetStats()
	b, timed := t.(*testing.B)
	if timed {
		b.StartTimer()
	}
	for i := range pokes {
		Patch(f, f.PoolKey(), f.Provider.NewPool(), func(p client.Object) {
			a := p.GetAnnotations()
			if a == nil {
				a = map[string]string{}
			}
			a["test.mpool.dev/poke"] = strconv.Itoa(i)
			p.SetAnnotations(a)
		})
		testenv.Eventually(t, time.Minute, func() error {
			if got := sg.Counts().Reads(); got < int64(i+1) {
				return fmt.Errorf("%d reads after %d pokes", got, i+1)
			}
			return nil
		})
	}
	// A reconcile is counted when it returns, after its read.
	testenv.Eventually(t, 10*time.Second, func() error {
		if r, n := sg.Counts().Reads(), f.Reconciles()-before; n < r {
			return fmt.Errorf("%d reads, %d reconciles finished", r, n)
		}
		return nil
	})
	if timed {
		b.StopTimer()
	}
	return f.Reconciles() - before
}

// InstanceStates returns the group's instances as ID:state, for messages.
func InstanceStates(g *core.Group) []string {
	if g == nil {
		return nil
	}
	var out []string
	for _, in := range g.Instances {
		out = append(out, in.ID+":"+string(in.State))
	}
	return out
}

// CheckTokenRotationAtRest waits, on a converged pool whose manager m
// issues short-lived bootstrap tokens, until the data Secret names a new
// token, the old token's Secret is deleted (no instance can be joining
// with it) and the engine has reconciled the pool three times since; the
// test fails if the rotation wrote to the cloud (m's ScaleGroup counts) or
// changed the pool's instances. It returns the old token's name.
func (f *Fixture) CheckTokenRotationAtRest(m *Manager) string {
	f.T.Helper()
	before := f.InstanceIDs()
	token := f.DataSecret().Annotations[kubeadmconfig.TokenSecretAnnotation]
	if token == "" {
		f.T.Fatal("the data Secret names no bootstrap token")
	}
	m.ScaleGroup.ResetCounts()
	testenv.Eventually(f.T, time.Minute, func() error {
		if got := f.DataSecret().Annotations[kubeadmconfig.TokenSecretAnnotation]; got == token {
			return fmt.Errorf("the token %s has not been rotated yet", token)
		}
		return nil
	})
	testenv.Eventually(f.T, time.Minute, func() error {
		err := f.Env.Client.Get(f.Ctx, types.NamespacedName{Namespace: metav1.NamespaceSystem, Name: token}, &corev1.Secret{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("token Secret %s still there (%v)", token, err)
		}
		return nil
	})
	// The engine hears of the new data through the Secret; make sure it
	// has looked at the pool a few times since.
	f.PokeUntilReconciled(f.T, 3)
	if c := m.ScaleGroup.Counts(); c.Writes() != 0 || c.Reads() == 0 {
		f.T.Fatalf("a token rotation on a pool at rest made %d %s writes (%d reads): %v", c.Writes(), f.Provider.Name, c.Reads(), c)
	}
	if after := f.InstanceIDs(); !slices.Equal(after, before) {
		f.T.Fatalf("a token rotation replaced instances: %v, were %v", after, before)
	}
	return token
}
