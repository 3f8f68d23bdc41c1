package azure

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

func testCluster() *infrav1.AzureCluster {
	return &infrav1.AzureCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "capz"},
		Spec: infrav1.AzureClusterSpec{
			SubscriptionID: "sub-1", ResourceGroup: "rg-1", Location: "westus2",
			IdentityRef:    &corev1.ObjectReference{Kind: infrav1.AzureClusterIdentityKind, Name: "id"},
			AdditionalTags: infrav1.Tags{"team": "a", "env": "cluster"},
			NetworkSpec: infrav1.NetworkSpec{
				Vnet:    infrav1.VnetSpec{Name: "capz-vnet"},
				Subnets: []infrav1.SubnetSpec{{Name: "cp", Role: "control-plane"}, {Name: "nodes", Role: infrav1.SubnetNode}},
			},
		},
	}
}

func testPool() *infrav1.AzureMachinePool {
	return &infrav1.AzureMachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "capz-mp-0"},
		Spec: infrav1.AzureMachinePoolSpec{
			AdditionalTags: infrav1.Tags{"env": "pool"},
			Template: infrav1.AzureMachinePoolMachineTemplate{
				VMSize:       "Standard_D2s_v3",
				SSHPublicKey: "ssh-ed25519 AAAA example",
				OSDisk:       infrav1.OSDisk{OSType: "Linux", DiskSizeGB: ptr.To[int32](30), ManagedDisk: &infrav1.ManagedDiskParameters{StorageAccountType: "Premium_LRS"}},
			},
		},
	}
}

func testOwner(version string) contract.Owner {
	return contract.Owner{
		MachinePool:  &clusterv1.MachinePool{Spec: clusterv1.MachinePoolSpec{ClusterName: "capz", FailureDomains: []string{"1", "2"}}},
		Version:      version,
		InfraCluster: testCluster(),
	}
}

func TestGroupRef(t *testing.T) {
	ref, err := Adapter{}.GroupRef(testPool(), testCluster())
	if err != nil {
		t.Fatal(err)
	}
	want := scalegroup.Ref{Name: ScaleSetName("ns", "capz-mp-0"), Scope: "/subscriptions/sub-1/resourceGroups/rg-1", Location: "westus2", Credentials: "ns/id", Namespace: "ns"}
	if ref != want {
		t.Errorf("ref %+v, want %+v", ref, want)
	}
	if len(ref.Name) > maxScaleSetName {
		t.Errorf("scale set name %q is longer than Azure allows", ref.Name)
	}

	p := testPool()
	p.Spec.Location = "eastus"
	c := testCluster()
	c.Spec.IdentityRef, c.Spec.ResourceGroup = nil, ""
	if ref, _ := (Adapter{}).GroupRef(p, c); ref.Location != "eastus" || ref.Credentials != "" || ref.Scope != "/subscriptions/sub-1/resourceGroups/capz" {
		t.Errorf("the pool's location, the manager's credentials and CAPZ's default resource group: %+v", ref)
	}

	c = testCluster()
	c.Spec.SubscriptionID = ""
	if _, err := (Adapter{}).GroupRef(testPool(), c); err == nil || !strings.Contains(err.Error(), "spec.subscriptionID") {
		t.Errorf("no subscription: %v", err)
	}
	c = testCluster()
	c.Spec.Location = ""
	if _, err := (Adapter{}).GroupRef(testPool(), c); err == nil || !strings.Contains(err.Error(), "spec.location") {
		t.Errorf("no location: %v", err)
	}
}

