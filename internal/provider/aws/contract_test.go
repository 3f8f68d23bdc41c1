package aws_test

import (
	"testing"

	"github.com/mpool-dev/mpool/internal/provider/contract/contracttest"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// TestScaleGroupKeepsTheContract runs the ScaleGroup contract suite on the
// AWS provider against the simulated Auto Scaling and EC2.
func TestScaleGroupKeepsTheContract(t *testing.T) {
	e := startAWS(t)
	contracttest.ScaleGroup(t, e.ContractCase(t, ref, func(capacity int32, hash string) scalegroup.GroupSpec {
		return spec(capacity, hash, "#cloud-config\n")
	}))
}
