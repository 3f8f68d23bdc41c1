package local_test

import (
	"testing"
	"time"

	"github.com/mpool-dev/mpool/internal/provider/contract/contracttest"
	"github.com/mpool-dev/mpool/internal/scalegroup"
	"github.com/mpool-dev/mpool/sim/core"
)

// TestScaleGroupKeepsTheContract runs the ScaleGroup contract suite on the
// local provider against the simulated cloud's local face.
func TestScaleGroupKeepsTheContract(t *testing.T) {
	e, _ := startCloud(t, core.Simulation{BootDelay: time.Second})
	contracttest.ScaleGroup(t, e.ContractCase(t, func(name string) scalegroup.Ref { return scalegroup.Ref{Name: name} }, spec))
}
