package aws

import "testing"

// TestUndrainableScheduleAWS: the engine's Schedule behavior for an
// undrainable Node on a Auto Scaling group (seed 004 at 2): the
// version change's first drain is refused by a PodDisruptionBudget until
// the pool's drain timeout; the rollout pauses with the instance kept, a
// restarted manager keeps the pause, and resuming once the budget allows
// completes the roll.
func TestUndrainableScheduleAWS(t *testing.T) {
	f, m := start(t, 0)
	f.ApplySeed()
	f.waitConverged(2, seedVersion)
	f.CheckUndrainableSchedule(2, "v1.17.3", converge, func() {
		m.Stop()
		m = f.StartManager()
	})
}

// TestMaintenanceWindowAWS: a version change on an Auto Scaling group
// made outside its maintenance window waits, across a manager restart,
// and rolls once the window is open.
func TestMaintenanceWindowAWS(t *testing.T) {
	f, m := start(t, 0)
	f.ApplySeed()
	f.waitConverged(2, seedVersion)
	f.CheckMaintenanceWindow(2, "v1.17.3", converge, func() {
		m.Stop()
		m = f.StartManager()
	})
}
