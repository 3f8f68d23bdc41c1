package local

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/features"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/provider"
	"github.com/mpool-dev/mpool/internal/provider/local"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/server"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// The names of the Cluster and the pool (itest.Local's).
var (
	clusterName = itest.Local.ClusterName
	poolName    = itest.Local.PoolName
)

const (
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
	// nodeAgentTransport wraps the node agent's API server transport.
	nodeAgentTransport transport.WrapperFunc
	// maxHeartbeatQPS caps the simulated kubelets' Lease renewals per
	// second (0: the node agent's default, 50).
	maxHeartbeatQPS float64
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
	return itest.Local.StartCloud(t, env, itest.CloudOptions{Seed: o.seed, BootDelay: o.bootDelay, BootJitter: o.bootJitter, Faults: o.faults,
		NodeAgentTransport: o.nodeAgentTransport, MaxHeartbeatQPS: o.maxHeartbeatQPS})
}

// managerOptions tune a test's manager.
type managerOptions struct {
	// qps and burst override the client rate limits of the manager's
	// connection to the API server (default: the test environment's, 200
	// and 400).
	qps                     float32
	burst                   int
	skipModelReconciliation bool
	// spied routes the manager's cloud requests through the fixture's
	// cloudSpy.
	spied bool
	// tune, when set, adjusts the manager's options (the engine's join
	// timeout, timing, ...) before it is built.
	tune func(*manager.Options)
	// wrap, when set, wraps the transport of every client of the manager
	// (management and workload cluster).
	wrap transport.WrapperFunc
}

// testManager is a running mpool manager (itest.Manager): its ScaleGroup is
// the local provider's as the engine calls it.
type testManager = itest.Manager

// start starts a simulated cloud (co), a fixture in it and a manager
// (mo).
func start(t testing.TB, co cloudOptions, mo managerOptions) (*fixture, *testManager) {
	t.Helper()
	f := newFixture(t, startCloud(t, co))
	return f, startManager(t, f, mo)
}

// startManager starts a manager for the fixture's namespace against the
// test API server and the fixture's cloud, and stops it with the test (or
// earlier, with Stop). Its cache sees only that namespace: the pools other
// tests left behind belong to other clouds.
func startManager(t testing.TB, f *fixture, o managerOptions) *testManager {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	if o.qps != 0 {
		cfg.QPS, cfg.Burst = o.qps, o.burst
	}
	cfg.Wrap(o.wrap)
	gates := features.NewGate()
	if err := gates.SetFromMap(map[string]bool{string(features.SkipMachinePoolModelReconciliation): o.skipModelReconciliation}); err != nil {
		t.Fatal(err)
	}
	return f.StartManagerWith(cfg, func(mopts *manager.Options) {
		mopts.EngineTiming.QuotaRetry = 0 // the engine's default: the quota tests set their own
		mopts.Gates = gates
		mopts.Providers = provider.Configs{local.ProviderName: &local.Config{URL: f.Cloud.URL()}}
		if o.spied {
			mopts.CloudHTTPClient = &http.Client{Timeout: 30 * time.Second, Transport: f.spy}
		}
		mopts.WorkloadQPS, mopts.WorkloadBurst = cfg.QPS, cfg.Burst
		mopts.WorkloadWrapTransport = o.wrap
	}, o.tune)
}

// fixture is one test's cluster and pool, in its own namespace
// (itest.Local's fixture); group is the pool's group in the cloud, spy the
// transport of the managers started spied.
type fixture struct {
	*itest.Fixture
	group string
	spy   *cloudSpy
}

// newFixture creates a namespace with a Cluster whose workload cluster is
// the test API server, with its kubeconfig and CA Secrets as Cluster API
// keeps them.
func newFixture(t testing.TB, cloud *server.Server) *fixture {
	t.Helper()
	f := &fixture{Fixture: itest.NewFixture(t, env, itest.Local, cloud)}
	f.group = itest.LocalGroup(f.Fixture)
	f.spy = newCloudSpy(t, f)
	return f
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
	simulation     *infrav1.LocalSimulation
}

// createPool creates a MachinePool with its LocalMachinePool and
// KubeadmConfig, the way the seeds' Azure example pairs MachinePool,
// AzureMachinePool and KubeadmConfig.
func (f *fixture) createPool(p poolSpec) {
	f.T.Helper()
	f.createPoolOf(clusterName, poolName, p)
}

// createPoolOf is createPool for the pool name of the Cluster cluster.
func (f *fixture) createPoolOf(cluster, name string, p poolSpec) {
	f.T.Helper()
	for _, o := range f.poolObjects(cluster, name, p) {
		f.Create(o)
	}
}

