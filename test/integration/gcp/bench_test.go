package gcp

import (
	"testing"

	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// The GCP benchmarks run a real API server, the simulated cloud (its GCP
// face over HTTPS, OAuth 2 with a service account key, the real
// cloud.google.com/go/compute) with its node agent, and a manager, all on
// this machine. Each op is a whole scale-up of MPOOL_BENCH_N instances
// (default 1,000; 10 with MPOOL_BENCH_SMALL=1), so run them once:
//
//	go test -p 1 -run '^$' -bench BenchmarkGCP -benchtime 1x -timeout 60m ./test/integration/gcp/

// BenchmarkGCPScaleUp measures 0 → N instances with zero boot delay until
// the MachinePool is Running, for a LocalMachinePool and then examples/gcp's
// GCPMachinePool in the same run (target: GCP within 1.5× local),
// reported as local-s, gcp-s and gcp/local.
func BenchmarkGCPScaleUp(b *testing.B) {
	itest.BenchScaleUp(b, env, itest.GCP, testenv.BenchN(), seedVersion, itest.Replicas(0))
}

// BenchmarkGCPSteadyState measures, at N instances, the Compute Engine
// requests of a steady-state reconcile (target: the group's GET plus the
// pages of its managed instances, no write). The timed part is the
// reconciles of five changes to the pool that change nothing in the cloud.
func BenchmarkGCPSteadyState(b *testing.B) {
	n := testenv.BenchN()
	itest.BenchSteadyState(b, env, itest.GCP, n, "gce", itest.Replicas(n))
}
