package local

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/parallel"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// BenchmarkManyPools is a management cluster of many modest pools: C
// Clusters × P pools × I instances, created at once, against one simulated
// cloud and one manager with the production defaults' concurrency (10 per
// controller). Sizes: MPOOL_BENCH_CLUSTERS, MPOOL_BENCH_POOLS (per Cluster)
// and MPOOL_BENCH_INSTANCES (per pool), full size 100 × 10 × 10 (1,000
// pools, 10,000 instances), 2 × 2 × 2 with MPOOL_BENCH_SMALL=1:
//
//	MPOOL_BENCH_CLUSTERS=10 MPOOL_BENCH_POOLS=10 MPOOL_BENCH_INSTANCES=10 go test -p 1 -run '^$' -bench BenchmarkManyPools -benchtime 1x -timeout 60m -v ./test/integration/local/
//
// In order, it measures:
//
//   - alone: one pool of I instances is created and Running, then scaled
//     to 2I until Running, with nothing else in the manager (the baseline
//     of the same run);
//   - running: every other pool created at once, until all are Running
//     (the timed part of the op, reported as ns/op and running-s);
//   - steady: one change to every infra pool that changes nothing in the
//     cloud: cloud reads and writes per pool (target ≤ 1 read, 0 writes);
//   - at rest: a second pool's I → 2I scale-up while the others are at
//     rest, against alone (head-of-line blocking: ratio ≈ 1);
//   - during a pass: a third pool's I → 2I scale-up while every other pool
//     is queued for a reconcile (the steady pass again), against alone;
//   - the manager's heap in use (with it running, less without; its
//     caches hold every Node once per workload cluster, since all the
//     Clusters are this one API server) and goroutines, in all and per
//     pool.
//
// Every workload cluster is the test API server, so each Cluster's Node
// cache holds every pool's Nodes, where a real workload cluster's holds its
// own: the heap per pool is an upper bound.
func BenchmarkManyPools(b *testing.B) {
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
	clusters, perCluster, instances := size("MPOOL_BENCH_CLUSTERS", 100, 2), size("MPOOL_BENCH_POOLS", 10, 2), size("MPOOL_BENCH_INSTANCES", 10, 2)
	pools := clusters * perCluster
	if pools < 3 {
		b.Fatalf("%d pools: the benchmark needs at least 3", pools)
	}
	for range b.N {
		b.StopTimer()
		m := newManyPools(b, clusters, perCluster, instances)
		b.Logf("%d Clusters × %d pools × %d instances: %d pools, %d instances; load average %s", clusters, perCluster, instances, pools, pools*instances, loadAverage())

		heapBefore, goBefore := heapInUse(), runtime.NumGoroutine()
		first := m.names[0]
		m.f.createPoolOf(first.cluster, first.pool, m.spec(instances))
		m.waitRunning([]poolID{first}, instances, 5*time.Minute)
		alone := m.scaleUp(first, 2*instances)
		heapAlone := heapInUse()
		b.Logf("alone: one pool %d → %d Running in %s", instances, 2*instances, alone.Round(time.Millisecond))

		b.StartTimer()
		start := time.Now()
		m.createAll(m.names[1:], instances)
		created := time.Since(start)
		m.waitRunning(m.names[1:], instances, 60*time.Minute)
		running := time.Since(start)
		b.StopTimer()
		b.Logf("running: %d pools created in %s, all Running %s after the first create", pools-1, created.Round(time.Millisecond), running.Round(time.Millisecond))
		b.ReportMetric(running.Seconds(), "running-s")

		reads, writes, pass := m.steadyPass()
		b.Logf("steady: one change to each of %d pools: %d cloud reads (%.2f per pool), %d cloud writes, in %s", pools, reads, float64(reads)/float64(pools), writes, pass.Round(time.Millisecond))
		b.ReportMetric(float64(reads)/float64(pools), "cloud-reads/pool")
		b.ReportMetric(float64(writes), "cloud-writes/pass")

		atRest := m.scaleUp(m.names[1], 2*instances)
		b.Logf("at rest: one pool %d → %d Running in %s while %d others rest: %.2f× alone", instances, 2*instances, atRest.Round(time.Millisecond), pools-1, ratio(atRest, alone))
		b.ReportMetric(ratio(atRest, alone), "at-rest/alone")

		busy := make(chan struct{})
		go func() {
			defer close(busy)
			m.pokeAll(m.names[3:])
		}()
		duringPass := m.scaleUp(m.names[2], 2*instances)
		<-busy
		b.Logf("during a pass: one pool %d → %d Running in %s while %d other pools were each changed once: %.2f× alone", instances, 2*instances, duringPass.Round(time.Millisecond), pools-3, ratio(duringPass, alone))
		b.ReportMetric(ratio(duringPass, alone), "during-pass/alone")

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
	f     *fixture
	mgr   *testManager
	names []poolID
}

// poolID is one pool of manyPools: its Cluster and its name.
type poolID struct{ cluster, pool string }

// newManyPools starts a cloud with zero boot delay, the Clusters (each a
// workload cluster served by the test API server) and a manager, and names
// every pool; none is created yet.
func newManyPools(b *testing.B, clusters, perCluster, instances int) *manyPools {
	b.Helper()
	f := newFixture(b, startCloud(b, cloudOptions{instant: true}))
	m := &manyPools{f: f}
	groups := map[string]bool{}
	for c := range clusters {
		cluster := fmt.Sprintf("c%03d", c)
		f.Create(&clusterv1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: cluster},
			Spec:       clusterv1.ClusterSpec{ControlPlaneEndpoint: env.ControlPlaneEndpoint(b)},
		})
		env.RegisterWorkloadCluster(b, f.NS, cluster)
		for p := range perCluster {
			n := poolID{cluster: cluster, pool: fmt.Sprintf("%s-p%02d", cluster, p)}
			m.names = append(m.names, n)
			groups[contract.GroupName(f.NS, n.pool, 63)] = true
		}
	}
	// Nodes are cluster-scoped: the fixture deletes its one pool's, these
	// go here, once the cloud (and its node agent) stopped; cleanups run
	// last first, so this one before the fixture's.
	b.Cleanup(func() {
		_ = f.Cloud.Stop()
		env.DeleteNodes(b, func(n *corev1.Node) bool {
			group, _, ok := strings.Cut(strings.TrimPrefix(n.Spec.ProviderID, "local:///"), "/")
			return ok && groups[group]
		})
	})
	m.mgr = startManager(b, f, managerOptions{tune: func(o *manager.Options) { o.Concurrency = 10 }})
	return m
}

