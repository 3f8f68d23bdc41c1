package azureface

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mpool-dev/mpool/sim/core"
)

func TestParseISO8601(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{in: "PT10M", want: 10 * time.Minute, ok: true},
		{in: "PT1H30M", want: 90 * time.Minute, ok: true},
		{in: "pt600s", want: 10 * time.Minute, ok: true},
		{in: "P1DT2H", want: 26 * time.Hour, ok: true},
		{in: "PT", ok: false},
		{in: "P", ok: false},
		{in: "10m", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := parseISO8601(tt.in)
			if ok != tt.ok || got != tt.want {
				t.Fatalf("parseISO8601(%q) = %s, %v; want %s, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// healthExtension is the Application Health extension a scale set needs
// for automatic repairs.
func healthExtension() *armcompute.VirtualMachineScaleSetExtensionProfile {
	return &armcompute.VirtualMachineScaleSetExtensionProfile{Extensions: []*armcompute.VirtualMachineScaleSetExtension{{
		Name: to.Ptr("HealthExtension"),
		Properties: &armcompute.VirtualMachineScaleSetExtensionProperties{
			Publisher: to.Ptr("Microsoft.ManagedServices"), Type: to.Ptr("ApplicationHealthLinux"), TypeHandlerVersion: to.Ptr("2.0"),
			Settings: map[string]any{"protocol": "http", "port": 80, "requestPath": "/healthz"},
		},
	}}}
}

// TestAzureAutomaticRepairs: automaticRepairsPolicy is validated as ARM
// does, returned with its defaults, and a VM whose application health is
// Unhealthy past the grace period is replaced (capacity unchanged), or
// restarted healthy.
func TestAzureAutomaticRepairs(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	e := startAzureEnv(t, core.Options{Clock: clk, DefaultSimulation: &core.Simulation{}})
	ctx := context.Background()

	policy := func(enabled bool, grace, action string) *armcompute.AutomaticRepairsPolicy {
		p := &armcompute.AutomaticRepairsPolicy{Enabled: to.Ptr(enabled)}
		if grace != "" {
			p.GracePeriod = to.Ptr(grace)
		}
		if action != "" {
			p.RepairAction = to.Ptr(armcompute.RepairAction(action))
		}
		return p
	}
	tests := []struct {
		name      string
		policy    *armcompute.AutomaticRepairsPolicy
		extension bool
		target    string
	}{
		{name: "enabling needs application health monitoring", policy: policy(true, "", ""), target: "properties.automaticRepairsPolicy"},
		{name: "a grace period below ten minutes", policy: policy(true, "PT5M", ""), extension: true, target: "properties.automaticRepairsPolicy.gracePeriod"},
		{name: "a grace period above ninety minutes", policy: policy(false, "PT2H", ""), target: "properties.automaticRepairsPolicy.gracePeriod"},
		{name: "a grace period that is not ISO 8601", policy: policy(true, "10m", ""), extension: true, target: "properties.automaticRepairsPolicy.gracePeriod"},
		{name: "an unknown repair action", policy: policy(true, "", "Explode"), extension: true, target: "properties.automaticRepairsPolicy.repairAction"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := testVMSS(armcompute.OrchestrationModeUniform, 1, "#cloud-config\n")
			v.Properties.AutomaticRepairsPolicy = tt.policy
			if tt.extension {
				v.Properties.VirtualMachineProfile.ExtensionProfile = healthExtension()
			}
			_, err := e.vmss.BeginCreateOrUpdate(ctx, testRG, "invalid", v, nil)
			if re := responseError(t, err, http.StatusBadRequest, "InvalidParameter"); !strings.Contains(re.Error(), `"target": "`+tt.target+`"`) {
				t.Fatalf("error %v, want the target %s", re, tt.target)
			}
		})
	}

	v := testVMSS(armcompute.OrchestrationModeUniform, 2, "#cloud-config\n")
	v.Properties.VirtualMachineProfile.ExtensionProfile = healthExtension()
	v.Properties.AutomaticRepairsPolicy = policy(true, "", "")
	got := e.create(t, "repaired", v)
	if p := got.Properties.AutomaticRepairsPolicy; p == nil || !*p.Enabled || deref(p.GracePeriod) != "PT10M" || *p.RepairAction != armcompute.RepairActionReplace {
		t.Fatalf("policy as returned: %+v, want enabled, PT10M, Replace", p)
	}
	sc := e.srv.Cloud().Scope(AzureFaceName, azureScope(AzureDefaultSubscriptionID, testRG))
	waitVMs := func(what string, cond func([]*armcompute.VirtualMachineScaleSetVM) bool) []*armcompute.VirtualMachineScaleSetVM {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			vms := e.listUniform(t, "repaired")
			if cond(vms) {
				return vms
			}
			if time.Now().After(deadline) {
				t.Fatalf("the scale set's VMs never %s: %v", what, vmIDs(vms))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	running := func(vms []*armcompute.VirtualMachineScaleSetVM) bool {
		n := 0
		for _, vm := range vms {
			if deref(vm.Properties.ProvisioningState) == "Succeeded" {
				n++
			}
		}
		return n == 2 && len(vms) == 2
	}
	vms := waitVMs("ran", running)
	sick := *vms[0].InstanceID
	if _, err := sc.SetInstanceFault("repaired", sick, core.FaultCloudCheckFailing); err != nil {
		t.Fatal(err)
	}
	clk.Step(9 * time.Minute)
	if vms := e.listUniform(t, "repaired"); !slices.Contains(vmIDs(vms), sick) {
		t.Fatalf("repaired within the grace period: %v", vmIDs(vms))
	}
	clk.Step(time.Minute + time.Second)
	vms = waitVMs("replaced the unhealthy VM", func(vms []*armcompute.VirtualMachineScaleSetVM) bool {
		return !slices.Contains(vmIDs(vms), sick) && running(vms)
	})
	if g, err := e.vmss.Get(ctx, testRG, "repaired", nil); err != nil || *g.SKU.Capacity != 2 {
		t.Fatalf("capacity after the repair: %v, %v; want 2", err, g.SKU)
	}

	// Restart keeps the VM and brings it back healthy.
	if _, err := e.vmss.BeginUpdate(ctx, testRG, "repaired", armcompute.VirtualMachineScaleSetUpdate{Properties: &armcompute.VirtualMachineScaleSetUpdateProperties{
		AutomaticRepairsPolicy: policy(true, "PT30M", "Restart"),
	}}, nil); err != nil {
		t.Fatal(err)
	}
	sick = *vms[0].InstanceID
	if _, err := sc.SetInstanceFault("repaired", sick, core.FaultCloudCheckFailing); err != nil {
		t.Fatal(err)
	}
	clk.Step(31 * time.Minute)
	vms = e.listUniform(t, "repaired")
	g, err := sc.GetGroup("repaired")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(vmIDs(vms), sick) || slices.ContainsFunc(g.Instances, func(in core.Instance) bool { return in.Fault != core.FaultNone }) {
		t.Fatalf("after a Restart repair: VMs %v, instances %+v; want %s kept, healthy", vmIDs(vms), g.Instances, sick)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
