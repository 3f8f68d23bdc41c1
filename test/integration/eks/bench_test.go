package eks

import (
	"fmt"
	"strings"
	"testing"
	"time"

	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/sim/face/eksface"
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
		for _, obj := range f.Manifest("examples", "eks", "machinepool.yaml") {
			switch obj.GetKind() {
			case "MachinePool":
				_ = unstructured.SetNestedField(obj.Object, int64(0), "spec", "replicas")
			case "AWSManagedMachinePool":
				_ = unstructured.SetNestedField(obj.Object, int64(0), "spec", "scaling", "minSize")
				_ = unstructured.SetNestedField(obj.Object, int64(n), "spec", "scaling", "maxSize")
			}
			f.Create(obj)
		}
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
		before := testenv.Reconciles(b, "awsmanagedmachinepool")
		pool := f.Key(poolName)
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta1")
		obj.SetKind("AWSManagedMachinePool")
		obj.SetNamespace(pool.Namespace)
		obj.SetName(pool.Name)
		env.PokeUntilReconciled(b, obj, "awsmanagedmachinepool", 5)
		r := testenv.Reconciles(b, "awsmanagedmachinepool") - before
		var reqs, writes int64
		for _, rc := range cloud.Stats().Requests {
			if rc.Face != eksface.EKSFaceName && rc.Face != awsface.AWSFaceName {
				continue
			}
			reqs += rc.Count
			if !strings.Contains(rc.Operation, ".Describe") && !strings.Contains(rc.Operation, ".List") {
				writes += rc.Count
			}
		}
		b.Logf("0 → %d nodes until Running: %.1f s; steady state: %d reconciles, %d requests (%d writes): %v", n, took.Seconds(), r, reqs, writes, cloud.Stats().Requests)
		b.ReportMetric(took.Seconds(), "eks-s")
		b.ReportMetric(float64(reqs)/float64(r), "requests/reconcile")
		b.ReportMetric(float64(writes)/float64(r), "writes/reconcile")
		m.Stop()
	}
}
