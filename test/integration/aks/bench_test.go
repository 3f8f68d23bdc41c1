package aks

import (
	"testing"

	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/face/azureface"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// The AKS benchmark runs a real API server, the simulated cloud (its Azure
// face's simulated AKS over HTTPS, the real armcontainerservice) with its
// node agent, and a manager, all on this machine. Each op is a whole
// scale-up of MPOOL_BENCH_N nodes (at most 1,000, AKS's per-pool limit,
// azureface.AKSMaxNodesPerPool; 10 with MPOOL_BENCH_SMALL=1), so run it
// once:
//
//	go test -p 1 -run '^$' -bench BenchmarkAKS -benchtime 1x -timeout 60m ./test/integration/aks/

// BenchmarkAKSScaleUp measures 0 → N nodes with zero boot delay until the
// MachinePool is Running, for a LocalMachinePool and then the example's
// AzureManagedMachinePool (as a User pool: a System pool keeps a node) in
// the same run, reported as local-s, aks-s and aks/local.
func BenchmarkAKSScaleUp(b *testing.B) {
	itest.BenchScaleUp(b, env, itest.AKS, min(testenv.BenchN(), azureface.AKSMaxNodesPerPool), version, itest.Replicas(0),
		itest.SetField("AzureManagedMachinePool", "User", "spec", "mode"))
}
