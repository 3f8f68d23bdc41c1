package local

import (
	"context"
	"fmt"
	"maps"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/kubeenv"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// The pool benchmarks run a real API server, the simulated cloud with its
// node agent and a manager, all on this machine. Each op is a whole
// scale-up or roll of MPOOL_BENCH_N instances (default 1,000), so run them
// once:
//
//	go test -p 1 -run '^$' -bench BenchmarkPool -benchtime 1x -timeout 60m ./test/integration/local/
//	MPOOL_BENCH_N=10000 go test -p 1 -run '^$' -bench 'BenchmarkPool(ScaleUp|SteadyState)' -benchtime 1x -timeout 120m ./test/integration/local/
//
// MPOOL_BENCH_SMALL=1 makes the default N 10 instead (hack/bench-smoke.sh
// runs every benchmark once that way, to see that it still runs; an
// MPOOL_BENCH_N still wins). MPOOL_BENCH_QPS sets the manager's client QPS
// (burst twice that) instead of the test environment's 200;
// MPOOL_BENCH_PROGRESS=1 logs progress;
// MPOOL_BENCH_TIMELINE=1 logs when each stage of the pipeline first had
// all N (cloud instances Running, joined, Nodes, Nodes Ready and
// initialized, per-instance objects and their Ready status, Machines and
// their Running phase, the MachinePool's replica counts), and for a roll
// when each wave of maxSurge new instances was created and joined and its
// old ones were draining and gone;
// MPOOL_BENCH_UNTIL=joined ends a scale-up once every instance joined and
// has its LocalMachinePoolMachine, instead of waiting for the MachinePool
// to be Running; MPOOL_BENCH_APIPROF=file writes a 20 s CPU profile of the
// API server taken during the scale-up (start the package with
// MPOOL_TEST_APISERVER_ARGS=--profiling=true).

// benchPool is one benchmark's pool: cloud, fixture and manager; reqs
// counts the API server requests of the manager and of the node agent.
type benchPool struct {
	n    int
	f    *fixture
	m    *testManager
	reqs *itest.RequestCounter
}

// The clients benchPool.reqs counts.
const (
	managerClient   = "manager"
	nodeAgentClient = "node agent"
)

// benchManagerOptions are a benchmark's manager options: the client QPS of
// MPOOL_BENCH_QPS (burst twice that), else the test environment's.
func benchManagerOptions(b *testing.B) managerOptions {
	b.Helper()
	mo := managerOptions{}
	if v, err := strconv.ParseFloat(os.Getenv("MPOOL_BENCH_QPS"), 32); err == nil {
		mo.qps, mo.burst = float32(v), int(2*v)
		b.Logf("manager client: QPS %v, burst %d", mo.qps, mo.burst)
	}
	return mo
}

// newBenchPool starts a cloud with zero boot delay, a manager, and a pool of
// 0 replicas (maxSurge 25%, maxUnavailable 0) that is Running.
func newBenchPool(b *testing.B) *benchPool {
	b.Helper()
	mo := benchManagerOptions(b)
	reqs := itest.NewRequestCounter()
	mo.wrap = reqs.Wrap(managerClient)
	f, m := start(b, cloudOptions{instant: true, nodeAgentTransport: reqs.Wrap(nodeAgentClient)}, mo)
	// Nodes are cluster-scoped: the namespace's deletion leaves them, and
	// the next benchmark in this process would start with a thousand stale
	// Nodes in every Node informer; the fixture deletes them when it ends.
	f.createPool(poolSpec{replicas: 0, maxSurge: intstr.FromString("25%"), maxUnavailable: intstr.FromInt32(0)})
	f.waitRunning(0, time.Minute)
	return &benchPool{n: testenv.BenchN(), f: f, m: m, reqs: reqs}
}

// scaleUp scales the pool from 0 to p.n and waits until it is Running (or
// every instance joined, with MPOOL_BENCH_UNTIL=joined).
func (p *benchPool) scaleUp() {
	defer p.f.timeline(p.n)()
	p.f.Scale(int32(p.n))
	if os.Getenv("MPOOL_BENCH_UNTIL") == "joined" {
		p.f.waitJoined(p.n, 60*time.Minute)
	} else {
		p.f.waitRunning(p.n, 30*time.Minute)
	}
}

// BenchmarkPoolScaleUp measures 0 → N replicas with zero boot delay until
// the MachinePool is Running (target ≤ 20 s for 1,000 on 2 cores), and the
// API server requests it took (apireqs/op); then, once the pool has
// settled (waitSettled; settled-s from the scale), the requests per
// instance by client: the manager's (mgr-reqs/inst), the node agent's
// (agent-reqs/inst), the rest (other-reqs/inst: the test's polling and the
// API server's own) and all of them (reqs/inst).
func BenchmarkPoolScaleUp(b *testing.B) {
	for range b.N {
		b.StopTimer()
		p := newBenchPool(b)
		reqs, byClient := apiRequests(b), p.reqs.Counts()
		profiled := profileAPIServer(b, os.Getenv("MPOOL_BENCH_APIPROF"), 20*time.Second)
		start := time.Now()
		b.StartTimer()
		p.scaleUp()
		b.StopTimer()
		b.ReportMetric(logAPIRequests(b, reqs), "apireqs/op")
		p.f.waitSettled(p.n, 30*time.Minute)
		b.ReportMetric(time.Since(start).Seconds(), "settled-s")
		p.reportRequestsByClient(b, reqs, byClient)
		<-profiled
		p.m.Stop()
	}
}

// BenchmarkPoolRoll measures rolling N instances with maxSurge 25% and
// maxUnavailable 0 until the MachinePool is Running on the new version
// (target ≤ 60 s for 1,000), then reports when every per-instance object
// and Machine was on it too (settled-s, from the start of the roll), the
// manager's requests per instance until then
// (mgr-reqs/inst) and each process's CPU time.
func BenchmarkPoolRoll(b *testing.B) {
	for range b.N {
		b.StopTimer()
		p := newBenchPool(b)
		p.scaleUp()
		p.f.waitModel(p.n, 10*time.Minute)
		old := p.f.Group().ModelHash
		stop := p.f.rollTimeline(p.n, (p.n+3)/4, old) // maxSurge 25%, rounded up
		reqs, cpu := p.reqs.Counts(), cpuTimes(b)
		b.StartTimer()
		start := time.Now()
		p.f.SetVersion(v2)
		p.f.waitRolled(p.n, old, 60*time.Minute)
		b.StopTimer()
		took := time.Since(start)
		cpuRolled := cpuTimes(b)
		stop()
		// The per-instance objects and Machines follow the cloud: the roll
		// is over once every one of them is on the new model and Ready.
		p.f.waitSettled(p.n, 10*time.Minute)
		settled := time.Since(start)
		b.ReportMetric(settled.Seconds(), "settled-s")
		after := p.reqs.Counts()
		b.ReportMetric(float64(after[managerClient]-reqs[managerClient])/float64(p.n), "mgr-reqs/inst")
		logCPU(b, "the roll", cpu, cpuRolled, took)
		logCPU(b, "the roll until settled", cpu, cpuTimes(b), settled)
		if progressOn() {
			logRequestsByKind(reqs, after, 30, managerClient, nodeAgentClient)
		}
		p.m.Stop()
	}
}

// BenchmarkPoolSteadyState measures, at N instances, the cloud requests of
// a steady-state reconcile (target 1 read, 0 writes) and the manager's heap,
// once the pool has settled: every Node initialized, every per-instance
// object and Machine written and ready, so the caches hold all of them and
// no pass is under way. The timed part is the reconciles of five changes to
// the pool that change nothing in the cloud.
func BenchmarkPoolSteadyState(b *testing.B) {
	for range b.N {
		b.StopTimer()
		p := newBenchPool(b)
		p.scaleUp()
		p.f.waitModel(p.n, 10*time.Minute)
		p.f.waitSettled(p.n, 30*time.Minute)

		const pokes = 5
		r := p.f.SteadyState(b, p.m, pokes)
		c := p.m.ScaleGroup.Counts()
		b.Logf("steady state at %d instances: %d reconciles (%d triggered by the benchmark), %d cloud reads, %d cloud writes", p.n, r, pokes, c.Reads(), c.Writes())
		b.ReportMetric(float64(c.Reads())/float64(r), "cloud-reads/reconcile")
		b.ReportMetric(float64(c.Writes())/float64(r), "cloud-writes/reconcile")

		// The manager's memory: the heap in use with it running, less the
		// heap once it is stopped (the cloud, its node agent and the
		// benchmark's clients stay).
		with := heapInUse()
		if path := os.Getenv("MPOOL_BENCH_HEAPPROFILE"); path != "" {
			writeHeapProfile(b, path)
		}
		p.m.Stop()
		without := heapInUse()
		b.Logf("manager heap at %d instances: %.1f MiB (process heap in use %.1f MiB with the manager, %.1f MiB without)",
			p.n, float64(with-without)/(1<<20), float64(with)/(1<<20), float64(without)/(1<<20))
		b.ReportMetric(float64(with-without)/(1<<20), "manager-heap-MiB")
	}
}

// reportRequestsByClient reports the requests per instance made since
// before (the API server's count) and byClient (the clients' own): the
// manager's, the node agent's, the rest (the test's polling and the API
// server's own loopback requests: the API server's count less the two
// clients') and all of them. It logs the manager's by verb and resource,
// with the answers that were not a success, on standard error (a
// benchmark's own log is cut after a few lines).
func (p *benchPool) reportRequestsByClient(b *testing.B, before map[string]float64, byClient map[string]int64) {
	b.Helper()
	var total float64
	for k, v := range apiRequests(b) {
		total += v - before[k]
	}
	after := p.reqs.Counts()
	delta := func(key string) float64 { return float64(after[key] - byClient[key]) }
	mgr, agent := delta(managerClient), delta(nodeAgentClient)
	n := float64(p.n)
	progressf("API requests until settled, per instance: manager %.2f, node agent %.2f, test and API server %.2f, total %.2f (%.0f requests)",
		mgr/n, agent/n, (total-mgr-agent)/n, total/n, total)
	logRequestsByKind(byClient, after, 30, managerClient, nodeAgentClient)
	b.ReportMetric(mgr/n, "mgr-reqs/inst")
	b.ReportMetric(agent/n, "agent-reqs/inst")
	b.ReportMetric((total-mgr-agent)/n, "other-reqs/inst")
	b.ReportMetric(total/n, "reqs/inst")
}

// logRequestsByKind logs the most made requests of clients between the
// counts before and after ("client verb resource", most first), at most
// most of them.
func logRequestsByKind(before, after map[string]int64, most int, clients ...string) {
	type row struct {
		key string
		n   int64
	}
	var rows []row
	for k, v := range after {
		if slices.ContainsFunc(clients, func(c string) bool { return strings.HasPrefix(k, c+" ") }) {
			if d := v - before[k]; d > 0 {
				rows = append(rows, row{k, d})
			}
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].n > rows[j].n })
	for _, r := range rows[:min(len(rows), most)] {
		progressf("  %7d %s", r.n, r.key)
	}
}

