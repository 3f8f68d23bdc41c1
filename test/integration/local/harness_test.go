package local

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/features"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/provider"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/provider/local"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/server"
	"github.com/mpool-dev/mpool/sim/wire/localapi"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

const (
	clusterName = "c1"
	poolName    = "pool-0"
	// v1 and v2 are the Kubernetes versions pools roll between.
	v1 = "v1.31.2"
	v2 = "v1.32.0"
)

// cloudOptions tune a test's simulated cloud.
type cloudOptions struct {
	// instant makes instances boot with no delay (bootDelay 0 means the
	// tests' default).
	instant    bool
	bootDelay  time.Duration
	bootJitter time.Duration
	faults     core.Faults
	seed       uint64
}

// startCloud starts a simulated cloud whose node agent joins instances to
// the test API server. It keeps running across manager restarts and stops
// with the test.
func startCloud(t testing.TB, o cloudOptions) *server.Server {
	t.Helper()
	if o.bootDelay == 0 && !o.instant {
		o.bootDelay = 150 * time.Millisecond
		o.bootJitter = 100 * time.Millisecond
	}
	if o.seed == 0 {
		o.seed = 42
	}
	return itest.StartCloud(t, env, core.Options{
		Seed:              o.seed,
		DefaultSimulation: &core.Simulation{BootDelay: o.bootDelay, BootJitter: o.bootJitter},
		Faults:            o.faults,
	})
}

// managerOptions tune a test's manager.
type managerOptions struct {
	// qps and burst override the client rate limits of the manager's
	// connection to the API server (default: the test environment's, 200
	// and 400).
	qps                     float32
	burst                   int
	skipModelReconciliation bool
	spy                     *cloudSpy
	// tune, when set, adjusts the manager's options (the engine's join
	// timeout, timing, ...) before it is built.
	tune func(*manager.Options)
}

// testManager is a running mpool manager (itest.Manager): its ScaleGroup is
// the local provider's as the engine calls it.
type testManager = itest.Manager

// startManager starts a manager for the fixture's namespace against the
// test API server and the cloud at cloudURL, and stops it with the test (or
// earlier, with Stop). Its cache sees only that namespace: the pools other
// tests left behind belong to other clouds.
func startManager(t testing.TB, f *fixture, cloudURL string, o managerOptions) *testManager {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	if o.qps != 0 {
		cfg.QPS, cfg.Burst = o.qps, o.burst
	}
	gates := features.NewGate()
	if err := gates.SetFromMap(map[string]bool{string(features.SkipMachinePoolModelReconciliation): o.skipModelReconciliation}); err != nil {
		t.Fatal(err)
	}
	mopts := itest.ManagerOptions(env, f.ns)
	mopts.EngineTiming.QuotaRetry = 0 // the engine's default: the quota tests set their own
	mopts.Gates = gates
	mopts.Providers = provider.Configs{local.ProviderName: &local.Config{URL: cloudURL}}
	if o.spy != nil {
		mopts.CloudHTTPClient = &http.Client{Timeout: 30 * time.Second, Transport: o.spy}
	}
	mopts.WorkloadQPS, mopts.WorkloadBurst = cfg.QPS, cfg.Burst
	if o.tune != nil {
		o.tune(&mopts)
	}
	return itest.StartManager(t, cfg, mopts, local.ProviderName)
}

// fixture is one test's cluster and pool, in its own namespace.
type fixture struct {
	t     testing.TB
	ctx   context.Context
	ns    string
	cloud *server.Server
	cs    kubernetes.Interface
	group string
}

// newFixture creates a namespace with a Cluster whose workload cluster is the
// test API server, with its kubeconfig and CA Secrets as Cluster API keeps
// them.
func newFixture(t testing.TB, cloud *server.Server) *fixture {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, ctx: context.Background(), ns: env.NewNamespace(t), cloud: cloud, cs: cs}
	f.group = contract.GroupName(f.ns, poolName, 63)
	f.create(&clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: clusterName},
		Spec:       clusterv1.ClusterSpec{ControlPlaneEndpoint: env.ControlPlaneEndpoint(t)},
	})
	env.RegisterWorkloadCluster(t, f.ns, clusterName)
	return f
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

// poolSpec describes a test pool.
type poolSpec struct {
	replicas       int32
	version        string
	image          string
	maxSurge       intstr.IntOrString
	maxUnavailable intstr.IntOrString
	deletePolicy   infrav1.DeletePolicyType
	zones          []string
}

