package local

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/parallel"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// BenchmarkManyPools is a management cluster of many modest pools: C
// Clusters × P pools × I instances, created at once, against one simulated
// cloud and one manager with the production defaults' concurrency (10 per
// controller). Sizes: MPOOL_BENCH_CLUSTERS, MPOOL_BENCH_POOLS (per Cluster)
// and MPOOL_BENCH_INSTANCES (per pool), full size 100 × 10 × 10 (1,000
// pools, 10,000 instances), 3 × 3 × 2 with MPOOL_BENCH_SMALL=1:
//
//	MPOOL_BENCH_CLUSTERS=10 MPOOL_BENCH_POOLS=10 MPOOL_BENCH_INSTANCES=10 go test -p 1 -run '^$' -bench BenchmarkManyPools -benchtime 1x -timeout 60m -v ./test/integration/local/
//
// In order, it measures:
//
//   - alone: one pool of I instances is created and Running, then scaled
//     to 2I until Running, with nothing else in the manager (the baseline
//     of the same run); the median of nine (samples), the pool scaled back to I and
//     at rest, the API server too (waitQuiet), before each;
//   - running: every other pool created at once, until all are Running
//     (the timed part of the op, reported as ns/op and running-s);
//   - steady: once every pool and controller is at rest (waitAtRest), one
//     change to every infra pool that changes nothing in the cloud: cloud
//     reads and writes per pool (target ≤ 1 read, 0 writes);
//   - at rest: another pool's I → 2I scale-up while the others are at
//     rest, against alone (head-of-line blocking: ratio ≈ 1); the median of
//     nine pools' scale-ups, each from rest (a single scale-up of half a
//     second moved from 0.55× to 1.78× alone between runs);
//   - quiet: the same nine scale-ups, each from a rest of the API server
//     too (waitQuiet: no conversion webhook call for the window, as the
//     alone ones), against alone: what a pool at rest beside 999 others
//     costs the manager, without the API server's own background checks;
//   - during a pass: another pool's I → 2I scale-up while every other pool
//     is queued for a reconcile (the steady pass again), against alone;
//   - the manager's heap in use once the pools are at rest again (with it
//     running, less without; its caches hold every Node once per workload
//     cluster, since all the Clusters are this one API server) and
//     goroutines, in all and per pool.
//
// With MPOOL_BENCH_PROGRESS=1 it logs a progress line a second and, when no
// pool came to Running for a minute, why the pools still waiting wait (their
// status and their cloud groups' instances). MPOOL_BENCH_TOKEN_TTL (a Go
// duration) sets the manager's bootstrap token lifetime, to see a long run's
// token rotations in a short one. MPOOL_BENCH_RESTPROFILE=<file> writes a CPU
// profile of the benchmark's process (manager, cloud, node agents) during
// the at-rest scale-ups, MPOOL_BENCH_RUNPROFILE=<file> one from the first
// create until all are Running. MPOOL_BENCH_APIPROF=<file> (with
// MPOOL_TEST_APISERVER_ARGS=--profiling=true) writes a 50 s CPU profile of
// kube-apiserver during the creation, MPOOL_BENCH_APIPROF_AFTER (a Go
// duration, default 0) after the first create, MPOOL_BENCH_APIPROF_FOR (a Go
// duration, default 50 s) long; MPOOL_BENCH_QUIETAPIPROF=<file>
// one of the first 60 s of the quiet scale-ups. MPOOL_BENCH_TIMELINE=1
// traces every single pool's scale-up (alone, at rest, during a pass): when
// its MachinePool, LocalMachinePool and each of its Nodes changed, as a
// cache of the benchmark's own saw it (scaleTrace). MPOOL_BENCH_FACES
// (local, azure, aws; comma-separated) sets the faces /spread takes in turn,
// e.g. one alone to weigh its pools' cost against another face's.
// MPOOL_BENCH_HEARTBEAT_QPS caps the simulated kubelets' Lease renewals
// per second (default 50): the workload clusters' own load on the one API
// server, which in production is the hundred workload clusters' servers'.
//
// Every workload cluster is the test API server, so each Cluster's Node
// cache holds every pool's Nodes, where a real workload cluster's holds its
// own: the heap per pool is an upper bound.
func BenchmarkManyPools(b *testing.B) {
	b.Run("local", func(b *testing.B) { benchmarkManyPools(b, itest.Local) })
	b.Run("spread", func(b *testing.B) { benchmarkManyPools(b, spreadFaces(b)...) })
}

// spreadFaces is the providers BenchmarkManyPools/spread takes in turn:
// local, Azure and AWS, or those MPOOL_BENCH_FACES names (a comma-separated
// list of local, azure and aws), to weigh one face's pools against another's.
func spreadFaces(b *testing.B) []*itest.Provider {
	all := []*itest.Provider{itest.Local, itest.Azure, itest.AWS}
	v := os.Getenv("MPOOL_BENCH_FACES")
	if v == "" {
		return all
	}
	var faces []*itest.Provider
	for _, name := range strings.Split(v, ",") {
		i := slices.IndexFunc(all, func(p *itest.Provider) bool { return p.Name == strings.TrimSpace(name) })
		if i < 0 {
			b.Fatalf("MPOOL_BENCH_FACES=%s: %q is none of local, azure, aws", v, name)
		}
		faces = append(faces, all[i])
	}
	return faces
}