// waitSettled waits until the pool has settled with n instances: the
// MachinePool Running with n Ready replicas, every Node initialized (the
// pool's annotation, no uninitialized taint), every LocalMachinePoolMachine
// Ready, and every Machine Running with its Node and Ready, Available and
// UpToDate: the final state of each object the manager writes, so that
// writes that come after Running are counted too.
func (f *fixture) waitSettled(n int, timeout time.Duration) {
	f.T.Helper()
	f.waitRunning(n, timeout)
	testenv.Eventually(f.T, timeout, func() error {
		initialized := 0
		for _, node := range f.PoolNodes() {
			if _, ok := node.Annotations[clusterv1.OwnerNameAnnotation]; ok && !slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == clusterv1.NodeUninitializedTaint.Key }) {
				initialized++
			}
		}
		if initialized != n {
			return fmt.Errorf("%d of %d Nodes initialized", initialized, n)
		}
		lpms := &infrav1.LocalMachinePoolMachineList{}
		if err := env.Client.List(f.Ctx, lpms, client.InNamespace(f.NS)); err != nil {
			return err
		}
		ready := 0
		for _, o := range lpms.Items {
			if o.Status.Ready && meta.IsStatusConditionTrue(o.Status.Conditions, infrav1.InstanceReadyCondition) {
				ready++
			}
		}
		if len(lpms.Items) != n || ready != n {
			return fmt.Errorf("%d LocalMachinePoolMachines, %d Ready, want %d", len(lpms.Items), ready, n)
		}
		ms := &clusterv1.MachineList{}
		if err := env.Client.List(f.Ctx, ms, client.InNamespace(f.NS)); err != nil {
			return err
		}
		settled := 0
		for _, m := range ms.Items {
			if m.Status.Phase == string(clusterv1.MachinePhaseRunning) && m.Status.NodeRef.IsDefined() &&
				meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.MachineReadyCondition) &&
				meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.MachineAvailableCondition) &&
				meta.IsStatusConditionTrue(m.Status.Conditions, clusterv1.MachineUpToDateCondition) {
				settled++
			}
		}
		if len(ms.Items) != n || settled != n {
			return fmt.Errorf("%d Machines, %d Running, Ready, Available and UpToDate, want %d", len(ms.Items), settled, n)
		}
		return nil
	})
}

