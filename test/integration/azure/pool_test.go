package azure

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/azureface"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// converge bounds every wait for a pool to settle.
const converge = 2 * time.Minute

// seedVersion is the version seed 000's MachinePool asks for.
const seedVersion = "v1.22.0"

// uniformNodeName is CAPZ's Uniform host name: the computerNamePrefix (the
// pool's name) and six base-36 digits.
var uniformNodeName = regexp.MustCompile(`^` + regexp.QuoteMeta(poolName) + `[0-9a-z]{6}$`)

// TestSeedUniform: seed 000's example, applied unchanged, becomes a
// Running pool of VMSS VMs joined as Nodes with Azure's providerIDs and
// host names; it scales 2→5→1 honouring deletePolicy Oldest; a vmSize
// change and a version change each roll every VM within maxSurge and
// maxUnavailable; deleting one AzureMachinePoolMachine replaces that VM;
// deleting the pool leaves nothing behind.
func TestSeedUniform(t *testing.T) {
	f, _ := start(t, 0)
	f.ApplySeed()
	f.WaitConverged(2, seedVersion, converge)

	prefix := "azure:///subscriptions/" + azureface.AzureDefaultSubscriptionID + "/resourceGroups/" + azureface.AzureDefaultResourceGroup +
		"/providers/Microsoft.Compute/virtualMachineScaleSets/" + f.vmss() + "/virtualMachines/"
	for _, n := range f.PoolNodes() {
		if !strings.HasPrefix(n.Spec.ProviderID, prefix) {
			t.Errorf("Node %s has providerID %s, want %s<n>", n.Name, n.Spec.ProviderID, prefix)
		}
		if !uniformNodeName.MatchString(n.Name) {
			t.Errorf("Node name %s is not %s + 6 base-36 digits", n.Name, poolName)
		}
	}
	ap := &infrav1.AzureMachinePool{}
	if err := env.Client.Get(f.Ctx, f.Key(poolName), ap); err != nil {
		t.Fatal(err)
	}
	if ap.Status.ProvisioningState == nil || *ap.Status.ProvisioningState != infrav1.Succeeded {
		t.Errorf("AzureMachinePool provisioningState %v, want Succeeded", ap.Status.ProvisioningState)
	}
	if err := itest.ConditionsTrue(ap.Status.Conditions, infrav1.ScaleSetModelUpdatedCondition, infrav1.ScaleSetDesiredReplicasCondition); err != nil {
		t.Error(err)
	}

	t.Log("scale 2 → 5 → 1 (deletePolicy Oldest)")
	f.Scale(5)
	f.WaitConverged(5, seedVersion, converge)
	newest := f.newestInstance()
	f.Scale(1)
	f.WaitConverged(1, seedVersion, converge)
	if g := f.Group(); g.Instances[0].ID != newest {
		t.Errorf("deletePolicy Oldest kept VM %s, want the newest, %s", g.Instances[0].ID, newest)
	}

	f.Scale(4)
	f.WaitConverged(4, seedVersion, converge)

	t.Log("vmSize change rolls every VM")
	before := f.InstanceIDs()
	w := itest.WatchBudgets(f.Fixture, 4, 1, 1)
	f.updateAzurePool(func(p *infrav1.AzureMachinePool) { p.Spec.Template.VMSize = "Standard_D4s_v3" })
	f.WaitRolled(before, 4, seedVersion, converge)
	w.AssertHeld()
	for _, in := range f.Group().Instances {
		var vm struct {
			VMSize string `json:"vmSize"`
		}
		_ = json.Unmarshal(in.Payload, &vm)
		if vm.VMSize != "Standard_D4s_v3" {
			t.Errorf("VM %s has size %q after the roll", in.ID, vm.VMSize)
		}
	}

	t.Log("version change rolls every VM")
	before = f.InstanceIDs()
	w = itest.WatchBudgets(f.Fixture, 4, 1, 1)
	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) { mp.Spec.Template.Spec.Version = "v1.23.1" })
	f.WaitRolled(before, 4, "v1.23.1", converge)
	w.AssertHeld()

	t.Log("deleting one AzureMachinePoolMachine replaces that VM only")
	f.DeleteOneMachine(4, "v1.23.1", converge)

	t.Log("deleting the pool leaves nothing behind")
	f.DeletePoolAndWaitGone(converge)
}

// newestInstance is the ID of the scale set's most recently created VM.
func (f *fixture) newestInstance() string {
	g := f.Group()
	in := slices.MaxFunc(g.Instances, func(a, b core.Instance) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		ai, _ := strconv.Atoi(a.ID)
		bi, _ := strconv.Atoi(b.ID)
		return ai - bi
	})
	return in.ID
}
