package azure

import "testing"

// TestUndrainableScheduleUniform: the engine's Schedule behavior for an
// undrainable Node on a VMSS Uniform pool (seed 000 scaled to 2): the
// version change's first drain is refused by a PodDisruptionBudget until
// the pool's drain timeout; the rollout pauses with the VM kept, a
// restarted manager keeps the pause, and resuming once the budget allows
// completes the roll.
func TestUndrainableScheduleUniform(t *testing.T) {
	f, m := start(t, 0)
	f.ApplySeed()
	f.WaitConverged(2, seedVersion, converge)
	f.CheckUndrainableSchedule(2, "v1.23.1", converge, func() {
		m.Stop()
		m = f.StartManager()
	})
}

// TestMaintenanceWindowUniform: a version change on a VMSS Uniform pool
// made outside its maintenance window waits, across a manager restart,
// and rolls once the window is open.
func TestMaintenanceWindowUniform(t *testing.T) {
	f, m := start(t, 0)
	f.ApplySeed()
	f.WaitConverged(2, seedVersion, converge)
	f.CheckMaintenanceWindow(2, "v1.23.1", converge, func() {
		m.Stop()
		m = f.StartManager()
	})
}
