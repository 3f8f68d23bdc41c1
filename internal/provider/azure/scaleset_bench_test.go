package azure_test

import (
	"testing"

	"github.com/mpool-dev/mpool/internal/scalegroup"
	"github.com/mpool-dev/mpool/sim/core"
)

// BenchmarkAzureGet1000 is a reconcile's read of a 1,000-VM Uniform scale
// set (50 with MPOOL_BENCH_SMALL=1) through the real SDK over HTTPS: the
// scale set's GET and its VM list (one page of ARM's 1,000). It reports the
// requests per Get, which must stay at 2.
func BenchmarkAzureGet1000(b *testing.B) {
	e := startAzureWith(b, nil, core.Simulation{})
	e.BenchGet(b, ref("big"), func(n int32) scalegroup.GroupSpec { return spec(n, "h1", "Uniform", "1", "2", "3") }, 2)
}