// writeHeapProfile writes the process's heap profile to path (set
// MPOOL_BENCH_HEAPPROFILE on BenchmarkPoolSteadyState; read it with
// go tool pprof -sample_index=inuse_space).
func writeHeapProfile(b *testing.B, path string) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		b.Fatal(err)
	}
	b.Logf("heap profile written to %s", path)
}

// heapInUse returns the heap in use after a full collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// waitRunning waits, cheaply, until the MachinePool is Running with n Ready
// replicas.
func (f *fixture) waitRunning(n int, timeout time.Duration) {
	f.T.Helper()
	start := time.Now()
	deadline, lastLog := start.Add(timeout), start
	progress := progressOn()
	for {
		mp := &clusterv1.MachinePool{}
		if err := env.Client.Get(f.Ctx, f.Key(poolName), mp); err != nil {
			f.T.Fatal(err)
		}
		if mp.Status.Phase == string(clusterv1.MachinePoolPhaseRunning) && ptr.Deref(mp.Status.ReadyReplicas, -1) == int32(n) && ptr.Deref(mp.Status.Replicas, -1) == int32(n) {
			return
		}
		if progress && time.Since(lastLog) > time.Second {
			lastLog = time.Now()
			joined, lpm := f.joined()
			ms := f.count(&clusterv1.MachineList{}, client.InNamespace(f.NS))
			progressf("%s: %d joined, %d LocalMachinePoolMachines, %d Machines, MachinePool %s replicas %d ready %d",
				time.Since(start).Round(100*time.Millisecond), joined, lpm, ms, mp.Status.Phase, ptr.Deref(mp.Status.Replicas, -1), ptr.Deref(mp.Status.ReadyReplicas, -1))
		}
		if time.Now().After(deadline) {
			f.T.Fatalf("MachinePool not Running with %d replicas within %s: phase %s, replicas %d, ready %d",
				n, timeout, mp.Status.Phase, ptr.Deref(mp.Status.Replicas, -1), ptr.Deref(mp.Status.ReadyReplicas, -1))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// timeline, with MPOOL_BENCH_TIMELINE set, samples the pipeline every
// second until the returned stop is called, and logs when each stage first
// counted n (and the last count of those that did not). Its lists add load
// to the API server: use it to see where the time goes, not for the
// figures.
func (f *fixture) timeline(n int) (stop func()) {
	if os.Getenv("MPOOL_BENCH_TIMELINE") == "" {
		return func() {}
	}
	stages := []string{"cloud: instances Running", "cloud: instances joined", "Nodes", "Nodes Ready", "Nodes initialized (pool annotation, no taint)",
		"LocalMachinePoolMachines", "LocalMachinePoolMachines Ready", "Machines", "Machines Running", "MachinePool replicas", "MachinePool readyReplicas"}
	reached := map[string]time.Duration{}
	last := map[string]int{}
	start := time.Now()
	sample := func() {
		counts := map[string]int{}
		if g := f.Group(); g != nil {
			for _, in := range g.Instances {
				if in.State == core.StateRunning {
					counts[stages[0]]++
				}
				if in.Join == core.JoinJoined {
					counts[stages[1]]++
				}
			}
		}
		for _, node := range f.PoolNodes() {
			counts[stages[2]]++
			for _, c := range node.Status.Conditions {
				if c.Type == "Ready" && c.Status == "True" {
					counts[stages[3]]++
				}
			}
			if _, ok := node.Annotations[clusterv1.OwnerNameAnnotation]; ok && !slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == clusterv1.NodeUninitializedTaint.Key }) {
				counts[stages[4]]++
			}
		}
		lpms := &infrav1.LocalMachinePoolMachineList{}
		if err := env.Client.List(f.Ctx, lpms, client.InNamespace(f.NS)); err == nil {
			for _, o := range lpms.Items {
				counts[stages[5]]++
				if o.Status.Ready {
					counts[stages[6]]++
				}
			}
		}
		ms := &clusterv1.MachineList{}
		if err := env.Client.List(f.Ctx, ms, client.InNamespace(f.NS)); err == nil {
			for _, m := range ms.Items {
				counts[stages[7]]++
				if m.Status.Phase == string(clusterv1.MachinePhaseRunning) {
					counts[stages[8]]++
				}
			}
		}
		mp := &clusterv1.MachinePool{}
		if err := env.Client.Get(f.Ctx, f.Key(poolName), mp); err == nil {
			counts[stages[9]] = int(ptr.Deref(mp.Status.Replicas, 0))
			counts[stages[10]] = int(ptr.Deref(mp.Status.ReadyReplicas, 0))
		}
		at := time.Since(start)
		for _, st := range stages {
			last[st] = counts[st]
			if _, ok := reached[st]; !ok && counts[st] >= n {
				reached[st] = at
			}
		}
	}
	stopSampling := sampleEverySecond(sample)
	return func() {
		stopSampling()
		for _, st := range stages {
			if at, ok := reached[st]; ok {
				progressf("timeline: %6.1f s  all %d %s", at.Seconds(), n, st)
			} else {
				progressf("timeline:   never  %s: %d of %d", st, last[st], n)
			}
		}
		progressf("timeline: %6.1f s  MachinePool Running (end)", time.Since(start).Seconds())
	}
}

// sampleEverySecond calls sample at once and every second until the
// returned stop is called, and once more then; stop returns after that
// last call.
func sampleEverySecond(sample func()) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for {
			sample()
			select {
			case <-done:
				sample()
				return
			case <-time.After(time.Second):
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// rollTimeline, with MPOOL_BENCH_TIMELINE set, samples the cloud every
// second during a roll of n instances away from oldModel in waves of wave
// instances, until the returned stop is called, and logs when each wave's
// new instances were all created and joined and its old ones all draining
// (deleting in the cloud) and gone: where the roll's time goes.
func (f *fixture) rollTimeline(n, wave int, oldModel string) (stop func()) {
	if os.Getenv("MPOOL_BENCH_TIMELINE") == "" || wave <= 0 {
		return func() {}
	}
	stages := []string{"new created", "new joined", "old draining", "old gone"}
	waves := (n + wave - 1) / wave
	reached := map[string][]time.Duration{}
	for _, st := range stages {
		reached[st] = make([]time.Duration, waves)
	}
	start := time.Now()
	sample := func() {
		g := f.Group()
		if g == nil {
			return
		}
		counts := map[string]int{}
		old := 0
		for _, in := range g.Instances {
			switch {
			case in.ModelHash == oldModel:
				old++
				if in.State == core.StateDeleting {
					counts[stages[2]]++
				}
			case in.State != core.StateDeleting:
				counts[stages[0]]++
				if in.Join == core.JoinJoined {
					counts[stages[1]]++
				}
			}
		}
		counts[stages[2]] += n - old // gone ones drained first
		counts[stages[3]] = n - old
		at := time.Since(start)
		for _, st := range stages {
			for k := range waves {
				if reached[st][k] == 0 && counts[st] >= min(n, (k+1)*wave) {
					reached[st][k] = at
				}
			}
		}
	}
	stopSampling := sampleEverySecond(sample)
	return func() {
		stopSampling()
		for k := range waves {
			line := fmt.Sprintf("roll timeline: wave %d (%d instances):", k+1, min(n, (k+1)*wave))
			for _, st := range stages {
				if at := reached[st][k]; at > 0 {
					line += fmt.Sprintf("  %s %6.1f s", st, at.Seconds())
				} else {
					line += fmt.Sprintf("  %s never", st)
				}
			}
			progressf("%s", line)
		}
		progressf("roll timeline: %6.1f s  MachinePool Running on the new model (end)", time.Since(start).Seconds())
	}
}

// waitJoined waits until the cloud's n instances have all joined and the
// engine has one LocalMachinePoolMachine for each.
func (f *fixture) waitJoined(n int, timeout time.Duration) {
	f.T.Helper()
	start, lastLog := time.Now(), time.Now()
	testenv.Eventually(f.T, timeout, func() error {
		if time.Since(lastLog) < time.Second {
			return fmt.Errorf("not yet")
		}
		lastLog = time.Now()
		joined, objects := f.joined()
		if progressOn() {
			progressf("%s: %d joined, %d LocalMachinePoolMachines", time.Since(start).Round(100*time.Millisecond), joined, objects)
		}
		if joined != n || objects != n {
			return fmt.Errorf("%d joined, %d LocalMachinePoolMachines, want %d", joined, objects, n)
		}
		return nil
	})
}

// joined returns how many of the group's instances have joined, and how
// many LocalMachinePoolMachines the engine has for them.
func (f *fixture) joined() (joined, objects int) {
	if g := f.Group(); g != nil {
		for _, in := range g.Instances {
			if in.Join == core.JoinJoined {
				joined++
			}
		}
	}
	return joined, f.count(&infrav1.LocalMachinePoolMachineList{}, client.InNamespace(f.NS))
}

// waitModel waits until the cloud has exactly n instances, all running.
func (f *fixture) waitModel(n int, timeout time.Duration) string {
	f.T.Helper()
	var hash string
	testenv.Eventually(f.T, timeout, func() error {
		g := f.Group()
		if g == nil || len(g.Instances) != n {
			return fmt.Errorf("group has %d instances, want %d", len(itest.InstanceStates(g)), n)
		}
		for _, in := range g.Instances {
			if in.State != core.StateRunning {
				return fmt.Errorf("instance %s is %s", in.ID, in.State)
			}
		}
		hash = g.ModelHash
		return nil
	})
	return hash
}

// waitRolled waits until the group's model is no longer oldModel and the
// MachinePool is Running with n Ready replicas, all on the new model.
func (f *fixture) waitRolled(n int, oldModel string, timeout time.Duration) {
	f.T.Helper()
	start, lastLog := time.Now(), time.Now()
	progress := progressOn()
	testenv.Eventually(f.T, timeout, func() error {
		g := f.Group()
		if progress && g != nil && time.Since(lastLog) > time.Second {
			lastLog = time.Now()
			count := map[string]int{}
			for _, in := range g.Instances {
				switch {
				case in.State == core.StateDeleting:
					count["deleting"]++
				case in.ModelHash == oldModel:
					count["old"]++
				case in.Join == core.JoinJoined:
					count["new joined"]++
				default:
					count["new booting"]++
				}
			}
			mp := &clusterv1.MachinePool{}
			_ = env.Client.Get(f.Ctx, f.Key(poolName), mp)
			progressf("%s: %v; MachinePool %s, replicas %d, ready %d, nodeRefs %d", time.Since(start).Round(100*time.Millisecond), count,
				mp.Status.Phase, ptr.Deref(mp.Status.Replicas, -1), ptr.Deref(mp.Status.ReadyReplicas, -1), len(mp.Status.NodeRefs))
		}
		if g != nil && g.ModelHash == oldModel {
			return fmt.Errorf("the group still has model %s", oldModel)
		}
		if g == nil || len(g.Instances) != n {
			return fmt.Errorf("group has %d instances, want %d", len(itest.InstanceStates(g)), n)
		}
		for _, in := range g.Instances {
			if in.ModelHash != g.ModelHash || in.State != core.StateRunning {
				return fmt.Errorf("instance %s is %s on model %s", in.ID, in.State, in.ModelHash)
			}
		}
		mp := &clusterv1.MachinePool{}
		if err := env.Client.Get(f.Ctx, f.Key(poolName), mp); err != nil {
			return err
		}
		if mp.Status.Phase != string(clusterv1.MachinePoolPhaseRunning) || ptr.Deref(mp.Status.ReadyReplicas, -1) != int32(n) || ptr.Deref(mp.Status.Replicas, -1) != int32(n) {
			return fmt.Errorf("MachinePool %s, replicas %v, ready %v", mp.Status.Phase, ptr.Deref(mp.Status.Replicas, -1), ptr.Deref(mp.Status.ReadyReplicas, -1))
		}
		return nil
	})
}

// apiRequests returns the API server's request counts by verb and resource
// (apiserver_request_total), to see where a benchmark's requests go.
func apiRequests(t testing.TB) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, s := range itest.APIServerMetric(t, env.Config, "apiserver_request_total") {
		resource := s.Labels["resource"]
		if sub := s.Labels["subresource"]; sub != "" {
			resource += "/" + sub
		}
		out[s.Labels["verb"]+" "+resource] += s.Value
	}
	return out
}

// logAPIRequests logs the requests made since before, most first, and
// returns their number.
func logAPIRequests(t testing.TB, before map[string]float64) float64 {
	t.Helper()
	after := apiRequests(t)
	type row struct {
		key string
		n   float64
	}
	var rows []row
	var total float64
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			rows = append(rows, row{k, d})
			total += d
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].n > rows[j].n })
	t.Logf("API server requests: %.0f", total)
	for _, r := range rows[:min(len(rows), 25)] {
		t.Logf("  %7.0f %s", r.n, r.key)
	}
	return total
}

