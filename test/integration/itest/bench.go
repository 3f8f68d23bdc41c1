package itest

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/provider/local"
	"github.com/mpool-dev/mpool/internal/testenv"
)

// The cloud benchmarks run a real API server, the simulated cloud with its
// node agent, and a manager, all on this machine; each op is a whole
// scale-up of n instances, so they are run once (-benchtime 1x).

// BenchLocalPool is the LocalMachinePool a scale-up benchmark creates
// beside the cloud's pool, in the same Cluster.
const BenchLocalPool = "local-mp-0"

// StartBench starts what a benchmark comparing p with the local provider
// runs on: p's cloud with instances that boot at once, a fixture, and a
// manager with both p's and the local provider on that cloud. The Nodes of
// the LocalMachinePools a benchmark creates beside p's pool go when it
// ends.
func StartBench(b *testing.B, env *testenv.Env, p *Provider, o CloudOptions) (*Fixture, *Manager) {
	b.Helper()
	cloud := p.StartCloud(b, env, o)
	f := NewFixture(b, env, p, cloud)
	m := f.StartManager(func(o *manager.Options) { o.Providers[local.ProviderName] = &local.Config{URL: cloud.URL()} })
	b.Cleanup(func() {
		_ = cloud.Stop()
		env.DeleteNodes(b, func(n *corev1.Node) bool { return strings.HasPrefix(n.Spec.ProviderID, "local:///") })
	})
	return f, m
}

// BenchScaleUp is a cloud's scale-up benchmark. Each op starts
// StartBench's cloud, fixture and manager, a LocalMachinePool
// (BenchLocalPool, at version) beside p's seed pool, both Running at 0
// replicas (seed changes the seed so, and lets it grow to n), and compares
// their scale-ups to n (testenv.Env.CompareScaleUp), reported as local-s,
// <provider>-s and <provider>/local.
func BenchScaleUp(b *testing.B, env *testenv.Env, p *Provider, n int, version string, seed ...func(*unstructured.Unstructured)) {
	for range b.N {
		b.StopTimer()
		f, m := StartBench(b, env, p, CloudOptions{})
		env.CreateLocalPool(b, f.NS, p.ClusterName, BenchLocalPool, version)
		f.ApplySeed(seed...)
		env.WaitRunning(b, f.Key(BenchLocalPool), 0, time.Minute)
		env.WaitRunning(b, f.PoolKey(), 0, time.Minute)
		env.CompareScaleUp(b, n, f.Key(BenchLocalPool), f.PoolKey(), p.Name)
		m.Stop()
	}
}

// BenchSteadyState is a cloud's steady-state benchmark. Each op starts
// StartBench's cloud, fixture and manager and p's seed pool (seed changes
// it to n replicas), waits until it is Running, and times the reconciles of
// five changes to the pool that change nothing in the cloud
// (Fixture.SteadyState), reporting p's requests (Fixture.Requests) per
// reconcile as <unit>-requests/reconcile and <unit>-writes/reconcile.
func BenchSteadyState(b *testing.B, env *testenv.Env, p *Provider, n int, unit string, seed ...func(*unstructured.Unstructured)) {
	for range b.N {
		b.StopTimer()
		f, m := StartBench(b, env, p, CloudOptions{})
		f.ApplySeed(seed...)
		env.WaitRunning(b, f.PoolKey(), n, 30*time.Minute)
		r := f.SteadyState(b, m, 5)
		reqs, writes := f.Requests()
		b.Logf("steady state at %d instances: %d reconciles, %d %s requests (%d writes): %v", n, r, reqs, unit, writes, f.Cloud.Stats().Requests)
		b.ReportMetric(float64(reqs)/float64(r), unit+"-requests/reconcile")
		b.ReportMetric(float64(writes)/float64(r), unit+"-writes/reconcile")
		m.Stop()
	}
}