// poolObjects are the LocalMachinePool, KubeadmConfig and MachinePool
// createPoolOf creates, in that order.
func (f *fixture) poolObjects(cluster, name string, p poolSpec) []client.Object {
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
	return []client.Object{&infrav1.LocalMachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: name},
		Spec: infrav1.LocalMachinePoolSpec{
			Template:   infrav1.LocalMachinePoolMachineTemplate{InstanceType: "sim.small", Image: p.image, Zones: p.zones},
			Simulation: p.simulation,
			Strategy: infrav1.MachinePoolDeploymentStrategy{
				Type: infrav1.RollingUpdateMachinePoolDeploymentStrategyType,
				RollingUpdate: &infrav1.MachineRollingUpdateDeployment{
					MaxSurge: &p.maxSurge, MaxUnavailable: &p.maxUnavailable, DeletePolicy: p.deletePolicy,
				},
			},
		},
	}, &bootstrapv1.KubeadmConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: name},
		Spec: bootstrapv1.KubeadmConfigSpec{
			JoinConfiguration: bootstrapv1.JoinConfiguration{
				NodeRegistration: bootstrapv1.NodeRegistrationOptions{
					Name:             `{{ ds.meta_data["local_hostname"] }}`,
					KubeletExtraArgs: []bootstrapv1.Arg{{Name: "node-labels", Value: ptr.To("mpool.dev/pool=" + name)}},
				},
			},
		},
	}, &clusterv1.MachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: name},
		Spec: clusterv1.MachinePoolSpec{
			ClusterName: cluster,
			Replicas:    ptr.To(p.replicas),
			Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				ClusterName: cluster,
				Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfig", Name: name,
				}},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "LocalMachinePool", Name: name},
				Version:           p.version,
			}},
		},
	}}
}

// updateLocalPool changes the LocalMachinePool with a merge patch.
func (f *fixture) updateLocalPool(mutate func(*infrav1.LocalMachinePool)) {
	f.T.Helper()
	itest.UpdatePool(f.Fixture, mutate)
}

// localPool returns the LocalMachinePool.
func (f *fixture) localPool() *infrav1.LocalMachinePool {
	f.T.Helper()
	return itest.Pool[*infrav1.LocalMachinePool](f.Fixture)
}

// nodeName is the Node name of instance id (the simulated VM's host name).
func (f *fixture) nodeName(id string) string { return strings.ReplaceAll(f.group, ".", "-") + "-" + id }

// waitConverged waits until the pool has converged with n instances on
// version (itest.Fixture.Converged) and image, when not empty.
func (f *fixture) waitConverged(n int, version, image string, timeout time.Duration) {
	f.T.Helper()
	testenv.Eventually(f.T, timeout, func() error { return f.converged(n, version, image) })
}

func (f *fixture) converged(n int, version, image string) error {
	if err := f.Converged(n, version); err != nil {
		return err
	}
	for _, node := range f.PoolNodes() {
		if image != "" && !strings.Contains(node.Status.NodeInfo.OSImage, image) {
			return fmt.Errorf("Node %s runs image %q, want %q", node.Name, node.Status.NodeInfo.OSImage, image)
		}
	}
	return nil
}

// machineWatch watches the fixture's LocalMachinePoolMachines (see
// watchMachines).
type machineWatch struct {
	w     watch.Interface
	done  chan struct{}
	mu    sync.Mutex
	ended bool // the watch ended before it was stopped
}

// watchMachines calls see with every change of the fixture's
// LocalMachinePoolMachines, in the order the API server made them, from a
// watch that runs until it is stopped or the test ends: it sees states
// that last for one write before an object goes.
func watchMachines(t testing.TB, f *fixture, see func(watch.EventType, *infrav1.LocalMachinePoolMachine)) *machineWatch {
	t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(context.Background(), &infrav1.LocalMachinePoolMachineList{}, client.InNamespace(f.NS))
	if err != nil {
		t.Fatalf("watching the LocalMachinePoolMachines: %v", err)
	}
	mw := &machineWatch{w: w, done: make(chan struct{})}
	go func() {
		defer close(mw.done)
		for ev := range w.ResultChan() {
			if m, ok := ev.Object.(*infrav1.LocalMachinePoolMachine); ok {
				see(ev.Type, m)
			}
		}
		mw.mu.Lock()
		mw.ended = true
		mw.mu.Unlock()
	}()
	t.Cleanup(func() { mw.stop() })
	return mw
}

// stop ends the watch and waits for its last event to be seen; it reports
// whether the watch was still running.
func (mw *machineWatch) stop() bool {
	mw.mu.Lock()
	running := !mw.ended
	mw.mu.Unlock()
	mw.w.Stop()
	<-mw.done
	return running
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
	return &cloudSpy{t: t, cs: f.CS, group: f.group, next: http.DefaultTransport, deletes: map[string]int{}}
}

// RoundTrip implements http.RoundTripper.
func (s *cloudSpy) RoundTrip(req *http.Request) (*http.Response, error) {
	ids, isDelete, err := itest.LocalDeletes(req)
	if err != nil {
		return nil, err
	}
	if !isDelete {
		return s.next.RoundTrip(req)
	}
	for _, id := range ids {
		s.checkDrained(req.Context(), id)
	}
	resp, err := s.next.RoundTrip(req)
	if err == nil && resp.StatusCode < 300 {
		s.mu.Lock()
		s.deleteReqs++
		for _, id := range ids {
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
