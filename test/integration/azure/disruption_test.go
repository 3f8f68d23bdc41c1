package azure

import (
	"testing"

	"github.com/mpool-dev/mpool/test/integration/itest"
)

// TestDisruptionControls: the rollout engine's disruption controls on a
// VMSS Uniform pool (seed 000, 2 VMs, a version change): the Schedule
// behavior for a Node a PodDisruptionBudget will not let go (the rollout
// pauses with the VM kept, across a manager restart, and completes once
// resumed), a maintenance window (a change made outside it waits, across a
// restart, and rolls once it is open) and the BlueGreen strategy (the full
// new set beside the old one, Ready schedulable Nodes never below the
// pool's size).
func TestDisruptionControls(t *testing.T) {
	itest.DisruptionChecks(t, 2, "v1.23.1", converge, func(t *testing.T) (*itest.Fixture, *itest.Manager) {
		f, m := start(t, 0)
		f.ApplySeed()
		f.WaitConverged(2, seedVersion, converge)
		return f.Fixture, m
	})
}