// profileAPIServer writes a CPU profile of the API server over d to path
// (nothing when path is empty); the channel closes when it is written.
func profileAPIServer(t testing.TB, path string, d time.Duration) <-chan struct{} {
	return profileAPIServerAfter(t, path, 0, d)
}

// profileAPIServerAfter is profileAPIServer over d from after on.
func profileAPIServerAfter(t testing.TB, path string, after, d time.Duration) <-chan struct{} {
	done := make(chan struct{})
	if path == "" {
		close(done)
		return done
	}
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(done)
		time.Sleep(after)
		raw, err := cs.RESTClient().Get().AbsPath("/debug/pprof/profile").Param("seconds", strconv.Itoa(int(d.Seconds()))).Timeout(d + time.Minute).DoRaw(context.Background())
		if err != nil {
			t.Errorf("profiling the API server: %v", err)
			return
		}
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Error(err)
		}
	}()
	return done
}

// envDuration reads the Go duration in the environment variable name
// (zero when it is unset).
func envDuration(t testing.TB, name string) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return d
}

// envFloat reads the number in the environment variable name (zero when it
// is unset).
func envFloat(t testing.TB, name string) float64 {
	v := os.Getenv(name)
	if v == "" {
		return 0
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return f
}

// progressOn reports whether MPOOL_BENCH_PROGRESS asks for progress lines.
func progressOn() bool { return os.Getenv("MPOOL_BENCH_PROGRESS") != "" }

// progressf writes a progress line to standard error (MPOOL_BENCH_PROGRESS):
// a benchmark's own log is cut after a few lines.
func progressf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "progress: "+format+"\n", args...)
}

