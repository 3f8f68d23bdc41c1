package machinepool

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/internal/workload"
)

// benchSize is a benchmark's size: full, or small with MPOOL_BENCH_SMALL=1,
// with which hack/bench-smoke.sh runs every benchmark once to see that it
// still runs.
func benchSize(full, small int) int {
	if v := os.Getenv("MPOOL_BENCH_SMALL"); v != "" && v != "0" {
		return small
	}
	return full
}

// requestCounter counts the HTTP requests of the clients it wraps.
type requestCounter struct{ n atomic.Int64 }

func (c *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		c.n.Add(1)
		return rt.RoundTrip(r)
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// BenchmarkNodeRefs10k measures, for a pool of 10,000 instances whose
// 10,000 Nodes are in the workload cache:
//
//   - ns/op: one status sync (reconcileNodes: providerID index lookups,
//     nodeRefs, ready and available counts, owner-index scan for retired
//     Nodes) with a warm cache;
//   - reconcile-ms: one full Reconcile of the pool once everything is
//     synced;
//   - requests/reconcile: HTTP requests (management and workload clients
//     together) made by one such Reconcile.
//
// Run it alone: go test -run '^$' -bench BenchmarkNodeRefs10k -benchtime 20x ./internal/controller/machinepool/
// Setup (10,000 Nodes through the real API server) takes 20-30 s.
//
// With MPOOL_BENCH_SMALL=1 (hack/bench-smoke.sh) the pool has
// MaxNodeRefs+10 instances instead: still more Nodes than status.nodeRefs
// may list, so the smoke run goes through the truncation too.
func BenchmarkNodeRefs10k(b *testing.B) {
	n := benchSize(10000, MaxNodeRefs+10)
	if shared != nil {
		b.Skip("the test manager is running and would reconcile the benchmark pool: run with -run '^$'")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := installTestCRDs(ctx); err != nil {
		b.Fatal(err)
	}
	ns := env.NewNamespace(b)
	counter := &requestCounter{}

	// Management side: a manager's cached client with a counted transport.
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 1000, 2000
	cfg.Wrap(counter.wrap)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		b.Fatal(err)
	}
	cc, err := workload.New(workload.Options{SecretReader: mgr.GetClient(), Scheme: env.Scheme, WrapTransport: counter.wrap,
		HealthCheckInterval: -1, SyncTimeout: 2 * time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	if err := mgr.Add(cc); err != nil {
		b.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		b.Fatal("cache did not sync")
	}
	r := &Reconciler{Client: mgr.GetClient(), ClusterCache: cc, Clock: clock.RealClock{},
		Recorder: mgr.GetEventRecorder("bench"), externalReader: mgr.GetCache()}

	// Objects: Cluster, kubeconfig, ready providers, the pool, 10,000 Nodes.
	c := env.Client
	mustCreate := func(obj client.Object) {
		if err := c.Create(ctx, obj); err != nil {
			b.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}
	mustCreate(&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"}, Spec: clusterv1.ClusterSpec{Paused: ptr.To(false)}})
	mustCreate(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: workload.KubeconfigSecretName("c1")},
		Data: map[string][]byte{workload.KubeconfigDataKey: env.Kubeconfig}})
	ids := make([]any, n)
	idStrings := make([]string, n)
	for i := range n {
		idStrings[i] = fmt.Sprintf("b:///%s/%05d", ns[len(ns)-8:], i)
		ids[i] = idStrings[i]
	}
	bs := newUnstructured(bootstrapAPIVersion, bootstrapKind, ns, "mp")
	bs.Object["status"] = map[string]any{"ready": true, "dataSecretName": "d"}
	mustCreate(bs)
	infra := newUnstructured(infraAPIVersion, infraPoolKind, ns, "mp")
	infra.Object["spec"] = map[string]any{"providerIDList": ids}
	infra.Object["status"] = map[string]any{"ready": true, "replicas": int64(n)}
	mustCreate(infra)
	mustCreate(&clusterv1.MachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mp"},
		Spec: clusterv1.MachinePoolSpec{
			ClusterName: "c1", Replicas: ptr.To(int32(n)),
			Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				ClusterName: "c1",
				Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: bootstrapGroup, Kind: bootstrapKind, Name: "mp"}},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infraGroup, Kind: infraPoolKind, Name: "mp"},
			}},
		},
	})
	fastCfg := rest.CopyConfig(env.Config)
	fastCfg.QPS, fastCfg.Burst = 5000, 10000
	fast, err := client.New(fastCfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		b.Fatal(err)
	}
	createNodes(b, fast, ns, idStrings)

	// Warm up: reconcile until the pool is Running and the manager's cache
	// holds the result, so that the measured reconciles change nothing.
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "mp"}}
	testenv.Eventually(b, 5*time.Minute, func() error {
		before := counter.n.Load()
		if _, err := r.Reconcile(ctx, req); err != nil {
			return err
		}
		if n := counter.n.Load() - before; n != 0 {
			return fmt.Errorf("the last reconcile still made %d requests", n)
		}
		mp := &clusterv1.MachinePool{}
		if err := mgr.GetClient().Get(ctx, req.NamespacedName, mp); err != nil {
			return err
		}
		if mp.Status.Phase != string(clusterv1.MachinePoolPhaseRunning) || len(mp.Status.NodeRefs) != min(n, MaxNodeRefs) || ptr.Deref(mp.Status.ReadyReplicas, -1) != int32(n) {
			return fmt.Errorf("phase %s, %d nodeRefs, %v ready", mp.Status.Phase, len(mp.Status.NodeRefs), mp.Status.ReadyReplicas)
		}
		return nil
	})

	// API requests and time of a full Reconcile once warm.
	const reconciles = 10
	before := counter.n.Load()
	start := time.Now()
	for range reconciles {
		if _, err := r.Reconcile(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	perReconcile := time.Since(start) / reconciles
	requests := float64(counter.n.Load()-before) / reconciles

	// One status sync with a warm cache, on a scope as Reconcile makes it:
	// the pool as read (orig, which reconcileNodes only reads) and a copy
	// the sync writes its status to, with the pool's Cluster.
	mp := &clusterv1.MachinePool{}
	if err := mgr.GetClient().Get(ctx, req.NamespacedName, mp); err != nil {
		b.Fatal(err)
	}
	cluster := &clusterv1.Cluster{}
	if err := mgr.GetClient().Get(ctx, types.NamespacedName{Namespace: ns, Name: "c1"}, cluster); err != nil {
		b.Fatal(err)
	}
	before = counter.n.Load()
	b.ResetTimer()
	for b.Loop() {
		s := &scope{pool: mp.DeepCopy(), orig: mp, cluster: cluster, now: time.Now(), providerIDsFresh: true}
		if _, err := r.reconcileNodes(ctx, s); err != nil {
			b.Fatal(err)
		}
		if ptr.Deref(s.pool.Status.ReadyReplicas, -1) != int32(n) || len(s.pool.Status.NodeRefs) != min(n, MaxNodeRefs) {
			b.Fatalf("ready %v, nodeRefs %d", s.pool.Status.ReadyReplicas, len(s.pool.Status.NodeRefs))
		}
	}
	b.StopTimer()
	if d := counter.n.Load() - before; d != 0 {
		b.Fatalf("the warm status syncs made %d API requests, want 0", d)
	}
	b.ReportMetric(requests, "requests/reconcile")
	b.ReportMetric(float64(perReconcile.Microseconds())/1000, "reconcile-ms")
}

// createNodes creates a Ready Node per providerID, already annotated as the
// pool's (as the controller would leave them), with 8 writers.
func createNodes(b *testing.B, c client.Client, ns string, ids []string) {
	b.Helper()
	ctx := context.Background()
	owner := workload.Owner{ClusterName: "c1", Namespace: ns, Kind: "MachinePool", Name: "mp"}
	now := metav1.Now()
	work := make(chan int)
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				ready := []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
					Reason: "Bench", LastTransitionTime: now, LastHeartbeatTime: now}}
				node := &corev1.Node{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%05d", ns, i), Annotations: owner.Annotations()},
					Spec:       corev1.NodeSpec{ProviderID: ids[i]},
					Status:     corev1.NodeStatus{Conditions: ready},
				}
				// A Node's create keeps its status (the kubelet registers
				// that way); should an API server drop it, write it.
				if err := c.Create(ctx, node); err != nil {
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				if len(node.Status.Conditions) == 0 {
					node.Status.Conditions = ready
					if err := c.Status().Update(ctx, node); err != nil {
						firstErr.CompareAndSwap(nil, err)
					}
				}
			}
		}()
	}
	for i := range ids {
		work <- i
	}
	close(work)
	wg.Wait()
	if err, ok := firstErr.Load().(error); ok {
		b.Fatalf("creating Nodes: %v", err)
	}
}
