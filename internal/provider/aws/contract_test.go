package aws_test

import (
	"testing"
	"time"

	"github.com/mpool-dev/mpool/internal/cloudsim"
	"github.com/mpool-dev/mpool/internal/provider/contract/contracttest"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// TestScaleGroupKeepsTheContract runs the ScaleGroup contract suite on the
// AWS provider against the simulated Auto Scaling and EC2.
func TestScaleGroupKeepsTheContract(t *testing.T) {
	e := startAWS(t, nil, defaultSim())
	contracttest.ScaleGroup(t, contracttest.ScaleGroupCase{
		ScaleGroup: e.sg,
		Ref:        ref,
		Spec:       func(capacity int32, hash string) scalegroup.GroupSpec { return spec(capacity, hash, "#cloud-config\n") },
		Advance:    func() { e.clk.Step(time.Second) },
		Throttle: func() func() {
			if err := e.srv.SetFaceFaults(cloudsim.AWSFaceName, &cloudsim.Faults{ThrottleRate: 1, RetryAfter: time.Second}); err != nil {
				t.Fatal(err)
			}
			return func() { _ = e.srv.SetFaceFaults(cloudsim.AWSFaceName, nil) }
		},
	})
}