// benchmarkManyPools is BenchmarkManyPools with the Clusters' providers
// taken in turn from providers (Cluster c is of providers[c mod n], with
// its provider's example Cluster and pools renamed).
func benchmarkManyPools(b *testing.B, providers ...*itest.Provider) {
	small := os.Getenv("MPOOL_BENCH_SMALL") != "" && os.Getenv("MPOOL_BENCH_SMALL") != "0"
	size := func(env string, full, smallSize int) int {
		if v, err := strconv.Atoi(os.Getenv(env)); err == nil && v > 0 {
			return v
		}
		if small {
			return smallSize
		}
		return full
	}
	clusters := size("MPOOL_BENCH_CLUSTERS", 100, max(3, len(providers)))
	perCluster, instances := size("MPOOL_BENCH_POOLS", 10, 3), size("MPOOL_BENCH_INSTANCES", 10, 2)
	pools := clusters * perCluster
	// The smoke run only shows that the benchmark runs: one sample of each.
	samples := samples
	if small {
		samples = 1
	}
	if pools < samples+2 {
		b.Fatalf("%d pools: the benchmark needs at least %d", pools, samples+2)
	}
	if clusters < len(providers) {
		b.Fatalf("%d Clusters for %d providers: each needs one", clusters, len(providers))
	}
	for range b.N {
		b.StopTimer()
		m := newManyPools(b, clusters, perCluster, instances, providers)
		b.Logf("%d Clusters × %d pools × %d instances: %d pools, %d instances, providers %s; load average %s",
			clusters, perCluster, instances, pools, pools*instances, m.providerNames(), loadAverage())

		heapBefore, goBefore := heapInUse(), runtime.NumGoroutine()
		first := m.names[0]
		m.create(m.names[:1], instances)
		m.waitRunning([]poolID{first}, instances, 5*time.Minute)
		var aloneSamples scaleSamples
		for i := range samples {
			if i > 0 {
				m.scaleTo(first, instances)
			}
			m.waitQuiet(restWindow, 5*time.Minute)
			aloneSamples = append(aloneSamples, m.scaleUpCounted(first, 2*instances))
		}
		alone := aloneSamples.median()
		heapAlone := heapInUse()
		b.Logf("alone: one pool %d → %d Running in %s (median of %s; %s)", instances, 2*instances, alone.Round(time.Millisecond), roundAll(aloneSamples.took()), aloneSamples.manager())

		b.StartTimer()
		start := time.Now()
		reqsBefore, cpuBefore := m.reqs.Counts(), cpuTimes(b)
		stopProfile := startCPUProfile(b, os.Getenv("MPOOL_BENCH_RUNPROFILE"))
		apiProfiled := profileAPIServerAfter(b, os.Getenv("MPOOL_BENCH_APIPROF"), envDuration(b, "MPOOL_BENCH_APIPROF_AFTER"), cmp.Or(envDuration(b, "MPOOL_BENCH_APIPROF_FOR"), 50*time.Second))
		m.create(m.names[1:], instances)
		created := time.Since(start)
		m.waitRunning(m.names[1:], instances, 60*time.Minute)
		running := time.Since(start)
		b.StopTimer()
		stopProfile()
		reqsAfter, cpuAfter := m.reqs.Counts(), cpuTimes(b)
		<-apiProfiled
		perPool := float64(reqsAfter[managerClient]-reqsBefore[managerClient]) / float64(pools-1)
		b.Logf("running: %d pools created in %s, all Running %s after the first create; the manager's API requests until then: %.1f per pool (%.0f per second)",
			pools-1, created.Round(time.Millisecond), running.Round(time.Millisecond), perPool, perPool*float64(pools-1)/running.Seconds())
		b.ReportMetric(running.Seconds(), "running-s")
		b.ReportMetric(perPool, "mgr-reqs/pool")
		logRequestsByKind(reqsBefore, reqsAfter, 25, managerClient)
		if progressOn() {
			m.logEventsByReason(pools)
		}
		if api := logCPU(b, "the creation until all were Running", cpuBefore, cpuAfter, running); api > 0 {
			b.ReportMetric(api/float64(pools-1), "apiserver-cpu-s/pool")
		}

		// The per-instance objects and Machines are written behind the
		// pools' own progress (package priority's bulk writes): at rest,
		// every instance has its Machine (the first pool's 2I, the others'
		// I).
		rest := m.waitAtRest(restWindow, 15*time.Minute)
		machines, want := m.countMachines(), (pools+1)*instances
		b.Logf("at rest %s after all were Running (for %s no pool reconciled and no controller had work queued), with %d Machines", rest.Round(time.Millisecond), restWindow, machines)
		if machines != want {
			b.Errorf("at rest with %d Machines for %d instances", machines, want)
		}
		b.ReportMetric(rest.Seconds(), "settled-after-running-s")
		if progressOn() {
			readStart := time.Now()
			testenv.ReadControllerMetrics(b)
			progressf("one read of the controllers' metrics (a gather of the manager's registry): %s", time.Since(readStart).Round(10*time.Microsecond))
		}
		reads, writes, reconciles, pass := m.steadyPass()
		b.Logf("steady: one change to each of %d pools: %d reconciles, %d cloud reads (%.2f per pool), %d cloud writes, in %s", pools, reconciles, reads, float64(reads)/float64(pools), writes, pass.Round(time.Millisecond))
		b.ReportMetric(float64(reads)/float64(pools), "cloud-reads/pool")
		b.ReportMetric(float64(writes), "cloud-writes/pass")

		var restSamples scaleSamples
		m.waitAtRest(restWindow, 5*time.Minute)
		restFrom, restCPU := time.Now(), cpuTimes(b)
		stopProfile = startCPUProfile(b, os.Getenv("MPOOL_BENCH_RESTPROFILE"))
		if progressOn() {
			progressf("the at-rest scale-ups begin (%d pools at rest)", pools-1)
		}
		for i, n := range m.names[1 : 1+samples] {
			if i > 0 {
				m.waitAtRest(restWindow, 5*time.Minute)
			}
			restSamples = append(restSamples, m.scaleUpCounted(n, 2*instances))
		}
		stopProfile()
		logCPU(b, "the at-rest scale-ups and the rests between them", restCPU, cpuTimes(b), time.Since(restFrom))
		atRest := restSamples.median()
		b.Logf("at rest: one pool %d → %d Running in %s while %d others rest (median of %s; conversion requests during each %v; %s): %.2f× alone",
			instances, 2*instances, atRest.Round(time.Millisecond), pools-1, roundAll(restSamples.took()), restSamples.conversions(), restSamples.manager(), ratio(atRest, alone))
		b.ReportMetric(ratio(atRest, alone), "at-rest/alone")
		b.ReportMetric(restSamples.queueWait().Mean()*1000, "at-rest-queue-wait-ms")

		// The same scale-ups (each pool back to I first) from a rest of the
		// API server too, as the alone ones were: no conversion request
		// for restWindow. With every other pool at rest the API server
		// still checks each watch cache against etcd every 5 to 7.5
		// minutes (Kubernetes 1.34's DetectCacheInconsistency, on by
		// default), and for a CRD served at two versions it converts every
		// object for the other version's cache, one webhook call each:
		// tens of seconds of a core for 10,000 Machines. A scale-up that
		// falls in one took 1.9 to 4.8× alone; with the check turned off
		// (--feature-gates=DetectCacheInconsistency=false) the at-rest
		// samples were 1.00× and 1.07× alone in two runs. Only the checks
		// of converted kinds show as conversions: those of Nodes, Leases
		// and the rest still fall in the quiet samples.
		var quietSamples scaleSamples
		quietFrom, quietCPU := time.Now(), cpuTimes(b)
		quietProfiled := profileAPIServerAfter(b, os.Getenv("MPOOL_BENCH_QUIETAPIPROF"), 0, 60*time.Second)
		for _, n := range m.names[1 : 1+samples] {
			m.scaleTo(n, instances)
			m.waitQuiet(restWindow, 5*time.Minute)
			quietSamples = append(quietSamples, m.scaleUpCounted(n, 2*instances))
		}
		logCPU(b, "the quiet scale-ups and the rests between them", quietCPU, cpuTimes(b), time.Since(quietFrom))
		<-quietProfiled
		quiet := quietSamples.median()
		b.Logf("at rest, the API server too: one pool %d → %d Running in %s (median of %s; conversion requests during each %v; %s): %.2f× alone",
			instances, 2*instances, quiet.Round(time.Millisecond), roundAll(quietSamples.took()), quietSamples.conversions(), quietSamples.manager(), ratio(quiet, alone))
		b.ReportMetric(ratio(quiet, alone), "quiet/alone")

		busy := make(chan struct{})
		go func() {
			defer close(busy)
			m.pokeAll(m.names[samples+2:])
		}()
		duringPass := m.scaleUp(m.names[samples+1], 2*instances)
		<-busy
		b.Logf("during a pass: one pool %d → %d Running in %s while %d other pools were each changed once: %.2f× alone", instances, 2*instances, duringPass.Round(time.Millisecond), pools-samples-2, ratio(duringPass, alone))
		b.ReportMetric(ratio(duringPass, alone), "during-pass/alone")

		// The heap of the pools at rest: the pass's reconciles (the pool
		// scaled during it is Running long before the last of them) are
		// over, so what is measured is what idle pools hold.
		m.waitAtRest(restWindow, 10*time.Minute)
		with, goWith := heapInUse(), runtime.NumGoroutine()
		m.mgr.Stop()
		without, goWithout := heapInUse(), runtime.NumGoroutine()
		mib := func(n int64) float64 { return float64(n) / (1 << 20) }
		b.Logf("manager heap: %.1f MiB with %d pools (%.1f KiB per pool), %d goroutines (%.1f per pool); process heap %.1f MiB before the first pool, %.1f MiB with one pool, %.1f MiB with all, %.1f MiB without the manager; goroutines %d before, %d with, %d without",
			mib(with-without), pools, float64(with-without)/1024/float64(pools), goWith-goWithout, float64(goWith-goWithout)/float64(pools),
			mib(heapBefore), mib(heapAlone), mib(with), mib(without), goBefore, goWith, goWithout)
		b.ReportMetric(mib(with-without), "manager-heap-MiB")
		b.ReportMetric(float64(with-without)/1024/float64(pools), "heap-KiB/pool")
	}
}