// createPool creates a MachinePool with its LocalMachinePool and
// KubeadmConfig, the way the seeds' Azure example pairs MachinePool,
// AzureMachinePool and KubeadmConfig.
func (f *fixture) createPool(p poolSpec) {
	f.t.Helper()
	if p.version == "" {
		p.version = v1
	}
	if p.image == "" {
		p.image = "ubuntu-2404"
	}
	if p.deletePolicy == "" {
		p.deletePolicy = infrav1.OldestDeletePolicyType
	}
	if p.maxSurge == (intstr.IntOrString{}) {
		p.maxSurge = intstr.FromInt32(1)
	}
	if p.zones == nil {
		p.zones = []string{"zone-a", "zone-b", "zone-c"}
	}
	f.create(&infrav1.LocalMachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: poolName},
		Spec: infrav1.LocalMachinePoolSpec{
			Template: infrav1.LocalMachinePoolMachineTemplate{InstanceType: "sim.small", Image: p.image, Zones: p.zones},
			Strategy: infrav1.MachinePoolDeploymentStrategy{
				Type: infrav1.RollingUpdateMachinePoolDeploymentStrategyType,
				RollingUpdate: &infrav1.MachineRollingUpdateDeployment{
					MaxSurge: &p.maxSurge, MaxUnavailable: &p.maxUnavailable, DeletePolicy: p.deletePolicy,
				},
			},
		},
	})
	f.create(&bootstrapv1.KubeadmConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: poolName},
		Spec: bootstrapv1.KubeadmConfigSpec{
			JoinConfiguration: bootstrapv1.JoinConfiguration{
				NodeRegistration: bootstrapv1.NodeRegistrationOptions{
					Name:             `{{ ds.meta_data["local_hostname"] }}`,
					KubeletExtraArgs: []bootstrapv1.Arg{{Name: "node-labels", Value: ptr.To("mpool.dev/pool=" + poolName)}},
				},
			},
		},
	})
	f.create(&clusterv1.MachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: poolName},
		Spec: clusterv1.MachinePoolSpec{
			ClusterName: clusterName,
			Replicas:    ptr.To(p.replicas),
			Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				ClusterName: clusterName,
				Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfig", Name: poolName,
				}},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "LocalMachinePool", Name: poolName},
				Version:           p.version,
			}},
		},
	})
}

// updateMachinePool changes the MachinePool with a conflict-free merge patch.
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

// updateLocalPool changes the LocalMachinePool with a merge patch.
func (f *fixture) updateLocalPool(mutate func(*infrav1.LocalMachinePool)) {
	f.t.Helper()
	p := &infrav1.LocalMachinePool{}
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
	f.updateMachinePool(func(mp *clusterv1.MachinePool) { mp.Spec.Replicas = ptr.To(n) })
}

func (f *fixture) setVersion(v string) {
	f.updateMachinePool(func(mp *clusterv1.MachinePool) { mp.Spec.Template.Spec.Version = v })
}

// group returns the pool's group as the cloud has it, nil when it does not
// exist. It reads the cloud's core directly: not counted, never faulted.
func (f *fixture) groupState() *core.Group {
	g, err := f.cloud.Cloud().GetGroup(f.group)
	if err != nil {
		return nil
	}
	return g
}

// liveInstances returns the group's instances not being deleted.
func (f *fixture) liveInstances() []core.Instance {
	var out []core.Instance
	if g := f.groupState(); g != nil {
		for _, in := range g.Instances {
			if in.State != core.StateDeleting {
				out = append(out, in)
			}
		}
	}
	return out
}

