package aws

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// The AWS benchmarks run a real API server, the simulated cloud (its AWS
// face, SigV4, the real aws-sdk-go-v2) with its node agent, and a manager,
// all on this machine. Each op is a whole scale-up of MPOOL_BENCH_N
// instances (default 1,000; 10 with MPOOL_BENCH_SMALL=1), so run them once:
//
//	go test -p 1 -run '^$' -bench BenchmarkAWS -benchtime 1x -timeout 60m ./test/integration/aws/

// sized sets seed 004's MachinePool's replicas, and the group's bounds to
// let it grow to n.
func sized(replicas, n int) []func(*unstructured.Unstructured) {
	return []func(*unstructured.Unstructured){
		itest.Replicas(replicas),
		itest.SetField("AWSMachinePool", int64(max(n, 10)+n/4+1), "spec", "maxSize"),
		itest.SetField("AWSMachinePool", int64(0), "spec", "minSize"),
	}
}

// BenchmarkAWSScaleUp measures 0 → N instances with zero boot delay until
// the MachinePool is Running, for a LocalMachinePool and then seed 004's
// AWSMachinePool in the same run (target: AWS within 1.5× local), reported
// as local-s, aws-s and aws/local.
func BenchmarkAWSScaleUp(b *testing.B) {
	n := testenv.BenchN()
	itest.BenchScaleUp(b, env, itest.AWS, n, seedVersion, sized(0, n)...)
}

// BenchmarkAWSSteadyState measures, at N instances, the AWS requests of a
// steady-state reconcile (target: one DescribeAutoScalingGroups, plus
// pages, no write). The timed part is the reconciles of five changes to
// the pool that change nothing in the cloud.
func BenchmarkAWSSteadyState(b *testing.B) {
	n := testenv.BenchN()
	itest.BenchSteadyState(b, env, itest.AWS, n, "aws", sized(n, n)...)
}