// cpuTimes reads the CPU time each process of the benchmark has used so
// far: the control plane's (kube-apiserver, etcd, kube-controller-manager)
// and this one's ("test process": the manager, the simulated cloud and its
// node agent, and the benchmark itself). Nil where /proc cannot be read.
func cpuTimes(tb testing.TB) map[string]float64 {
	tb.Helper()
	usage, err := env.ControlPlane.Usage()
	if err != nil {
		tb.Logf("not reporting CPU time: %v", err)
		return nil
	}
	self, err := kubeenv.ReadUsage(os.Getpid())
	if err != nil {
		tb.Logf("not reporting CPU time: %v", err)
		return nil
	}
	out := map[string]float64{"test process": self.CPUSeconds}
	for name, u := range usage {
		out[name] = u.CPUSeconds
	}
	return out
}

// logCPU logs the CPU time each process used between before and after
// (cpuTimes), over a phase of took on a machine of runtime.NumCPU() cores,
// and returns kube-apiserver's.
func logCPU(tb testing.TB, phase string, before, after map[string]float64, took time.Duration) float64 {
	tb.Helper()
	if before == nil || after == nil {
		return 0
	}
	names := slices.Sorted(maps.Keys(after))
	sort.SliceStable(names, func(i, j int) bool { return after[names[i]]-before[names[i]] > after[names[j]]-before[names[j]] })
	parts := make([]string, 0, len(names))
	for _, n := range names {
		d := after[n] - before[n]
		parts = append(parts, fmt.Sprintf("%s %.1f s (%.0f%%)", n, d, 100*d/took.Seconds()))
	}
	tb.Logf("CPU during %s (%s, %d cores; a core's share in brackets): %s", phase, took.Round(time.Second), runtime.NumCPU(), strings.Join(parts, ", "))
	return after["kube-apiserver"] - before["kube-apiserver"]
}
