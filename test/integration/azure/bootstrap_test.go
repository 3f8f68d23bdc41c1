package azure

import (
	"testing"
	"time"

	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/sim/face/azureface"
)

// TestTokenRotationReplacesNothing: on a long-lived pool the bootstrap
// token rotates; no VM is replaced and the scale set is not written at
// rest (CAPZ issue #4958 churned the scale set's model on every rotation).
// The current custom data reaches the scale set with the next write that
// creates VMs, and they join with it.
func TestTokenRotationReplacesNothing(t *testing.T) {
	cloud := startCloud(t, 0)
	f := newFixture(t, cloud)
	// Tokens live 40s: at rest one is rotated within about half a minute.
	m := f.StartManager(func(o *manager.Options) { o.BootstrapTokenTTL = 40 * time.Second })
	f.ApplySeed()
	f.WaitConverged(2, seedVersion, converge)
	f.CheckTokenRotationAtRest(m)
	if n := f.ops(azureface.OpAzureVMSSCreateOrUpdate) + f.ops(azureface.OpAzureVMSSUpdate); n != 1 {
		t.Errorf("the scale set was written %d times, want only its creation", n)
	}

	// A scale-up carries the current custom data: the new VM joins with the
	// new token (the old one no longer exists).
	f.Scale(3)
	f.WaitConverged(3, seedVersion, converge)
}
