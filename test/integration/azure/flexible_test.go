package azure

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/sim/face/azureface"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// flexibleVersion is the Flexible variant's version: CAPZ allows Flexible
// scale sets from v1.26.
const flexibleVersion = "v1.30.4"

// flexible turns seed 000's example into its Flexible variant.
func flexible(obj *unstructured.Unstructured) {
	switch obj.GetKind() {
	case "AzureMachinePool":
		_ = unstructured.SetNestedField(obj.Object, "Flexible", "spec", "orchestrationMode")
	case "MachinePool":
		_ = unstructured.SetNestedField(obj.Object, flexibleVersion, "spec", "template", "spec", "version")
	}
}

// TestSeedFlexible: seed 000's example with orchestrationMode Flexible
// (and a version Flexible allows) becomes a Running pool of Flexible VMs,
// Microsoft.Compute/virtualMachines named after the scale set, whose
// Nodes are named after the VMs' host names; it scales and is deleted
// cleanly.
func TestSeedFlexible(t *testing.T) {
	f, _ := start(t, 0)
	f.ApplySeed(flexible)
	f.WaitConverged(2, flexibleVersion, converge)

	prefix := "azure:///subscriptions/" + azureface.AzureDefaultSubscriptionID + "/resourceGroups/" + azureface.AzureDefaultResourceGroup +
		"/providers/Microsoft.Compute/virtualMachines/" + f.vmss() + "_"
	host := regexp.MustCompile(`^` + regexp.QuoteMeta(poolName) + `[0-9a-f]{6}$`)
	for _, n := range f.PoolNodes() {
		if !strings.HasPrefix(n.Spec.ProviderID, prefix) {
			t.Errorf("Node %s has providerID %s, want %s<suffix>", n.Name, n.Spec.ProviderID, prefix)
		}
		if !host.MatchString(n.Name) {
			t.Errorf("Node name %s is not %s + 6 hex digits", n.Name, poolName)
		}
	}
	f.Scale(3)
	f.WaitConverged(3, flexibleVersion, converge)
	f.Scale(1)
	f.WaitConverged(1, flexibleVersion, converge)

	// Admission judges the pair only when created (the webhook of
	// internal/admission/flexibleversion): lowering the version below v1.26
	// is admitted, and the provider refuses it without touching the VMs.
	t.Log("the MachinePool lowered to v1.25.9")
	before := f.InstanceIDs()
	f.SetVersion("v1.25.9")
	f.WaitCondition(converge, infrav1.ScaleSetRunningCondition, infrav1.InvalidSpecReason,
		"orchestrationMode Flexible needs Kubernetes v1.26.0 or later", `"v1.25.9"`, "raise the version or use orchestrationMode Uniform")
	if got := f.InstanceIDs(); !slices.Equal(got, before) {
		t.Fatalf("VMs %v became %v while the spec was refused", before, got)
	}
	f.SetVersion(flexibleVersion)
	f.WaitConverged(1, flexibleVersion, converge)
	if got := f.InstanceIDs(); !slices.Equal(got, before) {
		t.Fatalf("VMs %v became %v once the version was restored: nothing was to roll", before, got)
	}
	f.DeletePoolAndWaitGone(converge)
}