// poolNodes returns the Nodes of the pool's instances.
func (f *fixture) poolNodes() []corev1.Node {
	f.t.Helper()
	list, err := f.cs.CoreV1().Nodes().List(f.ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []corev1.Node
	prefix := "local:///" + f.group + "/"
	for _, n := range list.Items {
		if strings.HasPrefix(n.Spec.ProviderID, prefix) {
			out = append(out, n)
		}
	}
	return out
}

// nodeName is the Node name of instance id (the simulated VM's host name).
func (f *fixture) nodeName(id string) string { return strings.ReplaceAll(f.group, ".", "-") + "-" + id }

// waitConverged waits until the pool is Running with n Ready Nodes, every
// instance on the version (and image, when not empty) asked for, one
// LocalMachinePoolMachine and one Machine per instance, and nothing else
// left: no instance being deleted, no stray Node.
func (f *fixture) waitConverged(n int, version, image string, timeout time.Duration) {
	f.t.Helper()
	testenv.Eventually(f.t, timeout, func() error { return f.converged(n, version, image) })
}

func (f *fixture) converged(n int, version, image string) error {
	mp := &clusterv1.MachinePool{}
	if err := env.Client.Get(f.ctx, f.key(poolName), mp); err != nil {
		return err
	}
	if mp.Status.Phase != string(clusterv1.MachinePoolPhaseRunning) || ptr.Deref(mp.Status.ReadyReplicas, -1) != int32(n) || ptr.Deref(mp.Status.Replicas, -1) != int32(n) {
		return fmt.Errorf("MachinePool phase %s, replicas %v, ready %v; want Running with %d", mp.Status.Phase, mp.Status.Replicas, mp.Status.ReadyReplicas, n)
	}
	lp := &infrav1.LocalMachinePool{}
	if err := env.Client.Get(f.ctx, f.key(poolName), lp); err != nil {
		return err
	}
	if c := meta.FindStatusCondition(lp.Status.Conditions, infrav1.RolloutProgressingCondition); c == nil || c.Reason != infrav1.ConvergedReason {
		return fmt.Errorf("LocalMachinePool not converged: %+v", c)
	}
	if len(lp.Spec.ProviderIDList) != n || lp.Status.Replicas != int32(n) || !lp.Status.Ready {
		return fmt.Errorf("LocalMachinePool reports %d providerIDs, %d replicas, ready %v", len(lp.Spec.ProviderIDList), lp.Status.Replicas, lp.Status.Ready)
	}
	g := f.groupState()
	if g == nil || len(g.Instances) != n {
		return fmt.Errorf("cloud group has %v instances, want %d", instancesOf(g), n)
	}
	for _, in := range g.Instances {
		if in.State != core.StateRunning || in.Join != core.JoinJoined {
			return fmt.Errorf("instance %s is %s/%s: %s", in.ID, in.State, in.Join, in.Message)
		}
		if in.ModelHash != lp.Status.ModelHash {
			return fmt.Errorf("instance %s runs model %s, pool model is %s", in.ID, in.ModelHash, lp.Status.ModelHash)
		}
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
		if image != "" && !strings.Contains(node.Status.NodeInfo.OSImage, image) {
			return fmt.Errorf("Node %s runs image %q, want %q", node.Name, node.Status.NodeInfo.OSImage, image)
		}
	}
	machines := &infrav1.LocalMachinePoolMachineList{}
	if err := env.Client.List(f.ctx, machines, client.InNamespace(f.ns)); err != nil {
		return err
	}
	if len(machines.Items) != n {
		return fmt.Errorf("%d LocalMachinePoolMachines, want %d", len(machines.Items), n)
	}
	for _, m := range machines.Items {
		if !m.Status.Ready || !m.Status.LatestModelApplied || m.Status.State != infrav1.LocalInstanceRunning || m.Status.NodeRef == nil {
			return fmt.Errorf("LocalMachinePoolMachine %s: %+v", m.Name, m.Status)
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

func instancesOf(g *core.Group) []string {
	if g == nil {
		return nil
	}
	var out []string
	for _, in := range g.Instances {
		out = append(out, in.ID+":"+string(in.State))
	}
	return out
}

// instanceIDs returns the IDs of instances, sorted.
func instanceIDs(in []core.Instance) []string {
	out := make([]string, len(in))
	for i := range in {
		out[i] = in[i].ID
	}
	slices.Sort(out)
	return out
}

// cloudSpy is the manager's HTTP transport to the cloud. It records every
// instance ID the manager deletes (to prove none is deleted twice) and, at
// the moment of the request, checks that the instance's Node holds no pod
// that should have been evicted (to prove drain-before-delete).
type cloudSpy struct {
	t     testing.TB
	cs    kubernetes.Interface
	group string
	next  http.RoundTripper

	mu         sync.Mutex
	deletes    map[string]int
	undrained  []string
	deleteReqs int
}

func newCloudSpy(t testing.TB, f *fixture) *cloudSpy {
	return &cloudSpy{t: t, cs: f.cs, group: f.group, next: http.DefaultTransport, deletes: map[string]int{}}
}

// RoundTrip implements http.RoundTripper.
func (s *cloudSpy) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || !strings.HasSuffix(req.URL.Path, "/deleteInstances") {
		return s.next.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	var r localapi.DeleteInstancesRequest
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, err
	}
	for _, id := range r.IDs {
		s.checkDrained(req.Context(), id)
	}
	resp, err := s.next.RoundTrip(req)
	if err == nil && resp.StatusCode < 300 {
		s.mu.Lock()
		s.deleteReqs++
		for _, id := range r.IDs {
			s.deletes[id]++
		}
		s.mu.Unlock()
	}
	return resp, err
}

func (s *cloudSpy) checkDrained(ctx context.Context, id string) {
	node := strings.ReplaceAll(s.group, ".", "-") + "-" + id
	pods, err := s.cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		s.mu.Lock()
		s.undrained = append(s.undrained, fmt.Sprintf("%s: listing pods: %v", id, err))
		s.mu.Unlock()
		return
	}
	for _, p := range pods.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.Kind == "DaemonSet" {
			continue
		}
		s.mu.Lock()
		s.undrained = append(s.undrained, fmt.Sprintf("instance %s deleted while pod %s/%s was on its Node", id, p.Namespace, p.Name))
		s.mu.Unlock()
	}
}

// assertClean fails t if an instance was deleted twice or before its drain.
func (s *cloudSpy) assertClean() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, n := range s.deletes {
		if n > 1 {
			s.t.Errorf("instance %s was deleted %d times", id, n)
		}
	}
	for _, msg := range s.undrained {
		s.t.Error(msg)
	}
}

func (s *cloudSpy) deleted() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.deletes))
	for k, v := range s.deletes {
		out[k] = v
	}
	return out
}

// reconciles returns how many reconciles the LocalMachinePool controllers of
// this process have finished.
func reconciles(t testing.TB) int64 { return testenv.Reconciles(t, "localmachinepool") }
