package aws

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// The AWS benchmarks run a real API server, the simulated cloud (its AWS
// face, SigV4, the real aws-sdk-go-v2) with its node agent, and a manager,
// all on this machine. Each op is a whole scale-up of MPOOL_BENCH_N
// instances (default 1,000; 10 with MPOOL_BENCH_SMALL=1), so run them once:
//
//	go test -p 1 -run '^$' -bench BenchmarkAWS -benchtime 1x -timeout 60m ./test/integration/aws/

// localPool is a LocalMachinePool beside the AWS pool, in the same Cluster.
const localPool = "local-mp-0"

// withReplicas sets seed 004's MachinePool's replicas (and the group's
// maxSize to fit them).
func withReplicas(n int) func(*unstructured.Unstructured) {
	return func(obj *unstructured.Unstructured) {
		switch obj.GetKind() {
		case "MachinePool":
			_ = unstructured.SetNestedField(obj.Object, int64(n), "spec", "replicas")
		case "AWSMachinePool":
			_ = unstructured.SetNestedField(obj.Object, int64(max(n, 10)+n/4+1), "spec", "maxSize")
			_ = unstructured.SetNestedField(obj.Object, int64(0), "spec", "minSize")
		}
	}
}

type benchEnv struct {
	f *fixture
	m *itest.Manager
}

func newBenchEnv(b *testing.B) *benchEnv {
	b.Helper()
	f, m := itest.StartBench(b, env, itest.AWS, itest.CloudOptions{})
	return &benchEnv{f: &fixture{f}, m: m}
}

// BenchmarkAWSScaleUp measures 0 → N instances with zero boot delay until
// the MachinePool is Running, for a LocalMachinePool and then seed 004's
// AWSMachinePool in the same run (target: AWS within 1.5× local), reported
// as local-s, aws-s and aws/local.
func BenchmarkAWSScaleUp(b *testing.B) {
	n := testenv.BenchN()
	for range b.N {
		b.StopTimer()
		e := newBenchEnv(b)
		env.CreateLocalPool(b, e.f.NS, clusterName, localPool, seedVersion)
		e.f.ApplySeed(withReplicas(0))
		env.WaitRunning(b, e.f.Key(localPool), 0, time.Minute)
		env.WaitRunning(b, e.f.Key(poolName), 0, time.Minute)
		e.f.updateAWSPool(func(p *infrav1.AWSMachinePool) { p.Spec.MaxSize = int32(n + n/4 + 1) })

		env.CompareScaleUp(b, n, e.f.Key(localPool), e.f.Key(poolName), "aws")
		e.m.Stop()
	}
}

// BenchmarkAWSSteadyState measures, at N instances, the AWS requests of a
// steady-state reconcile (target: one DescribeAutoScalingGroups, plus
// pages, no write). The timed part is the reconciles of five changes to
// the pool that change nothing in the cloud.
func BenchmarkAWSSteadyState(b *testing.B) {
	n := testenv.BenchN()
	for range b.N {
		b.StopTimer()
		e := newBenchEnv(b)
		e.f.ApplySeed(withReplicas(n))
		env.WaitRunning(b, e.f.Key(poolName), n, 30*time.Minute)
		r := e.f.SteadyState(b, e.m, 5)
		var reqs, writes int64
		for _, rc := range e.f.Cloud.Stats().Requests {
			if rc.Face != awsface.AWSFaceName {
				continue
			}
			reqs += rc.Count
			if !strings.Contains(rc.Operation, ".Describe") {
				writes += rc.Count
			}
		}
		b.Logf("steady state at %d instances: %d reconciles, %d AWS requests (%d not describes): %v", n, r, reqs, writes, e.f.Cloud.Stats().Requests)
		b.ReportMetric(float64(reqs)/float64(r), "aws-requests/reconcile")
		b.ReportMetric(float64(writes)/float64(r), "aws-writes/reconcile")
		e.m.Stop()
	}
}
