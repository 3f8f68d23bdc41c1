package aws_test

import (
	"testing"

	"github.com/mpool-dev/mpool/internal/provider/aws"
	"github.com/mpool-dev/mpool/internal/scalegroup"
	"github.com/mpool-dev/mpool/sim/core"
)

// BenchmarkAWSGet1000 is a reconcile's read of a 1,000-instance Auto
// Scaling Group (50 with MPOOL_BENCH_SMALL=1) through the real SDK: one
// DescribeAutoScalingGroups, which lists the instances with their
// launch-template versions. It reports the requests per Get, which must
// stay at 1.
func BenchmarkAWSGet1000(b *testing.B) {
	e := startAWSWith(b, nil, core.Simulation{})
	e.BenchGet(b, ref("big"), func(n int32) scalegroup.GroupSpec {
		s := spec(n, "h1", token1)
		settings := s.Model.InPlace.(aws.GroupSettings)
		settings.MaxSize = n
		s.Model.InPlace = settings
		return s
	}, 1)
}
