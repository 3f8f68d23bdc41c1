package azure_test

import (
	"testing"

	"github.com/mpool-dev/mpool/internal/provider/contract/contracttest"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// TestScaleGroupKeepsTheContract runs the ScaleGroup contract suite on the
// Azure provider against the simulated Azure, Uniform and Flexible.
func TestScaleGroupKeepsTheContract(t *testing.T) {
	for _, mode := range []string{"Uniform", "Flexible"} {
		t.Run(mode, func(t *testing.T) {
			e := startAzure(t)
			contracttest.ScaleGroup(t, e.ContractCase(t, ref, func(capacity int32, hash string) scalegroup.GroupSpec {
				return spec(capacity, hash, mode)
			}))
		})
	}
}
