package azure

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/face/azureface"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// The Azure benchmarks run a real API server, the simulated cloud (its
// Azure face over HTTPS, the real Azure SDK) with its node agent, and a
// manager, all on this machine. Each op is a whole scale-up of
// MPOOL_BENCH_N VMs (default 1,000; 10 with MPOOL_BENCH_SMALL=1), so run
// them once:
//
//	go test -p 1 -run '^$' -bench BenchmarkAzure -benchtime 1x -timeout 60m ./test/integration/azure/

// localPool is a LocalMachinePool's name in the benchmark's namespace,
// beside the Azure pool, in the same Cluster.
const localPool = "local-mp-0"

// benchEnv is a cloud, fixture and manager with both the local and the
// Azure provider.
type benchEnv struct {
	f *fixture
	m *itest.Manager
}

func newBenchEnv(b *testing.B) *benchEnv {
	b.Helper()
	f, m := itest.StartBench(b, env, itest.Azure, itest.CloudOptions{})
	return &benchEnv{f: &fixture{f}, m: m}
}

// zeroReplicas makes seed 000's MachinePool start empty.
func zeroReplicas(obj *unstructured.Unstructured) {
	if obj.GetKind() == "MachinePool" {
		_ = unstructured.SetNestedField(obj.Object, int64(0), "spec", "replicas")
	}
}

// BenchmarkAzureScaleUp measures 0 → N VMs with zero boot delay until the
// MachinePool is Running, for a LocalMachinePool and then seed 000's
// AzureMachinePool in the same run (target: Azure within 1.5× local),
// reported as local-s, azure-s and azure/local.
func BenchmarkAzureScaleUp(b *testing.B) {
	n := testenv.BenchN()
	for range b.N {
		b.StopTimer()
		e := newBenchEnv(b)
		env.CreateLocalPool(b, e.f.NS, clusterName, localPool, seedVersion)
		e.f.ApplySeed(zeroReplicas)
		env.WaitRunning(b, e.f.Key(localPool), 0, time.Minute)
		env.WaitRunning(b, e.f.Key(poolName), 0, time.Minute)

		env.CompareScaleUp(b, n, e.f.Key(localPool), e.f.Key(poolName), "azure")
		e.m.Stop()
	}
}

// BenchmarkAzureSteadyState measures, at N VMs, the ARM requests of a
// steady-state reconcile (target: the scale set GET plus the VM list
// pages, no write). The timed part is the reconciles of five changes to
// the pool that change nothing in the cloud.
func BenchmarkAzureSteadyState(b *testing.B) {
	n := testenv.BenchN()
	for range b.N {
		b.StopTimer()
		e := newBenchEnv(b)
		e.f.ApplySeed(func(obj *unstructured.Unstructured) {
			if obj.GetKind() == "MachinePool" {
				_ = unstructured.SetNestedField(obj.Object, int64(n), "spec", "replicas")
			}
		})
		env.WaitRunning(b, e.f.Key(poolName), n, 30*time.Minute)
		// Settled: the per-VM objects report the latest model.
		r := e.f.SteadyState(b, e.m, 5)
		var arm, writes int64
		for _, rc := range e.f.Cloud.Stats().Requests {
			if rc.Face != azureface.AzureFaceName || rc.Operation == azureface.OpAzureToken || rc.Operation == azureface.OpAzureDiscovery {
				continue
			}
			arm += rc.Count
			switch rc.Operation {
			case azureface.OpAzureVMSSCreateOrUpdate, azureface.OpAzureVMSSUpdate, azureface.OpAzureVMSSDelete, azureface.OpAzureVMSSDeleteInstances, azureface.OpAzureVMSSVMDelete, azureface.OpAzureVMDelete:
				writes += rc.Count
			}
		}
		b.Logf("steady state at %d VMs: %d reconciles, %d ARM requests (%d writes): %v", n, r, arm, writes, e.f.Cloud.Stats().Requests)
		b.ReportMetric(float64(arm)/float64(r), "arm-requests/reconcile")
		b.ReportMetric(float64(writes)/float64(r), "arm-writes/reconcile")
		e.m.Stop()
	}
}
