package azure

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/provider/local"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/face/azureface"
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
	m *testManager
}

func newBenchEnv(b *testing.B) *benchEnv {
	b.Helper()
	cloud := startCloud(b, 0)
	f := newFixture(b, cloud)
	m := startManager(b, f, func(o *manager.Options) { o.Providers[local.ProviderName] = &local.Config{URL: cloud.URL()} })
	b.Cleanup(func() {
		_ = cloud.Stop()
		env.DeleteNodes(b, func(n *corev1.Node) bool { return strings.HasPrefix(n.Spec.ProviderID, "local:///") })
	})
	return &benchEnv{f: f, m: m}
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
		env.CreateLocalPool(b, e.f.ns, clusterName, localPool, seedVersion)
		e.f.applySeed(zeroReplicas)
		env.WaitRunning(b, e.f.key(localPool), 0, time.Minute)
		env.WaitRunning(b, e.f.key(poolName), 0, time.Minute)

		env.CompareScaleUp(b, n, e.f.key(localPool), e.f.key(poolName), "azure")
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
		e.f.applySeed(func(obj *unstructured.Unstructured) {
			if obj.GetKind() == "MachinePool" {
				_ = unstructured.SetNestedField(obj.Object, int64(n), "spec", "replicas")
			}
		})
		env.WaitRunning(b, e.f.key(poolName), n, 30*time.Minute)
		// Settled: the per-VM objects report the latest model.
		testenv.Eventually(b, 5*time.Minute, func() error {
			ap := &infrav1.AzureMachinePool{}
			if err := env.Client.Get(e.f.ctx, e.f.key(poolName), ap); err != nil {
				return err
			}
			if c := meta.FindStatusCondition(ap.Status.Conditions, infrav1.RolloutProgressingCondition); c == nil || c.Reason != infrav1.ConvergedReason {
				return fmt.Errorf("not converged: %+v", c)
			}
			return nil
		})

		sg := e.m.ScaleGroup
		sg.ResetCounts()
		e.f.cloud.ResetStats()
		before := reconciles(b)
		const pokes = 5
		b.StartTimer()
		for i := range pokes {
			e.f.updateAzurePool(func(p *infrav1.AzureMachinePool) {
				if p.Annotations == nil {
					p.Annotations = map[string]string{}
				}
				p.Annotations["test.mpool.dev/poke"] = strconv.Itoa(i)
			})
			testenv.Eventually(b, time.Minute, func() error {
				if got := sg.Counts().Reads(); got < int64(i+1) {
					return fmt.Errorf("%d reads after %d pokes", got, i+1)
				}
				return nil
			})
		}
		testenv.Eventually(b, 10*time.Second, func() error {
			if r, got := sg.Counts().Reads(), reconciles(b)-before; got < r {
				return fmt.Errorf("%d reads, %d reconciles finished", r, got)
			}
			return nil
		})
		b.StopTimer()
		r := reconciles(b) - before
		var arm, writes int64
		for _, rc := range e.f.cloud.Stats().Requests {
			if rc.Face != azureface.AzureFaceName || rc.Operation == azureface.OpAzureToken || rc.Operation == azureface.OpAzureDiscovery {
				continue
			}
			arm += rc.Count
			switch rc.Operation {
			case azureface.OpAzureVMSSCreateOrUpdate, azureface.OpAzureVMSSUpdate, azureface.OpAzureVMSSDelete, azureface.OpAzureVMSSDeleteInstances, azureface.OpAzureVMSSVMDelete, azureface.OpAzureVMDelete:
				writes += rc.Count
			}
		}
		b.Logf("steady state at %d VMs: %d reconciles, %d ARM requests (%d writes): %v", n, r, arm, writes, e.f.cloud.Stats().Requests)
		b.ReportMetric(float64(arm)/float64(r), "arm-requests/reconcile")
		b.ReportMetric(float64(writes)/float64(r), "arm-writes/reconcile")
		e.m.Stop()
	}
}
