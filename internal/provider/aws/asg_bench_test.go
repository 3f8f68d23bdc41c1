package aws_test

import (
	"context"
	"os"
	"testing"

	"github.com/mpool-dev/mpool/internal/provider/aws"
	"github.com/mpool-dev/mpool/sim/core"
)

// BenchmarkAWSGet1000 is a reconcile's read of a 1,000-instance Auto
// Scaling Group (50 with MPOOL_BENCH_SMALL=1) through the real SDK: one
// DescribeAutoScalingGroups, which lists the instances with their
// launch-template versions. It reports the requests per Get, which must
// stay at 1.
func BenchmarkAWSGet1000(b *testing.B) {
	n := int32(1000)
	if os.Getenv("MPOOL_BENCH_SMALL") == "1" {
		n = 50
	}
	e := startAWS(b, nil, core.Simulation{})
	r := ref("big")
	s := spec(n, "h1", token1)
	settings := s.Model.InPlace.(aws.GroupSettings)
	settings.MaxSize = n
	s.Model.InPlace = settings
	e.apply(b, r, s)
	e.settle(b, r)
	ctx := context.Background()
	e.srv.ResetStats()
	gets := 0
	for b.Loop() {
		g, err := e.sg.Get(ctx, r)
		if err != nil {
			b.Fatal(err)
		}
		if int32(len(g.Instances)) != n {
			b.Fatalf("Get returned %d instances, want %d", len(g.Instances), n)
		}
		gets++
	}
	perGet := float64(awsRequests(e.srv).total()) / float64(gets)
	b.ReportMetric(perGet, "requests/Get")
	if perGet != 1 {
		b.Fatalf("%.2f requests per Get, want 1 (DescribeAutoScalingGroups)", perGet)
	}
}