// manyPools is BenchmarkManyPools' fixture: one namespace, one cloud, one
// manager, and the names of every Cluster's pools.
type manyPools struct {
	f         *fixture
	mgr       *testManager
	names     []poolID
	providers []*itest.Provider
	// reqs counts the manager's API requests (its own client and its
	// workload clients).
	reqs *itest.RequestCounter
	// pools is the benchmark's own watch of the MachinePools: listing the
	// thousand of them every second took about 9% of the API server's CPU
	// (its CPU profile), which the manager then did not get.
	pools cache.Cache
	// idleDepth is the controllers' queue depth before this manager
	// started: what the managers of earlier benchmarks in this process
	// left in the shared gauges when they stopped (waitAtRest).
	idleDepth int64
	// trace, with MPOOL_BENCH_TIMELINE set, records each single pool's
	// scale-up (scaleUp).
	trace *scaleTrace
}

// poolID is one pool of manyPools: its Cluster, its name and its provider.
type poolID struct {
	cluster, pool string
	provider      *itest.Provider
}

// newManyPools starts a cloud with zero boot delay, the Clusters (each a
// workload cluster served by the test API server; Cluster c of
// providers[c mod n]) and a manager running every provider, and names
// every pool; none is created yet.
func newManyPools(b *testing.B, clusters, perCluster, instances int, providers []*itest.Provider) *manyPools {
	b.Helper()
	f := newFixture(b, startCloud(b, cloudOptions{instant: true, maxHeartbeatQPS: envFloat(b, "MPOOL_BENCH_HEARTBEAT_QPS")}))
	m := &manyPools{f: f, providers: providers, idleDepth: testenv.QueueDepth(b)}
	for c := range clusters {
		p := providers[c%len(providers)]
		cluster := fmt.Sprintf("c%03d", c)
		if p.ClusterManifest == nil {
			f.Create(&clusterv1.Cluster{
				ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: cluster},
				Spec:       clusterv1.ClusterSpec{ControlPlaneEndpoint: env.ControlPlaneEndpoint(b)},
			})
			env.RegisterWorkloadCluster(b, f.NS, cluster)
		} else {
			m.createClusterOf(p, cluster, c < len(providers))
		}
		for i := range perCluster {
			m.names = append(m.names, poolID{cluster: cluster, pool: fmt.Sprintf("%s-p%02d", cluster, i), provider: p})
		}
	}
	// Nodes are cluster-scoped: the fixture deletes its one pool's, these
	// go here (every instance's in the cloud, read before it stops);
	// cleanups run last first, so this one before the fixture's.
	b.Cleanup(func() {
		ids := map[string]bool{}
		cloud := f.Cloud.Cloud()
		for _, k := range cloud.Groups() {
			if g, err := cloud.Scope(k.Face, k.Scope).GetGroup(k.Name); err == nil {
				for _, in := range g.Instances {
					ids[in.ProviderID] = true
				}
			}
		}
		_ = f.Cloud.Stop()
		env.DeleteNodes(b, func(n *corev1.Node) bool { return ids[n.Spec.ProviderID] })
		for _, p := range providers {
			if p.Cleanup != nil {
				p.Cleanup(f.Fixture)
			}
		}
	})
	// The harness's manager observes the local provider: it runs beside
	// the faces the pools use.
	names := []string{itest.Local.Name}
	for _, p := range providers {
		if p != itest.Local {
			names = append(names, p.Name)
		}
	}
	mo := benchManagerOptions(b)
	m.reqs = itest.NewRequestCounter()
	mo.wrap = m.reqs.Wrap(managerClient)
	ttl := envDuration(b, "MPOOL_BENCH_TOKEN_TTL")
	mo.tune = func(o *manager.Options) {
		o.Concurrency = 10
		// The pool metrics apart from the controllers' metrics, which
		// waitAtRest and steadyPass read every 250 ms: gathering the pool
		// collector with them took a third of a core of this process at
		// rest at 1,000 pools (and the garbage it makes more), where a
		// Prometheus scrape comes every 15 to 30 s.
		o.PoolMetricsRegistry = prometheus.NewRegistry()
		if ttl > 0 {
			o.BootstrapTokenTTL = ttl
		}
		if len(providers) > 1 || providers[0] != itest.Local {
			o.Providers = itest.Providers(f.Cloud, f.NS, names...)
		}
	}
	m.mgr = startManager(b, f, mo)
	m.pools = watchPools(b, f.NS)
	m.trace = startScaleTrace(b, f.NS)
	return m
}

