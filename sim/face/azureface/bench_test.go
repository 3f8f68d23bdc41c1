package azureface

import (
	"context"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"

	"github.com/mpool-dev/mpool/sim/core"
)

// BenchmarkAzureListVMs lists a 1,000-VM Uniform scale set through the real
// SDK: the steady-state read of a provider's reconcile (one page).
func BenchmarkAzureListVMs(b *testing.B) {
	e := startAzureEnv(b, core.Options{DefaultSimulation: &core.Simulation{}})
	e.create(b, "big", testVMSS(armcompute.OrchestrationModeUniform, 1000, "#cloud-config\n"))
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		n := 0
		pager := e.vms.NewListPager(testRG, "big", nil)
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				b.Fatal(err)
			}
			n += len(page.Value)
		}
		if n != 1000 {
			b.Fatalf("listed %d VMs", n)
		}
	}
}
