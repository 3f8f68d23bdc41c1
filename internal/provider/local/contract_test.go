package local_test

import (
	"testing"
	"time"

	"github.com/mpool-dev/mpool/internal/cloudsim"
	"github.com/mpool-dev/mpool/internal/provider/contract/contracttest"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// TestScaleGroupKeepsTheContract runs the ScaleGroup contract suite on the
// local provider against the simulated cloud's local face.
func TestScaleGroupKeepsTheContract(t *testing.T) {
	srv, clk, c := startCloud(t, cloudsim.Simulation{BootDelay: time.Second})
	contracttest.ScaleGroup(t, contracttest.ScaleGroupCase{
		ScaleGroup: c,
		Ref:        func(name string) scalegroup.Ref { return scalegroup.Ref{Name: name} },
		Spec:       spec,
		Advance:    func() { clk.Step(time.Second) },
		Throttle: func() func() {
			if err := srv.SetFaults(cloudsim.Faults{ThrottleRate: 1, RetryAfter: time.Second}); err != nil {
				t.Fatal(err)
			}
			return func() { _ = srv.SetFaults(cloudsim.Faults{}) }
		},
	})
}
