package azure_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/mpool-dev/mpool/internal/scalegroup"
	"github.com/mpool-dev/mpool/internal/testenv/cloudtest"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/azureface"
)

func TestFlexible(t *testing.T) {
	e := startAzure(t)
	ctx := context.Background()
	r := ref("flex")
	e.Apply(t, r, spec(3, "h1", "Flexible", "1", "2", "3"))
	// Another Flexible scale set in the resource group: its VMs are not
	// flex's.
	e.Apply(t, ref("other"), spec(1, "o1", "Flexible"))
	g := e.Settle(t, r)

	cg := e.CloudGroup(t, groupKey("flex"))
	if len(g.Instances) != 3 || g.Capacity != 3 || g.ModelHash != "h1" {
		t.Fatalf("flex: capacity %d hash %q instances %v", g.Capacity, g.ModelHash, cloudtest.IDs(g))
	}
	for _, in := range g.Instances {
		i := slices.IndexFunc(cg.Instances, func(c core.Instance) bool { return c.ID == in.ID })
		want := "azure://" + testScope + "/providers/Microsoft.Compute/virtualMachines/" + in.ID
		if !strings.HasPrefix(in.ID, "flex_") || i < 0 || in.ProviderID != want || in.ProviderID != cg.Instances[i].ProviderID {
			t.Fatalf("instance %s providerID %q, want %q", in.ID, in.ProviderID, want)
		}
		if in.ModelHash != "h1" || in.State != scalegroup.StateRunning || in.Zone == "" {
			t.Fatalf("instance %+v", in)
		}
	}

	// A capacity change is a PATCH, as for Uniform.
	g, got := e.ApplyCounted(t, r, spec(4, "h1", "Flexible", "1", "2", "3"))
	if got[azureface.OpAzureVMSSUpdate] != 1 || writes(got) != 1 || len(g.Instances) != 4 {
		t.Fatalf("scaling flex to 4: %d instances, requests %v", len(g.Instances), got)
	}
	g = e.Settle(t, r)

	// Deleting VMs by name lowers the capacity by their number, in one
	// request; again, it changes nothing.
	victims := []string{g.Instances[0].ID, g.Instances[2].ID}
	for range 2 {
		e.Srv.ResetStats()
		if err := e.sg.DeleteInstances(ctx, r, victims); err != nil {
			t.Fatal(err)
		}
		if got := e.Requests(); writes(got) != 1 {
			t.Fatalf("requests of DeleteInstances: %v", got)
		}
		g = e.Settle(t, r)
		if g.Capacity != 2 || len(g.Instances) != 2 || slices.Contains(cloudtest.IDs(g), victims[0]) || slices.Contains(cloudtest.IDs(g), victims[1]) {
			t.Fatalf("after deleting %v: capacity %d instances %v", victims, g.Capacity, cloudtest.IDs(g))
		}
	}
	if o := e.Get(t, ref("other")); len(o.Instances) != 1 || o.Capacity != 1 {
		t.Fatalf("the other scale set: %v", cloudtest.IDs(o))
	}

	// Azure cannot change the orchestration mode: Invalid, nothing written.
	e.Srv.ResetStats()
	_, err := e.sg.Apply(ctx, r, spec(2, "h2", "Uniform", "1", "2", "3"))
	if !scalegroup.IsInvalid(err) || !strings.Contains(err.Error(), "create a new pool") {
		t.Fatalf("changing the orchestration mode: %v, want Invalid", err)
	}
	if got := e.Requests(); writes(got) != 0 {
		t.Fatalf("requests of a refused mode change: %v", got)
	}
}
