package peer

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/mpool-dev/mpool/sim/face/awsface"
)

// benchSize is the pool size of BenchmarkCAPAScenario: MPOOL_PEER_N, else
// 2 at MPOOL_BENCH_SMALL (CI's smoke run) and 20 otherwise.
func benchSize(b *testing.B) int {
	if s := os.Getenv("MPOOL_PEER_N"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 2 {
			b.Fatalf("MPOOL_PEER_N=%q: want a number of instances, at least 2", s)
		}
		return n
	}
	if os.Getenv("MPOOL_BENCH_SMALL") != "" {
		return 2
	}
	return 20
}

// BenchmarkCAPAScenario measures the peer, upstream Cluster API core +
// CABPK + CAPA, on the simulated AWS with instances that boot at once:
// runScenario at benchSize (0 → N Running with N Ready Nodes, an instance
// type rolled, scale-in by half, deletion). It reports each phase's wall
// time, the AWS requests CAPA sent (in all and the writes), the API
// server's requests, and the CPU seconds and peak RSS of the three
// managers (from /proc); -v logs the requests by action.
//
//	MPOOL_PEER_N=100 go test -p 1 -run '^$' -bench CAPAScenario -benchtime 1x ./test/peer
func BenchmarkCAPAScenario(b *testing.B) {
	n := benchSize(b)
	for range b.N {
		f := NewFixture(b, env, cloud)
		cloud.ResetStats()
		api0 := apiRequestTotal(b)
		u0 := managersUsage(b)
		p := runScenario(b, f, n)
		u1 := managersUsage(b)
		all, writes := awsRequests()
		b.ReportMetric(p.Up.Seconds(), "up-s")
		b.ReportMetric(p.Roll.Seconds(), "roll-s")
		b.ReportMetric(p.ScaleIn.Seconds(), "scalein-s")
		b.ReportMetric(p.Delete.Seconds(), "delete-s")
		b.ReportMetric(float64(all), "aws-req")
		b.ReportMetric(float64(writes), "aws-writes")
		b.ReportMetric(apiRequestTotal(b)-api0, "kube-req")
		b.ReportMetric(u1.CPUSeconds-u0.CPUSeconds, "cpu-s")
		b.ReportMetric(float64(u1.PeakRSSBytes)/(1<<20), "peak-rss-MiB")
		b.Logf("N=%d; the simulated AWS's requests:\n%s", n, requestSummary())
	}
}

// managersUsage sums the usage of CAPA's and upstream's managers (peak RSS
// summed over the three processes).
func managersUsage(b *testing.B) Usage {
	b.Helper()
	pids := []int{capa.Pid()}
	for _, pid := range up.Pids() {
		pids = append(pids, pid)
	}
	var sum Usage
	for _, pid := range pids {
		u, err := ReadUsage(pid)
		if err != nil {
			b.Fatalf("reading the managers' usage: %v", err)
		}
		sum.CPUSeconds += u.CPUSeconds
		sum.PeakRSSBytes += u.PeakRSSBytes
	}
	return sum
}

// awsRequests counts the AWS face's requests since the stats were reset:
// all of them, and the writes (actions other than Describe*). The test's
// own DescribeLaunchTemplates (CAPA sends none) are left out.
func awsRequests() (all, writes int64) {
	for _, r := range cloud.Stats().Requests {
		if r.Face != awsface.AWSFaceName || r.Operation == awsface.OpAWSDescribeLaunchTemplates {
			continue
		}
		all += r.Count
		action := r.Operation[strings.LastIndex(r.Operation, ".")+1:]
		if !strings.HasPrefix(action, "Describe") {
			writes += r.Count
		}
	}
	return all, writes
}

// apiRequestTotal is the API server's request count
// (apiserver_request_total summed), for everyone's requests: the three
// managers', the node agent's and the test's.
func apiRequestTotal(b *testing.B) float64 {
	b.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		b.Fatalf("reading the API server's metrics: %v", err)
	}
	var total float64
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[strings.LastIndex(line, " ")+1:]), 64)
		if err == nil {
			total += v
		}
	}
	return total
}