// watchPools starts a cache of the MachinePools of namespace ns, stopped
// when b ends.
func watchPools(b *testing.B, ns string) cache.Cache {
	b.Helper()
	c, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme, DefaultNamespaces: map[string]cache.Config{ns: {}}})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	if _, err := c.GetInformer(ctx, &clusterv1.MachinePool{}); err != nil {
		b.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		b.Fatal("the MachinePool cache did not sync")
	}
	return c
}

// createClusterOf creates provider p's example Cluster (Provider.ClusterManifest)
// as the Cluster cluster (itest.CreateClusterObjects): the Cluster and its
// infrastructure cluster are renamed; the identity objects the example
// shares between Clusters are created with the provider's first Cluster
// only.
func (m *manyPools) createClusterOf(p *itest.Provider, cluster string, first bool) {
	t := m.f.T
	t.Helper()
	rename := itest.Rename(map[string]string{p.ClusterName: cluster})
	var objs []*unstructured.Unstructured
	for _, obj := range itest.Manifest(t, m.f.NS, p.ClusterManifest...) {
		rename(obj)
		if first || obj.GetName() == cluster {
			objs = append(objs, obj)
		}
	}
	itest.CreateClusterObjects(t, env, m.f.NS, cluster, objs)
}

// providerNames lists the benchmark's providers, for its log.
func (m *manyPools) providerNames() string {
	var out []string
	for _, p := range m.providers {
		out = append(out, p.Name)
	}
	return strings.Join(out, ", ")
}

