package eks

import (
	"fmt"
	"testing"
	"time"

	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/face/eksface"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// The EKS benchmark runs a real API server, the simulated cloud (its EKS
// and AWS faces, SigV4, the real aws-sdk-go-v2) with its node agent, and a
// manager, all on this machine. One op scales the example's node group
// from 0 to MPOOL_BENCH_N nodes (at most 450, EKS's per-node-group quota;
// 10 with MPOOL_BENCH_SMALL=1) until the MachinePool is Running, then
// measures the requests of steady-state reconciles; run it once:
//
//	go test -p 1 -run '^$' -bench BenchmarkEKS -benchtime 1x -timeout 60m ./test/integration/eks/
func BenchmarkEKSScaleUp(b *testing.B) {
	n := min(testenv.BenchN(), eksface.EKSMaxNodesPerNodegroup)
	for range b.N {
		b.StopTimer()
		cloud := startCloudWithBoot(b, "1.31", 0)
		f := newFixture(b, cloud)
		m := f.StartManager()
		f.ApplySeed(itest.Replicas(0), itest.SetField("AWSManagedMachinePool", int64(0), "spec", "scaling", "minSize"),
			itest.SetField("AWSManagedMachinePool", int64(n), "spec", "scaling", "maxSize"))
		env.WaitRunning(b, f.Key(poolName), 0, time.Minute)

		b.StartTimer()
		start := time.Now()
		env.ScaleMachinePool(b, f.Key(poolName), int32(n))
		env.WaitRunning(b, f.Key(poolName), n, 30*time.Minute)
		took := time.Since(start)
		b.StopTimer()
		testenv.Eventually(b, 5*time.Minute, func() error {
			if err := f.Converged(n, "v1.31.0"); err != nil {
				return err
			}
			out, err := f.describe()
			if err != nil {
				return err
			}
			if out.Nodegroup.Status != ekstypes.NodegroupStatusActive {
				return fmt.Errorf("node group %s", out.Nodegroup.Status)
			}
			return nil
		})

		cloud.ResetStats()
		before := f.Reconciles()
		f.PokeUntilReconciled(b, 5)
		r := f.Reconciles() - before
		reqs, writes := f.Requests()
		b.Logf("0 → %d nodes until Running: %.1f s; steady state: %d reconciles, %d requests (%d writes): %v", n, took.Seconds(), r, reqs, writes, cloud.Stats().Requests)
		b.ReportMetric(took.Seconds(), "eks-s")
		b.ReportMetric(float64(reqs)/float64(r), "requests/reconcile")
		b.ReportMetric(float64(writes)/float64(r), "writes/reconcile")
		m.Stop()
	}
}
