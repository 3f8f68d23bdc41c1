package peer

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/mpool-dev/mpool/internal/kubeenv"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/test/integration/itest"
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
// CABPK + CAPA, and mpool, its own core and AWS provider, one after the
// other in one run on the same simulated AWS with instances that boot at
// once: runScenario at benchSize (0 → N Running with N Ready Nodes, an
// instance type rolled, scale-in by half, deletion) with the same
// manifests. For each system it reports each phase's wall time, the AWS
// requests it sent (in all and the writes), its API server's requests,
// its managers' CPU seconds and peak RSS (from /proc) and the lowest count
// of Ready schedulable Nodes during the roll (roll-min-ready); then the
// ratios peer ÷ mpool (-x; none for roll-min-ready). -v logs the requests
// by action.
//
//	MPOOL_PEER_N=100 go test -p 1 -run '^$' -bench CAPAScenario -benchtime 1x -timeout 60m -v ./test/peer
func BenchmarkCAPAScenario(b *testing.B) {
	n := benchSize(b)
	for range b.N {
		peer := measureScenario(b, peerSys, n)
		mine := measureScenario(b, mpoolSys, n)
		for _, r := range []scenarioResult{peer, mine} {
			for _, m := range r.metrics() {
				b.ReportMetric(m.value, r.sys+"-"+m.unit)
			}
		}
		mm := mine.metrics()
		for i, m := range peer.metrics() {
			if mm[i].value > 0 && m.unit != "roll-min-ready" {
				b.ReportMetric(m.value/mm[i].value, m.unit+"-x")
			}
		}
	}
}

// scenarioResult is what one system's run of the scenario cost.
type scenarioResult struct {
	sys                 string
	phases              phases
	awsAll, awsWrites   int64
	kubeRequests        float64
	cpuSeconds, peakMiB float64
}

type metric struct {
	unit  string
	value float64
}

// metrics are the result's figures, by unit, in a fixed order.
func (r scenarioResult) metrics() []metric {
	return []metric{
		{"up-s", r.phases.Up.Seconds()},
		{"roll-s", r.phases.Roll.Seconds()},
		{"scalein-s", r.phases.ScaleIn.Seconds()},
		{"delete-s", r.phases.Delete.Seconds()},
		{"aws-req", float64(r.awsAll)},
		{"aws-writes", float64(r.awsWrites)},
		{"kube-req", r.kubeRequests},
		{"cpu-s", r.cpuSeconds},
		{"peak-rss-MiB", r.peakMiB},
		{"roll-min-ready", float64(r.phases.MinReady)},
	}
}

// measureScenario runs the scenario at n on sys in a fixture of its own and
// measures it.
func measureScenario(b *testing.B, sys *System, n int) scenarioResult {
	b.Helper()
	f := NewFixture(b, sys, cloud)
	cloud.ResetStats()
	testLaunchTemplateReads.Store(0)
	api0 := apiRequestTotal(b, sys.Env)
	u0 := managersUsage(b, sys)
	p := runScenario(b, f, n)
	u1 := managersUsage(b, sys)
	all, writes := awsRequests()
	b.Logf("%s, N=%d; the simulated AWS's requests:\n%s", sys.Name, n, requestSummary())
	return scenarioResult{
		sys: sys.Name, phases: p, awsAll: all, awsWrites: writes,
		kubeRequests: apiRequestTotal(b, sys.Env) - api0,
		cpuSeconds:   u1.CPUSeconds - u0.CPUSeconds,
		peakMiB:      float64(u1.PeakRSSBytes) / (1 << 20),
	}
}

// managersUsage sums the usage of sys's managers (peak RSS summed over the
// processes).
func managersUsage(b *testing.B, sys *System) kubeenv.Usage {
	b.Helper()
	var sum kubeenv.Usage
	for _, pid := range sys.Pids() {
		u, err := kubeenv.ReadUsage(pid)
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
// own DescribeLaunchTemplates (launchTemplates) are left out.
func awsRequests() (all, writes int64) {
	all = -testLaunchTemplateReads.Load()
	for _, r := range cloud.Stats().Requests {
		if r.Face != awsface.AWSFaceName {
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

// apiRequestTotal is env's API server's request count
// (apiserver_request_total summed), for everyone's requests: the
// managers', the node agent's and the test's.
func apiRequestTotal(b *testing.B, env *testenv.Env) float64 {
	b.Helper()
	var total float64
	for _, s := range itest.APIServerMetric(b, env.Config, "apiserver_request_total") {
		total += s.Value
	}
	return total
}