// spec is each pool's: n replicas, maxSurge 25%, maxUnavailable 0.
func (m *manyPools) spec(n int) poolSpec {
	return poolSpec{replicas: int32(n), maxSurge: intstr.FromString("25%"), maxUnavailable: intstr.FromInt32(0)}
}

// scaleUp scales pool n to replicas and returns how long it took to be
// Running with them.
func (m *manyPools) scaleUp(n poolID, replicas int) time.Duration {
	m.trace.begin(n.pool)
	start := time.Now()
	m.scaleTo(n, replicas)
	took := time.Since(start)
	m.trace.end(fmt.Sprintf("%s → %d (%s)", n.pool, replicas, took.Round(time.Millisecond)))
	return took
}

// scaleSample is one scale-up: how long it took, how many conversion
// requests the API server sent meanwhile (waitQuiet) and what the manager's
// controllers did meanwhile: the time their requests waited in the work
// queues (head-of-line blocking, when other pools' requests are ahead) and
// the time their reconciles took.
type scaleSample struct {
	took        time.Duration
	conversions int64
	queueWait   testenv.Histogram
	reconcile   testenv.Histogram
}

// scaleSamples are the samples of one figure (alone, at rest, quiet).
type scaleSamples []scaleSample

// took is how long each sample took.
func (s scaleSamples) took() []time.Duration {
	out := make([]time.Duration, len(s))
	for i, x := range s {
		out[i] = x.took
	}
	return out
}

// conversions is how many conversion requests came during each sample.
func (s scaleSamples) conversions() []int64 {
	out := make([]int64, len(s))
	for i, x := range s {
		out[i] = x.conversions
	}
	return out
}

func (s scaleSamples) median() time.Duration { return median(s.took()) }

// queueWait is the queue waits of every sample together.
func (s scaleSamples) queueWait() testenv.Histogram {
	var h testenv.Histogram
	for _, x := range s {
		h = h.Plus(x.queueWait)
	}
	return h
}

// manager describes, for a log line, the manager's share of the samples:
// the mean wait of a request in its controllers' queues, over all the
// samples, and the time its reconciles took in each.
func (s scaleSamples) manager() string {
	w := s.queueWait()
	rec := make([]string, len(s))
	for i, x := range s {
		rec[i] = time.Duration(x.reconcile.Sum * float64(time.Second)).Round(time.Millisecond).String()
	}
	return fmt.Sprintf("the manager's requests waited %s in its queues on average (%d requests), its reconciles took %s in all in each",
		time.Duration(w.Mean()*float64(time.Second)).Round(10*time.Microsecond), w.Count, strings.Join(rec, ", "))
}

// scaleUpCounted is scaleUp, measured as a scaleSample.
func (m *manyPools) scaleUpCounted(n poolID, replicas int) scaleSample {
	metrics := testenv.ReadControllerMetrics(m.f.T)
	before := env.ControlPlane.ConversionRequests()
	took := m.scaleUp(n, replicas)
	conversions := env.ControlPlane.ConversionRequests() - before
	after := testenv.ReadControllerMetrics(m.f.T)
	return scaleSample{took: took, conversions: conversions,
		queueWait: after.QueueWait.Since(metrics.QueueWait), reconcile: after.ReconcileTime.Since(metrics.ReconcileTime)}
}

// scaleTo sets pool n's replicas and waits until it is Running with as many
// Ready.
func (m *manyPools) scaleTo(n poolID, replicas int) {
	itest.Patch(m.f.Fixture, m.f.Key(n.pool), &clusterv1.MachinePool{}, func(mp *clusterv1.MachinePool) { mp.Spec.Replicas = ptr.To(int32(replicas)) })
	m.waitRunning([]poolID{n}, replicas, 10*time.Minute)
}

