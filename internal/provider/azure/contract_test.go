package azure_test

import (
	"testing"
	"time"

	"github.com/mpool-dev/mpool/internal/cloudsim"
	"github.com/mpool-dev/mpool/internal/provider/contract/contracttest"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// TestScaleGroupKeepsTheContract runs the ScaleGroup contract suite on the
// Azure provider against the simulated Azure, Uniform and Flexible.
func TestScaleGroupKeepsTheContract(t *testing.T) {
	for _, mode := range []string{"Uniform", "Flexible"} {
		t.Run(mode, func(t *testing.T) {
			e := startAzure(t, nil, defaultSim())
			contracttest.ScaleGroup(t, contracttest.ScaleGroupCase{
				ScaleGroup: e.sg,
				Ref:        ref,
				Spec:       func(capacity int32, hash string) scalegroup.GroupSpec { return spec(capacity, hash, mode) },
				Advance:    func() { e.clk.Step(time.Second) },
				Throttle: func() func() {
					if err := e.srv.SetFaceFaults(cloudsim.AzureFaceName, &cloudsim.Faults{ThrottleRate: 1, RetryAfter: time.Second}); err != nil {
						t.Fatal(err)
					}
					return func() { _ = e.srv.SetFaceFaults(cloudsim.AzureFaceName, nil) }
				},
			})
		})
	}
}
