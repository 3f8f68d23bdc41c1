package aws

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
	"github.com/mpool-dev/mpool/sim/face/awsface"
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
	m *testManager
}

func newBenchEnv(b *testing.B) *benchEnv {
	b.Helper()
	cloud := startCloud(b, 0)
	f := newFixture(b, cloud)
	m := startManager(b, f, func(o *manager.Options) { o.Providers[local.ProviderName] = &local.Config{URL: cloud.URL()} })
	b.Cleanup(func() {
		_ = cloud.Stop()
		env.DeleteNodes(b, func(n *corev1.Node) bool {
			return strings.HasPrefix(n.Spec.ProviderID, "local:///") || strings.HasPrefix(n.Spec.ProviderID, "aws:///")
		})
	})
	return &benchEnv{f: f, m: m}
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
		env.CreateLocalPool(b, e.f.ns, clusterName, localPool, seedVersion)
		e.f.applySeed(withReplicas(0))
		env.WaitRunning(b, e.f.key(localPool), 0, time.Minute)
		env.WaitRunning(b, e.f.key(poolName), 0, time.Minute)
		e.f.updateAWSPool(func(p *infrav1.AWSMachinePool) { p.Spec.MaxSize = int32(n + n/4 + 1) })

		env.CompareScaleUp(b, n, e.f.key(localPool), e.f.key(poolName), "aws")
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
		e.f.applySeed(withReplicas(n))
		env.WaitRunning(b, e.f.key(poolName), n, 30*time.Minute)
		testenv.Eventually(b, 5*time.Minute, func() error {
			ap := &infrav1.AWSMachinePool{}
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
		before := testenv.Reconciles(b, "awsmachinepool")
		const pokes = 5
		b.StartTimer()
		for i := range pokes {
			e.f.updateAWSPool(func(p *infrav1.AWSMachinePool) {
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
			if r, got := sg.Counts().Reads(), testenv.Reconciles(b, "awsmachinepool")-before; got < r {
				return fmt.Errorf("%d reads, %d reconciles finished", r, got)
			}
			return nil
		})
		b.StopTimer()
		r := testenv.Reconciles(b, "awsmachinepool") - before
		var reqs, writes int64
		for _, rc := range e.f.cloud.Stats().Requests {
			if rc.Face != awsface.AWSFaceName {
				continue
			}
			reqs += rc.Count
			if !strings.Contains(rc.Operation, ".Describe") {
				writes += rc.Count
			}
		}
		b.Logf("steady state at %d instances: %d reconciles, %d AWS requests (%d not describes): %v", n, r, reqs, writes, e.f.cloud.Stats().Requests)
		b.ReportMetric(float64(reqs)/float64(r), "aws-requests/reconcile")
		b.ReportMetric(float64(writes)/float64(r), "aws-writes/reconcile")
		e.m.Stop()
	}
}