// startCPUProfile profiles this process's CPU into file until the returned
// func is called; with file "" it does nothing.
func startCPUProfile(tb testing.TB, file string) func() {
	tb.Helper()
	if file == "" {
		return func() {}
	}
	f, err := os.Create(file)
	if err != nil {
		tb.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		tb.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			tb.Error(err)
		}
	}
}

// samples is how many scale-ups each of the alone, at-rest and quiet
// figures is the median of (one with MPOOL_BENCH_SMALL=1). One scale-up of
// 10 → 20 takes about 150 ms, and single ones moved by half of that and
// more (an alone one took 377 ms where its two others took 121 and
// 137 ms; five alone ones of one run 95 to 233 ms, of another 164 to
// 419 ms): nine keep a few outliers from being the figure.
const samples = 9

// median returns the median of ds (the upper one of an even count).
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// roundAll formats ds rounded to the millisecond, as "a, b, c".
func roundAll(ds []time.Duration) string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond).String()
	}
	return strings.Join(out, ", ")
}

// logEventsByReason logs, on standard error, the Events of the benchmark's
// namespace by reason and the kind of object they are about, per pool.
func (m *manyPools) logEventsByReason(pools int) {
	list := &corev1.EventList{}
	if err := env.Client.List(m.f.Ctx, list, client.InNamespace(m.f.NS)); err != nil {
		m.f.T.Logf("listing the Events: %v", err)
		return
	}
	count := map[string]int{}
	for _, e := range list.Items {
		count[e.InvolvedObject.Kind+" "+e.Reason] += max(1, int(e.Count), int(ptr.Deref(e.Series, corev1.EventSeries{}).Count))
	}
	keys := slices.SortedFunc(maps.Keys(count), func(a, b string) int { return count[b] - count[a] })
	for _, k := range keys {
		progressf("  %6.2f events per pool: %s", float64(count[k])/float64(pools), k)
	}
}

// waitRunning waits until the MachinePools of names are all Running with n
// Ready replicas, as the benchmark's watch sees them: every 100 ms (a
// single pool every 10 ms), with a progress line a second.
func (m *manyPools) waitRunning(names []poolID, n int, timeout time.Duration) {
	m.f.T.Helper()
	want := make(map[string]bool, len(names))
	for _, p := range names {
		want[p.pool] = true
	}
	// A list of a thousand pools each 100 ms was 3% of this process's CPU
	// until all were Running (a profile of 2026-11-30), taken from the
	// system it measures; a quarter of a second is still fine grain for a
	// wait of minutes.
	every := 100 * time.Millisecond
	switch {
	case len(names) == 1:
		every = 10 * time.Millisecond
	case len(names) > 100:
		every = 250 * time.Millisecond
	}
	start, reported := time.Now(), time.Now()
	progress := progressOn()
	last, lastChange, described := -1, time.Now(), time.Time{}
	for {
		// One pool is read alone: a list of every pool each 10 ms was an
		// eighth of this process's CPU through the at-rest samples at
		// 1,000 pools, beside the scale-up it timed.
		list := &clusterv1.MachinePoolList{}
		if len(names) == 1 {
			// Not found: just created, and the watch has not shown it yet.
			mp := &clusterv1.MachinePool{}
			switch err := m.pools.Get(m.f.Ctx, m.f.Key(names[0].pool), mp, client.UnsafeDisableDeepCopy); {
			case err == nil:
				list.Items = append(list.Items, *mp)
			case !apierrors.IsNotFound(err):
				m.f.T.Fatal(err)
			}
		} else if err := m.pools.List(m.f.Ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			m.f.T.Fatal(err)
		}
		running := 0
		var waiting []*clusterv1.MachinePool
		for i := range list.Items {
			if !want[list.Items[i].Name] {
				continue
			}
			if poolRunning(&list.Items[i], n) {
				running++
			} else {
				waiting = append(waiting, &list.Items[i])
			}
		}
		if running == len(names) {
			return
		}
		if running != last {
			last, lastChange = running, time.Now()
		}
		if progress && len(names) > 1 && time.Since(reported) >= time.Second {
			progressf("%s: %d of %d pools Running", time.Since(start).Round(100*time.Millisecond), running, len(names))
			reported = time.Now()
		}
		// No pool came to Running for a minute: say why the pools still
		// waiting wait, once a minute, so a stalled run explains itself
		// (one pool's scale-up too: a refused one waited ten minutes
		// silent).
		if progress && time.Since(lastChange) >= stallWindow && time.Since(described) >= stallWindow {
			m.describeWaiting(waiting, 5)
			described = time.Now()
		}
		if time.Since(start) > timeout {
			m.describeWaiting(waiting, 5)
			m.f.T.Fatalf("%d of %d pools Running with %d replicas after %s", running, len(names), n, timeout)
		}
		time.Sleep(every)
	}
}

// stallWindow is how long waitRunning waits without a pool coming to
// Running before it describes the pools still waiting.
const stallWindow = time.Minute

