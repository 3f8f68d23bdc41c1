package aws

import "testing"

// TestMachineHealthCheckRemediatesAStoppedKubelet: an ASG instance whose
// kubelet stops (its EC2 status checks still pass, so the ASG itself does
// nothing) is marked by a MachineHealthCheck, drained and terminated by the
// engine, and the ASG launches its replacement
// (itest.Fixture.CheckStoppedKubeletRemediated).
func TestMachineHealthCheckRemediatesAStoppedKubelet(t *testing.T) {
	f, _ := start(t, 0)
	f.ApplySeed()
	f.waitConverged(2, seedVersion)
	f.CheckStoppedKubeletRemediated(2, seedVersion, converge)
}
