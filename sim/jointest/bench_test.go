package jointest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/mpool-dev/mpool/sim/cloudsim"
	"github.com/mpool-dev/mpool/sim/core"
	"k8s.io/client-go/rest"
)

// BenchmarkJoin1000 measures 1,000 instances booting at once (zero boot
// delay) until every one has registered its Node and Lease with the real API
// server: token discovery, CA check, SelfSubjectReview, Node and Lease.
// With MPOOL_BENCH_SMALL=1 (hack/bench-smoke.sh) it boots 20.
func BenchmarkJoin1000(b *testing.B) {
	n := benchSize(1000, 20)
	ctx := context.Background()
	token := createToken(b, time.Now().Add(time.Hour))
	opts := core.Options{DefaultSimulation: &core.Simulation{}}
	opts.NodeAgent.Credentials = []*rest.Config{env.Config}
	srv, err := cloudsim.Start(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Stop()
	data := cloudInit("kubeadm.k8s.io/v1beta3", token, caHash(b))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		group := fmt.Sprintf("bench-%d", i)
		start := time.Now()
		if _, err := srv.Cloud().ApplyGroup(group, core.GroupSpec{Capacity: int32(n), Model: core.Model{CustomData: data}}); err != nil {
			b.Fatal(err)
		}
		for {
			g, err := srv.Cloud().GetGroup(group)
			if err != nil {
				b.Fatal(err)
			}
			joined := 0
			for _, in := range g.Instances {
				switch in.Join {
				case core.JoinJoined:
					joined++
				case core.JoinFailed:
					b.Fatalf("instance %s failed to join: %s", in.ID, in.Message)
				}
			}
			if joined == n {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		b.ReportMetric(float64(time.Since(start).Milliseconds()), "ms/1000-joins")
	}
}

// benchSize is a benchmark's size: full, or small with MPOOL_BENCH_SMALL=1,
// with which hack/bench-smoke.sh runs every benchmark once to see that it
// still runs.
func benchSize(full, small int) int {
	if v := os.Getenv("MPOOL_BENCH_SMALL"); v != "" && v != "0" {
		return small
	}
	return full
}