func TestDesired(t *testing.T) {
	d, err := Adapter{}.Desired(testPool(), testOwner("v1.22.0"))
	if err != nil {
		t.Fatal(err)
	}
	m := d.Model
	vm := m.Provider.(VMModel)
	if m.InstanceType != "Standard_D2s_v3" || m.Version != "v1.22.0" || strings.Join(m.Zones, ",") != "1,2" {
		t.Errorf("model %+v", m)
	}
	if vm.Image != (Image{Publisher: "cncf-upstream", Offer: "capi", SKU: "ubuntu-2204-gen1", Version: "122.0.0"}) {
		t.Errorf("default image for v1.22.0: %+v", vm.Image)
	}
	if want := "/subscriptions/sub-1/resourceGroups/rg-1/providers/Microsoft.Network/virtualNetworks/capz-vnet/subnets/nodes"; vm.SubnetID != want {
		t.Errorf("subnet %s, want the AzureCluster's node subnet %s", vm.SubnetID, want)
	}
	if vm.OrchestrationMode != "Uniform" || vm.ComputerNamePrefix != "capz-mp-0" || vm.OSDisk.SizeGB != 30 || vm.OSDisk.StorageAccountType != "Premium_LRS" {
		t.Errorf("vm model %+v", vm)
	}
	if m.Tags["env"] != "pool" || m.Tags["team"] != "a" || m.Tags[TagClusterPrefix+"capz"] != "owned" || m.Tags[TagRole] != "node" {
		t.Errorf("tags %v: the pool's additionalTags win over the cluster's, and the owned-cluster tag is set", m.Tags)
	}
	if m.InPlace != nil {
		t.Errorf("in-place settings without terminateNotificationTimeout: %+v", m.InPlace)
	}

	p := testPool()
	p.Spec.OrchestrationMode = infrav1.FlexibleOrchestrationMode
	if _, err := (Adapter{}).Desired(p, testOwner("v1.25.9")); err == nil || !strings.Contains(err.Error(), "v1.26") {
		t.Errorf("Flexible on v1.25.9: %v", err)
	}
	if d, err := (Adapter{}).Desired(p, testOwner("v1.26.0")); err != nil || d.Model.Provider.(VMModel).OrchestrationMode != "Flexible" {
		t.Errorf("Flexible on v1.26.0: %v", err)
	}
	p = testPool()
	p.Spec.Template.VMSize = ""
	if _, err := (Adapter{}).Desired(p, testOwner("v1.30.0")); err == nil || !strings.Contains(err.Error(), "vmSize") {
		t.Errorf("no vmSize: %v", err)
	}
}

func TestWritePoolMirrorsConditionsAndRecordsOperations(t *testing.T) {
	p := testPool()
	p.Annotations = map[string]string{contract.GroupRefAnnotation: scalegroup.Ref{Name: "vmss", Scope: "/subscriptions/s/resourceGroups/rg"}.Encode()}
	p.Status.Conditions = []metav1.Condition{{Type: infrav1.ScaleGroupModelUpdatedCondition, Status: metav1.ConditionFalse, Reason: infrav1.ScaleGroupModelOutOfDateReason, Message: "2 of 3"}}
	Adapter{}.WritePool(p, contract.PoolReport{
		Observed:  true,
		Operation: &scalegroup.Operation{Type: scalegroup.OperationUpdate, ResumeToken: "token"},
		Instances: []contract.InstanceReport{{InstanceID: "3", ProviderID: "azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets/vmss/virtualMachines/3", State: contract.InstanceBooting}},
	})
	c := meta.FindStatusCondition(p.Status.Conditions, infrav1.ScaleSetModelUpdatedCondition)
	if c == nil || c.Reason != "ScaleSetModelOutOfDate" || c.Message != "2 of 3" {
		t.Errorf("mirrored condition %+v", c)
	}
	if f := p.Status.LongRunningOperationStates; len(f) != 1 || f[0] != (infrav1.Future{Type: "PUT", ResourceGroup: "rg", ServiceName: "scalesets", Name: "vmss", Data: "token"}) {
		t.Errorf("longRunningOperationStates %+v", f)
	}
	if st := p.Status.ProvisioningState; st == nil || *st != infrav1.Updating {
		t.Errorf("provisioningState %v", st)
	}
	if in := p.Status.Instances; len(in) != 1 || in[0].InstanceName != "vmss_3" || *in[0].ProvisioningState != infrav1.Creating {
		t.Errorf("instances %+v", in)
	}
	if got := instanceName("azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vmss_a1b2c3d4"); got != "vmss_a1b2c3d4" {
		t.Errorf("Flexible instance name %q", got)
	}
}

