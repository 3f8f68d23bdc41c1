package azure

import "testing"

// TestMachineHealthCheckRemediatesAStoppedKubelet: a VMSS VM whose kubelet
// stops is marked by a MachineHealthCheck, drained and deleted by the
// engine, and the scale set creates its replacement
// (itest.Fixture.CheckStoppedKubeletRemediated).
func TestMachineHealthCheckRemediatesAStoppedKubelet(t *testing.T) {
	f, _ := start(t, 0)
	f.ApplySeed()
	f.WaitConverged(2, seedVersion, converge)
	f.CheckStoppedKubeletRemediated(2, seedVersion, converge)
}