// spec is each pool's: n replicas, maxSurge 25%, maxUnavailable 0.
func (m *manyPools) spec(n int) poolSpec {
	return poolSpec{replicas: int32(n), maxSurge: intstr.FromString("25%"), maxUnavailable: intstr.FromInt32(0)}
}

// scaleUp scales pool n to replicas and returns how long it took to be
// Running with them.
func (m *manyPools) scaleUp(n poolID, replicas int) time.Duration {
	start := time.Now()
	itest.Patch(m.f.Fixture, m.f.Key(n.pool), &clusterv1.MachinePool{}, func(mp *clusterv1.MachinePool) { mp.Spec.Replicas = ptr.To(int32(replicas)) })
	m.waitRunning([]poolID{n}, replicas, 10*time.Minute)
	return time.Since(start)
}

// waitRunning waits until the MachinePools of names are all Running with n
// Ready replicas, reading them all once a second (a single pool every
// 50 ms).
func (m *manyPools) waitRunning(names []poolID, n int, timeout time.Duration) {
	m.f.T.Helper()
	want := make(map[string]bool, len(names))
	for _, p := range names {
		want[p.pool] = true
	}
	every := time.Second
	if len(names) == 1 {
		every = 50 * time.Millisecond
	}
	start := time.Now()
	progress := os.Getenv("MPOOL_BENCH_PROGRESS") != ""
	for {
		var running int
		if len(names) == 1 {
			mp := &clusterv1.MachinePool{}
			if err := env.Client.Get(m.f.Ctx, m.f.Key(names[0].pool), mp); err != nil {
				m.f.T.Fatal(err)
			}
			if poolRunning(mp, n) {
				running = 1
			}
		} else {
			list := &clusterv1.MachinePoolList{}
			if err := env.Client.List(m.f.Ctx, list, client.InNamespace(m.f.NS)); err != nil {
				m.f.T.Fatal(err)
			}
			for i := range list.Items {
				if want[list.Items[i].Name] && poolRunning(&list.Items[i], n) {
					running++
				}
			}
		}
		if running == len(names) {
			return
		}
		if progress && len(names) > 1 {
			progressf("%s: %d of %d pools Running", time.Since(start).Round(100*time.Millisecond), running, len(names))
		}
		if time.Since(start) > timeout {
			m.f.T.Fatalf("%d of %d pools Running with %d replicas after %s", running, len(names), n, timeout)
		}
		time.Sleep(every)
	}
}

func poolRunning(mp *clusterv1.MachinePool, n int) bool {
	return mp.Status.Phase == string(clusterv1.MachinePoolPhaseRunning) &&
		ptr.Deref(mp.Status.ReadyReplicas, -1) == int32(n) && ptr.Deref(mp.Status.Replicas, -1) == int32(n)
}

// createAll creates the pools of names, of n instances each, 16 objects at
// a time: at once, as a client applying many manifests does.
func (m *manyPools) createAll(names []poolID, n int) {
	m.f.T.Helper()
	var objs []client.Object
	for _, p := range names {
		objs = append(objs, m.f.poolObjects(p.cluster, p.pool, m.spec(n))...)
	}
	if err := parallel.ForEach(m.f.Ctx, benchWriters, len(objs), func(ctx context.Context, i int) error {
		if err := env.Client.Create(ctx, objs[i]); err != nil {
			return fmt.Errorf("creating %T %s: %w", objs[i], objs[i].GetName(), err)
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
		p := &infrav1.LocalMachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: m.f.NS, Name: names[i].pool}}
		return env.Client.Patch(ctx, p, client.RawPatch(types.MergePatchType, patch))
	}); err != nil {
		m.f.T.Errorf("changing the pools: %v", err)
	}
}

// steadyPass changes every pool once (pokeAll) and waits until the engine
// has read each one's group and finished the reconciles: it returns the
// cloud reads and writes of the pass and how long it took.
func (m *manyPools) steadyPass() (reads, writes int64, took time.Duration) {
	t := m.f.T
	t.Helper()
	sg := m.mgr.ScaleGroup
	sg.ResetCounts()
	before := m.f.Reconciles()
	start := time.Now()
	m.pokeAll(m.names)
	testenv.Eventually(t, 30*time.Minute, func() error {
		if r, n := sg.Counts().Reads(), m.f.Reconciles()-before; r < int64(len(m.names)) || n < r {
			return fmt.Errorf("%d cloud reads, %d reconciles finished, of %d pools", r, n, len(m.names))
		}
		return nil
	})
	took = time.Since(start)
	c := sg.Counts()
	return c.Reads(), c.Writes(), took
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