// TestDesiredCAPZFields checks the CAPZ fields whose mapping is CAPZ's own
// rule: the Ultra SSD capability, the purchase plan of a gallery image
// derived from a third-party image, and a data disk's encryption set.
func TestDesiredCAPZFields(t *testing.T) {
	vmOf := func(t *testing.T, p *infrav1.AzureMachinePool) VMModel {
		t.Helper()
		d, err := Adapter{}.Desired(p, testOwner("v1.30.0"))
		if err != nil {
			t.Fatal(err)
		}
		return d.Model.Provider.(VMModel)
	}
	ultra := []infrav1.DataDisk{{NameSuffix: "data", DiskSizeGB: 64, ManagedDisk: &infrav1.ManagedDiskParameters{StorageAccountType: "UltraSSD_LRS"}}}
	plan := infrav1.ImagePlan{Publisher: "pub", Offer: "off", SKU: "sku"}
	for _, tc := range []struct {
		name   string
		why    string
		mutate func(*infrav1.AzureMachinePoolMachineTemplate)
		check  func(VMModel) bool
	}{
		{name: "no ultra disk", why: "without an Ultra SSD disk or the capability, Azure's default",
			mutate: func(*infrav1.AzureMachinePoolMachineTemplate) {},
			check:  func(vm VMModel) bool { return vm.UltraSSDEnabled == nil }},
		{name: "ultra disk", why: "an UltraSSD_LRS data disk enables the capability, as in CAPZ",
			mutate: func(t *infrav1.AzureMachinePoolMachineTemplate) { t.DataDisks = ultra },
			check:  func(vm VMModel) bool { return ptr.Deref(vm.UltraSSDEnabled, false) }},
		{name: "ultra disk, capability off", why: "additionalCapabilities.ultraSSDEnabled wins",
			mutate: func(t *infrav1.AzureMachinePoolMachineTemplate) {
				t.DataDisks = ultra
				t.AdditionalCapabilities = &infrav1.AdditionalCapabilities{UltraSSDEnabled: ptr.To(false)}
			},
			check: func(vm VMModel) bool { return vm.UltraSSDEnabled != nil && !*vm.UltraSSDEnabled }},
		{name: "data disk encryption set", why: "a data disk's diskEncryptionSet reaches the model",
			mutate: func(t *infrav1.AzureMachinePoolMachineTemplate) {
				t.DataDisks = []infrav1.DataDisk{{NameSuffix: "data", DiskSizeGB: 64, ManagedDisk: &infrav1.ManagedDiskParameters{DiskEncryptionSet: &infrav1.DiskEncryptionSetParameters{ID: "/des"}}}}
			},
			check: func(vm VMModel) bool { return len(vm.DataDisks) == 1 && vm.DataDisks[0].DiskEncryptionSetID == "/des" }},
		{name: "shared gallery with plan", why: "a shared gallery image with publisher, offer and sku carries their plan",
			mutate: func(t *infrav1.AzureMachinePoolMachineTemplate) {
				t.Image = &infrav1.Image{SharedGallery: &infrav1.AzureSharedGalleryImage{SubscriptionID: "s", ResourceGroup: "rg", Gallery: "g", Name: "n", Version: "1",
					Publisher: ptr.To("pub"), Offer: ptr.To("off"), SKU: ptr.To("sku")}}
			},
			check: func(vm VMModel) bool {
				return vm.Image.ThirdParty && vm.Image.Publisher == "pub" && vm.Image.Offer == "off" && vm.Image.SKU == "sku" && strings.HasSuffix(vm.Image.ID, "/galleries/g/images/n/versions/1")
			}},
		{name: "shared gallery without plan", why: "no plan without all three of publisher, offer and sku",
			mutate: func(t *infrav1.AzureMachinePoolMachineTemplate) {
				t.Image = &infrav1.Image{SharedGallery: &infrav1.AzureSharedGalleryImage{SubscriptionID: "s", ResourceGroup: "rg", Gallery: "g", Name: "n", Version: "1", Publisher: ptr.To("pub")}}
			},
			check: func(vm VMModel) bool { return !vm.Image.ThirdParty && vm.Image.Publisher == "" }},
		{name: "community gallery with plan", why: "a compute gallery image's plan is its purchase plan",
			mutate: func(t *infrav1.AzureMachinePoolMachineTemplate) {
				t.Image = &infrav1.Image{ComputeGallery: &infrav1.AzureComputeGalleryImage{Gallery: "g", Name: "n", Version: "1", Plan: &plan}}
			},
			check: func(vm VMModel) bool {
				return vm.Image == Image{Gallery: "g", Name: "n", Version: "1", Publisher: "pub", Offer: "off", SKU: "sku", ThirdParty: true}
			}},
		{name: "private compute gallery with plan", why: "a private compute gallery image is its version's ID, with the plan",
			mutate: func(t *infrav1.AzureMachinePoolMachineTemplate) {
				t.Image = &infrav1.Image{ComputeGallery: &infrav1.AzureComputeGalleryImage{Gallery: "g", Name: "n", Version: "1", SubscriptionID: ptr.To("s"), ResourceGroup: ptr.To("rg"), Plan: &plan}}
			},
			check: func(vm VMModel) bool {
				return vm.Image.ThirdParty && vm.Image.ID == "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/galleries/g/images/n/versions/1"
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testPool()
			tc.mutate(&p.Spec.Template)
			if vm := vmOf(t, p); !tc.check(vm) {
				t.Errorf("%s: model %+v", tc.why, vm)
			}
		})
	}
}