// describeWaiting logs, on standard error, the pools still waiting (at most
// limit of them, and how many there are by provider and phase): each one's
// status and its cloud group's instances by state and join phase, with the
// message of one that has not joined.
func (m *manyPools) describeWaiting(waiting []*clusterv1.MachinePool, limit int) {
	byKind := map[string]int{}
	for _, mp := range waiting {
		byKind[mp.Spec.Template.Spec.InfrastructureRef.Kind+" "+mp.Status.Phase]++
	}
	for _, k := range slices.Sorted(maps.Keys(byKind)) {
		progressf("  waiting: %d pools %s", byKind[k], k)
	}
	cloud := m.f.Cloud.Cloud()
	keys := cloud.Groups()
	for _, mp := range waiting[:min(limit, len(waiting))] {
		var conds []string
		for _, c := range mp.Status.Conditions {
			if c.Status != metav1.ConditionTrue {
				conds = append(conds, fmt.Sprintf("%s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message))
			}
		}
		progressf("  pool %s (%s): phase %q, replicas %d, ready %d, nodeRefs %d, providerIDs %d; not true: %s",
			mp.Name, mp.Spec.Template.Spec.InfrastructureRef.Kind, mp.Status.Phase, ptr.Deref(mp.Status.Replicas, -1),
			ptr.Deref(mp.Status.ReadyReplicas, -1), len(mp.Status.NodeRefs), len(mp.Spec.ProviderIDList), strings.Join(conds, "; "))
		for _, k := range keys {
			if !strings.Contains(k.Name, mp.Name) {
				continue
			}
			g, err := cloud.Scope(k.Face, k.Scope).GetGroup(k.Name)
			if err != nil {
				continue
			}
			states, msg := map[string]int{}, ""
			for _, in := range g.Instances {
				states[string(in.State)+"/"+string(in.Join)]++
				if in.Join != core.JoinJoined && in.Message != "" && msg == "" {
					msg = in.ID + ": " + in.Message
				}
			}
			progressf("    cloud group %s/%s: %d instances %v; %s", k.Face, k.Name, len(g.Instances), states, msg)
		}
	}
}

func poolRunning(mp *clusterv1.MachinePool, n int) bool {
	return mp.Status.Phase == string(clusterv1.MachinePoolPhaseRunning) &&
		ptr.Deref(mp.Status.ReadyReplicas, -1) == int32(n) && ptr.Deref(mp.Status.Replicas, -1) == int32(n)
}

// create creates the pools of names, of n instances each, 16 objects at
// a time: at once, as a client applying many manifests does. A local pool
// is the tests' (fixture.poolObjects); another provider's is its example
// (Provider.SeedManifest) renamed.
func (m *manyPools) create(names []poolID, n int) {
	m.f.T.Helper()
	var objs []client.Object
	for _, p := range names {
		if p.provider == itest.Local {
			objs = append(objs, m.f.poolObjects(p.cluster, p.pool, m.spec(n))...)
			continue
		}
		rename := itest.Rename(map[string]string{p.provider.ClusterName: p.cluster, p.provider.PoolName: p.pool})
		replicas := itest.Replicas(n)
		// Seed 004's AWSMachinePool has maxSize 10, and the scale-ups
		// the benchmark times double a pool: the ASG's bounds must hold
		// them (replicas outside them are refused).
		bounds := itest.SetField("AWSMachinePool", int64(max(10, 2*n)), "spec", "maxSize")
		for _, obj := range itest.Manifest(m.f.T, m.f.NS, p.provider.SeedManifest...) {
			rename(obj)
			replicas(obj)
			bounds(obj)
			objs = append(objs, obj)
		}
	}
	if err := parallel.ForEach(m.f.Ctx, benchWriters, len(objs), func(ctx context.Context, i int) error {
		if err := env.Client.Create(ctx, objs[i]); err != nil {
			return fmt.Errorf("creating %s %s: %w", objs[i].GetObjectKind().GroupVersionKind().Kind, objs[i].GetName(), err)
		}
		return nil
	}); err != nil {
		m.f.T.Fatal(err)
	}
}

// benchWriters is how many of its writes the benchmark sends at once.
const benchWriters = 16

// pokeAll changes an annotation of the infra pool of each of names, 16 at
// a time, which makes the engine reconcile each once without anything to
// do in the cloud.
func (m *manyPools) pokeAll(names []poolID) {
	m.f.T.Helper()
	patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{"test.mpool.dev/poke":%q}}}`, strconv.FormatInt(time.Now().UnixNano(), 10)))
	if err := parallel.ForEach(m.f.Ctx, benchWriters, len(names), func(ctx context.Context, i int) error {
		p := names[i].provider.NewPool()
		p.SetNamespace(m.f.NS)
		p.SetName(names[i].pool)
		return env.Client.Patch(ctx, p, client.RawPatch(types.MergePatchType, patch))
	}); err != nil {
		m.f.T.Errorf("changing the pools: %v", err)
	}
}

// restWindow is how long no pool may have reconciled for the pools to be
// at rest: longer than the engine's requeue while it converges
// (infrapool.Timing.Converging, 2 s), so a pool still polling its cloud or
// its Nodes is not taken for one at rest.
const restWindow = 3 * time.Second

// metricsPoll is how often waitAtRest and steadyPass read the controllers'
// metrics. The manager's pool collector, which reads every pool and
// per-instance object at each gather (40 ms at 300 local pools, 116 ms at
// 300 spread over three providers, 330–500 ms at 1,000), once ran in each
// read; the loops read once per provider and once more every 50 ms, which
// kept a core of the process whose pass they timed busy. Now the pool
// metrics have a registry of their own (newManyPools), and the loops read
// once per poll. MPOOL_BENCH_PROGRESS logs one read's time.
const metricsPoll = 250 * time.Millisecond

// waitAtRest waits until, for window, no infra pool of the benchmark's
// providers has finished a reconcile and no controller of the manager had
// work waiting in its queue (the pools are at rest, and so are their
// MachinePools, Machines and KubeadmConfigs: what is measured next is not
// the tail of what came before), and returns how long that took. A
// controller's timed requeues (a bootstrap token's check) are not work
// waiting until they are due.
func (m *manyPools) waitAtRest(window, timeout time.Duration) time.Duration {
	return m.waitRest(window, timeout, false)
}

// waitQuiet is waitAtRest with the API server at rest too: for window it
// also sent the conversion webhook nothing (no object of a CRD served at
// two versions was written, and no consistency check of such a CRD's watch
// cache ran).
func (m *manyPools) waitQuiet(window, timeout time.Duration) time.Duration {
	return m.waitRest(window, timeout, true)
}

// waitRest is waitAtRest, and waitQuiet when apiServer is set.
func (m *manyPools) waitRest(window, timeout time.Duration, apiServer bool) time.Duration {
	t := m.f.T
	t.Helper()
	reconciles := func(c testenv.ControllerMetrics) (n int64) {
		for _, p := range m.providers {
			n += c.Reconciles(p.Controller())
		}
		return n
	}
	start := time.Now()
	last, since := reconciles(testenv.ReadControllerMetrics(t)), start
	conversions := env.ControlPlane.ConversionRequests()
	testenv.EventuallyEvery(t, timeout, metricsPoll, func() error {
		c := testenv.ReadControllerMetrics(t)
		if n := reconciles(c); n != last {
			last, since = n, time.Now()
		}
		if apiServer {
			if n := env.ControlPlane.ConversionRequests(); n != conversions {
				conversions, since = n, time.Now()
			}
		}
		if d := c.QueueDepth - m.idleDepth; d > 0 {
			since = time.Now()
			return fmt.Errorf("%d requests queued for the manager's controllers", d)
		}
		if quiet := time.Since(since); quiet < window {
			return fmt.Errorf("a pool reconciled, a controller had work or (waitQuiet) the API server converted an object %s ago", quiet.Round(time.Millisecond))
		}
		return nil
	})
	return time.Since(start)
}

// countMachines counts the Machines of the benchmark's namespace (their
// metadata only).
func (m *manyPools) countMachines() int {
	m.f.T.Helper()
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("MachineList"))
	if err := env.Client.List(m.f.Ctx, list, client.InNamespace(m.f.NS)); err != nil {
		m.f.T.Fatalf("listing the Machines: %v", err)
	}
	return len(list.Items)
}

// steadyPass changes every pool once (pokeAll) and waits until the engine
// has read each one's group and finished the reconciles: it returns the
// cloud reads and writes of the pass, the reconciles finished and how long
// it took.
func (m *manyPools) steadyPass() (reads, writes, reconciles int64, took time.Duration) {
	t := m.f.T
	t.Helper()
	count := func() (reads, writes, reconciles int64) {
		done := testenv.ReadControllerMetrics(t)
		for _, p := range m.providers {
			c := m.mgr.ScaleGroups[p.Name].Counts()
			reads, writes = reads+c.Reads(), writes+c.Writes()
			reconciles += done.Reconciles(p.Controller())
		}
		return reads, writes, reconciles
	}
	// Reconciles counted before the reads are reset, as in
	// itest.Fixture.SteadyState: a reconcile that read after the reset
	// and returned before the count would otherwise leave a read unmatched.
	_, _, before := count()
	for _, p := range m.providers {
		m.mgr.ScaleGroups[p.Name].ResetCounts()
	}
	start := time.Now()
	m.pokeAll(m.names)
	testenv.EventuallyEvery(t, 30*time.Minute, metricsPoll, func() error {
		if r, _, n := count(); r < int64(len(m.names)) || n-before < r {
			return fmt.Errorf("%d cloud reads, %d reconciles finished, of %d pools", r, n-before, len(m.names))
		}
		return nil
	})
	took = time.Since(start)
	reads, writes, reconciles = count()
	return reads, writes, reconciles - before, took
}

func ratio(a, b time.Duration) float64 { return a.Seconds() / b.Seconds() }

// loadAverage is the first field of /proc/loadavg ("?" where there is
// none).
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(raw))[:3], " ")
}
