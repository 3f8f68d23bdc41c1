package azure_test

import (
	"context"
	"github.com/mpool-dev/mpool/sim/core"
	"os"
	"testing"
)

// BenchmarkAzureGet1000 is a reconcile's read of a 1,000-VM Uniform scale
// set (50 with MPOOL_BENCH_SMALL=1) through the real SDK over HTTPS: the
// scale set's GET and its VM list (one page of ARM's 1,000). It reports the
// requests per Get, which must stay at 2.
func BenchmarkAzureGet1000(b *testing.B) {
	n := int32(1000)
	if os.Getenv("MPOOL_BENCH_SMALL") == "1" {
		n = 50
	}
	e := startAzure(b, nil, core.Simulation{})
	r := ref("big")
	e.apply(b, r, spec(n, "h1", "Uniform", "1", "2", "3"))
	e.boot(b, r)
	ctx := context.Background()
	e.srv.ResetStats()
	gets := 0
	for b.Loop() {
		g, err := e.sg.Get(ctx, r)
		if err != nil {
			b.Fatal(err)
		}
		if int32(len(g.Instances)) != n {
			b.Fatalf("Get returned %d VMs, want %d", len(g.Instances), n)
		}
		gets++
	}
	perGet := float64(armRequests(e.srv).total()) / float64(gets)
	b.ReportMetric(perGet, "requests/Get")
	if perGet != 2 {
		b.Fatalf("%.2f requests per Get, want 2 (the scale set's GET and one page of VMs)", perGet)
	}
}
