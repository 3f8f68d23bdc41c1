package azure

import (
	"testing"

	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// The Azure benchmarks run a real API server, the simulated cloud (its
// Azure face over HTTPS, the real Azure SDK) with its node agent, and a
// manager, all on this machine. Each op is a whole scale-up of
// MPOOL_BENCH_N VMs (default 1,000; 10 with MPOOL_BENCH_SMALL=1), so run
// them once:
//
//	go test -p 1 -run '^$' -bench BenchmarkAzure -benchtime 1x -timeout 60m ./test/integration/azure/

// BenchmarkAzureScaleUp measures 0 → N VMs with zero boot delay until the
// MachinePool is Running, for a LocalMachinePool and then seed 000's
// AzureMachinePool in the same run (target: Azure within 1.5× local),
// reported as local-s, azure-s and azure/local.
func BenchmarkAzureScaleUp(b *testing.B) {
	itest.BenchScaleUp(b, env, itest.Azure, testenv.BenchN(), seedVersion, itest.Replicas(0))
}

// BenchmarkAzureSteadyState measures, at N VMs, the ARM requests of a
// steady-state reconcile (target: the scale set GET plus the VM list
// pages, no write). The timed part is the reconciles of five changes to
// the pool that change nothing in the cloud.
func BenchmarkAzureSteadyState(b *testing.B) {
	n := testenv.BenchN()
	itest.BenchSteadyState(b, env, itest.Azure, n, "arm", itest.Replicas(n))
}
