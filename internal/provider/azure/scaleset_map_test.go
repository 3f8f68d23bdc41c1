package azure

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	"k8s.io/utils/ptr"

	"github.com/mpool-dev/mpool/internal/scalegroup"
)

var mapRef = scalegroup.Ref{Name: "pool0", Scope: "/subscriptions/s/resourceGroups/rg", Location: "eastus"}

func mapSpec(vm VMModel) scalegroup.GroupSpec {
	return scalegroup.GroupSpec{
		Capacity:  2,
		ModelHash: "h1",
		Model: scalegroup.Model{
			InstanceType: "Standard_D2s_v3",
			Zones:        []string{"1", "2"},
			Version:      "v1.30.4",
			CustomData:   []byte("#cloud-config\n"),
			Tags:         map[string]string{"team": "a"},
			Provider:     vm,
			InPlace:      &ScaleSetSettings{TerminateNotificationTimeout: 7},
		},
	}
}

// at reads a JSON path of v's encoding, as ARM receives it.
func at(t *testing.T, v any, path string) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var cur any
	if err := json.Unmarshal(b, &cur); err != nil {
		t.Fatal(err)
	}
	for _, k := range strings.Split(path, ".") {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[k]
		case []any:
			var i int
			if err := json.Unmarshal([]byte(k), &i); err != nil || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

func TestDesiredScaleSet(t *testing.T) {
	full := VMModel{
		OrchestrationMode:  "Uniform",
		ComputerNamePrefix: "pool0",
		AdminUsername:      "capi",
		SSHPublicKey:       "ssh-ed25519 AAAA",
		Image:              Image{Publisher: "cncf-upstream", Offer: "capi", SKU: "ubuntu-2204-gen1", Version: "130.4.20240717", ThirdParty: true},
		OSDisk:             OSDisk{OSType: "Linux", SizeGB: 30, StorageAccountType: "Premium_LRS", Caching: "ReadOnly", EphemeralPlacement: "ResourceDisk", DiskEncryptionSetID: "/des"},
		DataDisks:          []DataDisk{{NameSuffix: "etcd", SizeGB: 64, Lun: 1, Caching: "None", StorageAccountType: "StandardSSD_LRS", DiskEncryptionSetID: "/des-data"}},
		SubnetID:           "/subnets/node",
		Identity:           Identity{Type: "UserAssigned", UserAssigned: []string{"/identities/a"}},
		Spot:               &Spot{MaxPrice: "0.05", EvictionPolicy: "Delete"},
		Security:           &Security{EncryptionAtHost: ptr.To(true), SecurityType: "TrustedLaunch", SecureBoot: ptr.To(true), VTPM: ptr.To(true)},
		Extensions:         []Extension{{Name: "CustomScript", Publisher: "Microsoft.Azure.Extensions", Version: "2.1", Settings: map[string]string{"a": "b"}}},
		BootDiagnostics:    "Managed",
		ZoneBalance:        ptr.To(true),
		UltraSSDEnabled:    ptr.To(true),
	}
	flexible := full
	flexible.OrchestrationMode = "Flexible"
	flexible.NetworkInterfaces = []NetworkInterface{{SubnetID: "/subnets/a", PrivateIPConfigs: 2}, {SubnetID: "/subnets/b"}}

	for _, tc := range []struct {
		name string
		why  string
		vm   VMModel
		want map[string]any
	}{
		{
			name: "uniform", why: "every field of the model reaches the PUT; the engine picks victims (Manual, no overprovisioning)",
			vm: full,
			want: map[string]any{
				"location":                        "eastus",
				"sku.name":                        "Standard_D2s_v3",
				"sku.tier":                        "Standard",
				"sku.capacity":                    2.0,
				"zones.1":                         "2",
				"tags.team":                       "a",
				"plan.publisher":                  "cncf-upstream",
				"identity.type":                   "UserAssigned",
				"properties.orchestrationMode":    "Uniform",
				"properties.upgradePolicy.mode":   "Manual",
				"properties.overprovision":        false,
				"properties.singlePlacementGroup": false,
				"properties.zoneBalance":          true,
				"properties.additionalCapabilities.ultraSSDEnabled":                                                                                   true,
				"properties.platformFaultDomainCount":                                                                                                 nil,
				"properties.virtualMachineProfile.osProfile.computerNamePrefix":                                                                       "pool0",
				"properties.virtualMachineProfile.osProfile.customData":                                                                               base64.StdEncoding.EncodeToString([]byte("#cloud-config\n")),
				"properties.virtualMachineProfile.osProfile.linuxConfiguration.disablePasswordAuthentication":                                         true,
				"properties.virtualMachineProfile.osProfile.linuxConfiguration.ssh.publicKeys.0.path":                                                 "/home/capi/.ssh/authorized_keys",
				"properties.virtualMachineProfile.storageProfile.imageReference.version":                                                              "130.4.20240717",
				"properties.virtualMachineProfile.storageProfile.osDisk.createOption":                                                                 "FromImage",
				"properties.virtualMachineProfile.storageProfile.osDisk.diskSizeGB":                                                                   30.0,
				"properties.virtualMachineProfile.storageProfile.osDisk.managedDisk.storageAccountType":                                               "Premium_LRS",
				"properties.virtualMachineProfile.storageProfile.osDisk.managedDisk.diskEncryptionSet.id":                                             "/des",
				"properties.virtualMachineProfile.storageProfile.osDisk.diffDiskSettings.option":                                                      "Local",
				"properties.virtualMachineProfile.storageProfile.osDisk.diffDiskSettings.placement":                                                   "ResourceDisk",
				"properties.virtualMachineProfile.storageProfile.dataDisks.0.lun":                                                                     1.0,
				"properties.virtualMachineProfile.storageProfile.dataDisks.0.createOption":                                                            "Empty",
				"properties.virtualMachineProfile.storageProfile.dataDisks.0.managedDisk.diskEncryptionSet.id":                                        "/des-data",
				"properties.virtualMachineProfile.networkProfile.networkInterfaceConfigurations.0.properties.ipConfigurations.0.properties.subnet.id": "/subnets/node",
				"properties.virtualMachineProfile.networkProfile.networkApiVersion":                                                                   nil,
				"properties.virtualMachineProfile.priority":                                                                                           "Spot",
				"properties.virtualMachineProfile.evictionPolicy":                                                                                     "Delete",
				"properties.virtualMachineProfile.billingProfile.maxPrice":                                                                            0.05,
				"properties.virtualMachineProfile.securityProfile.uefiSettings.vTpmEnabled":                                                           true,
				"properties.virtualMachineProfile.extensionProfile.extensions.0.properties.type":                                                      "CustomScript",
				"properties.virtualMachineProfile.extensionProfile.extensions.0.properties.typeHandlerVersion":                                        "2.1",
				"properties.virtualMachineProfile.diagnosticsProfile.bootDiagnostics.enabled":                                                         true,
				"properties.virtualMachineProfile.scheduledEventsProfile.terminateNotificationProfile.notBeforeTimeout":                               "PT7M",
			},
		},
		{
			name: "flexible", why: "Flexible needs networkApiVersion, a fault domain count and no single placement group, and has no upgrade policy",
			vm: flexible,
			want: map[string]any{
				"properties.orchestrationMode":                                      "Flexible",
				"properties.upgradePolicy":                                          nil,
				"properties.overprovision":                                          nil,
				"properties.singlePlacementGroup":                                   false,
				"properties.platformFaultDomainCount":                               1.0,
				"properties.virtualMachineProfile.networkProfile.networkApiVersion": "2020-11-01",
				"properties.virtualMachineProfile.networkProfile.networkInterfaceConfigurations.0.properties.ipConfigurations.1.name":                 "ipconfig1",
				"properties.virtualMachineProfile.networkProfile.networkInterfaceConfigurations.1.properties.ipConfigurations.0.properties.subnet.id": "/subnets/b",
				"properties.virtualMachineProfile.networkProfile.networkInterfaceConfigurations.1.properties.primary":                                 false,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := desiredScaleSet(mapRef, mapSpec(tc.vm))
			if err != nil {
				t.Fatal(err)
			}
			for path, want := range tc.want {
				if got := at(t, d.scaleSet, path); got != want {
					t.Errorf("%s: %s = %v, want %v", tc.why, path, got, want)
				}
			}
			if ptr.Deref(d.scaleSet.Tags[TagModelHash], "") != "h1" || ptr.Deref(d.scaleSet.Tags[TagKubernetesVersion], "") != "v1.30.4" {
				t.Errorf("%s: tags %v lack the model hash or version", tc.why, d.scaleSet.Tags)
			}
		})
	}
}

func TestDesiredScaleSetInvalid(t *testing.T) {
	good := VMModel{Image: Image{ID: "/images/x"}, OSDisk: OSDisk{OSType: "Linux"}}
	for _, tc := range []struct {
		name   string
		mutate func(*scalegroup.GroupSpec)
		says   string
	}{
		{"nil model", func(s *scalegroup.GroupSpec) { s.Model.Provider = nil }, "azure.VMModel"},
		{"nil model pointer", func(s *scalegroup.GroupSpec) { s.Model.Provider = (*VMModel)(nil) }, "nil"},
		{"foreign in-place settings", func(s *scalegroup.GroupSpec) { s.Model.InPlace = 3 }, "ScaleSetSettings"},
		{"terminate notification out of range", func(s *scalegroup.GroupSpec) { s.Model.InPlace = ScaleSetSettings{TerminateNotificationTimeout: 3} }, "5 and 15"},
		{"no size", func(s *scalegroup.GroupSpec) { s.Model.InstanceType = "" }, "VM size"},
		{"windows", func(s *scalegroup.GroupSpec) { vm := good; vm.OSDisk.OSType = "Windows"; s.Model.Provider = vm }, "Windows"},
		{"unknown mode", func(s *scalegroup.GroupSpec) { vm := good; vm.OrchestrationMode = "Odd"; s.Model.Provider = vm }, "Uniform nor Flexible"},
		{"no image", func(s *scalegroup.GroupSpec) {
			vm := good
			vm.Image = Image{}
			s.Model.Provider = vm
			s.Model.Image = ""
		}, "publisher:offer:sku:version"},
		{"bad spot price", func(s *scalegroup.GroupSpec) { vm := good; vm.Spot = &Spot{MaxPrice: "cheap"}; s.Model.Provider = vm }, "max price"},
		{"bad identity", func(s *scalegroup.GroupSpec) { vm := good; vm.Identity = Identity{Type: "Mine"}; s.Model.Provider = vm }, "identity type"},
		{"user identity without IDs", func(s *scalegroup.GroupSpec) {
			vm := good
			vm.Identity = Identity{Type: "UserAssigned"}
			s.Model.Provider = vm
		}, "names no user-assigned"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mapSpec(good)
			tc.mutate(&s)
			_, err := desiredScaleSet(mapRef, s)
			if !scalegroup.IsInvalid(err) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("got %v, want Invalid saying %q", err, tc.says)
			}
		})
	}
}

func TestImageReference(t *testing.T) {
	for _, tc := range []struct {
		name  string
		image Image
		str   string
		want  armcompute.ImageReference
	}{
		{"resource ID", Image{ID: "/subscriptions/s/images/i"}, "", armcompute.ImageReference{ID: ptr.To("/subscriptions/s/images/i")}},
		{"community gallery", Image{Gallery: "g", Name: "n", Version: "1.30.4"}, "", armcompute.ImageReference{CommunityGalleryImageID: ptr.To("/CommunityGalleries/g/Images/n/Versions/1.30.4")}},
		{"marketplace without version", Image{Publisher: "p", Offer: "o", SKU: "s"}, "", armcompute.ImageReference{Publisher: ptr.To("p"), Offer: ptr.To("o"), SKU: ptr.To("s"), Version: ptr.To("latest")}},
		{"model's image string", Image{}, "p:o:s:1", armcompute.ImageReference{Publisher: ptr.To("p"), Offer: ptr.To("o"), SKU: ptr.To("s"), Version: ptr.To("1")}},
		{"model's gallery string", Image{}, "gallery:g/n/1", armcompute.ImageReference{CommunityGalleryImageID: ptr.To("/CommunityGalleries/g/Images/n/Versions/1")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := imageReference(tc.image, tc.str)
			if err != nil {
				t.Fatal(err)
			}
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(tc.want)
			if string(gb) != string(wb) {
				t.Fatalf("image %s, want %s", gb, wb)
			}
		})
	}
}

func TestCompareScaleSet(t *testing.T) {
	spec := mapSpec(VMModel{Image: Image{ID: "/images/x"}})
	want, err := desiredScaleSet(mapRef, spec)
	if err != nil {
		t.Fatal(err)
	}
	current := func(mutate func(*armcompute.VirtualMachineScaleSet)) *armcompute.VirtualMachineScaleSet {
		v := want.scaleSet
		v.Tags = stringMapPtr(want.tags)
		v.Tags["azure-policy"] = ptr.To("added by someone else")
		v.Location = ptr.To("East US")
		if mutate != nil {
			mutate(&v)
		}
		return &v
	}
	for _, tc := range []struct {
		name string
		why  string
		cur  *armcompute.VirtualMachineScaleSet
		want change
		// invalid: the change is refused.
		invalid bool
	}{
		{name: "absent", why: "a missing scale set is created", cur: nil, want: change{full: true}},
		{name: "same", why: "tags others add and the location's spelling change nothing", cur: current(nil), want: change{}},
		{name: "capacity", why: "only the capacity: a PATCH", cur: current(func(v *armcompute.VirtualMachineScaleSet) {
			v.SKU = &armcompute.SKU{Name: v.SKU.Name, Capacity: ptr.To[int64](5)}
		}), want: change{capacity: true}},
		{name: "model", why: "another model hash: a PUT", cur: current(func(v *armcompute.VirtualMachineScaleSet) {
			v.Tags = map[string]*string{TagModelHash: ptr.To("h0"), "team": ptr.To("a"), TagKubernetesVersion: ptr.To("v1.30.4")}
		}), want: change{full: true}},
		{name: "terminate notification", why: "in-place settings differ: a PUT", cur: current(func(v *armcompute.VirtualMachineScaleSet) {
			p := *v.Properties
			vp := *p.VirtualMachineProfile
			vp.ScheduledEventsProfile = nil
			p.VirtualMachineProfile = &vp
			v.Properties = &p
		}), want: change{full: true}},
		{name: "mode", why: "Azure refuses to change the orchestration mode", cur: current(func(v *armcompute.VirtualMachineScaleSet) {
			p := *v.Properties
			p.OrchestrationMode = ptr.To(armcompute.OrchestrationModeFlexible)
			v.Properties = &p
		}), invalid: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := compareScaleSet(tc.cur, want, spec)
			if tc.invalid {
				if !scalegroup.IsInvalid(got.invalid) {
					t.Fatalf("%s: %+v, want Invalid", tc.why, got)
				}
				return
			}
			if got.invalid != nil || got.full != tc.want.full || got.capacity != tc.want.capacity {
				t.Fatalf("%s: %+v, want %+v", tc.why, got, tc.want)
			}
		})
	}
}

func TestVMState(t *testing.T) {
	status := func(code string) *armcompute.InstanceViewStatus {
		return &armcompute.InstanceViewStatus{Code: ptr.To(code)}
	}
	for _, tc := range []struct {
		name         string
		provisioning string
		statuses     []*armcompute.InstanceViewStatus
		want         scalegroup.InstanceState
		says         string
	}{
		{name: "creating", provisioning: "Creating", want: scalegroup.StateCreating},
		{name: "no instance view", provisioning: "Succeeded", want: scalegroup.StateRunning},
		{name: "running", provisioning: "Succeeded", statuses: []*armcompute.InstanceViewStatus{status("PowerState/running")}, want: scalegroup.StateRunning},
		{name: "starting", provisioning: "Succeeded", statuses: []*armcompute.InstanceViewStatus{status("PowerState/starting")}, want: scalegroup.StateBooting},
		{name: "evicted spot", provisioning: "Succeeded", statuses: []*armcompute.InstanceViewStatus{status("PowerState/deallocated")}, want: scalegroup.StateFailed, says: "deallocated"},
		{name: "updating runs", provisioning: "Updating", want: scalegroup.StateRunning},
		{name: "deleting", provisioning: "Deleting", want: scalegroup.StateDeleting},
		{name: "failed", provisioning: "Failed", statuses: []*armcompute.InstanceViewStatus{{
			Code: ptr.To("ProvisioningState/failed/AllocationFailed"), DisplayStatus: ptr.To("Provisioning failed"), Message: ptr.To("Allocation failed."),
		}}, want: scalegroup.StateFailed, says: "Allocation failed."},
		{name: "failed without view", provisioning: "Failed", want: scalegroup.StateFailed, says: "Failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, msg := vmState(tc.provisioning, tc.statuses)
			if got != tc.want || !strings.Contains(msg, tc.says) || (tc.says == "") != (msg == "") {
				t.Fatalf("%s, %q; want %s saying %q", got, msg, tc.want, tc.says)
			}
		})
	}
}

func TestParseRef(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ref   scalegroup.Ref
		valid bool
	}{
		{"resource group", scalegroup.Ref{Name: "pool-0_a.b", Scope: "/subscriptions/s/resourceGroups/rg"}, true},
		{"any case", scalegroup.Ref{Name: "p", Scope: "/Subscriptions/s/resourcegroups/My.RG(1)"}, true},
		{"64 characters", scalegroup.Ref{Name: strings.Repeat("a", 64), Scope: "/subscriptions/s/resourceGroups/rg"}, true},
		{"65 characters", scalegroup.Ref{Name: strings.Repeat("a", 65), Scope: "/subscriptions/s/resourceGroups/rg"}, false},
		{"ends with a hyphen", scalegroup.Ref{Name: "pool-", Scope: "/subscriptions/s/resourceGroups/rg"}, false},
		{"starts with an underscore", scalegroup.Ref{Name: "_pool", Scope: "/subscriptions/s/resourceGroups/rg"}, false},
		{"subscription only", scalegroup.Ref{Name: "p", Scope: "/subscriptions/s"}, false},
		{"trailing slash", scalegroup.Ref{Name: "p", Scope: "/subscriptions/s/resourceGroups/rg/"}, false},
		{"empty scope", scalegroup.Ref{Name: "p"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseRef(tc.ref)
			if (err == nil) != tc.valid || err != nil && !scalegroup.IsInvalid(err) {
				t.Fatalf("parseRef(%+v) = %v, valid %v", tc.ref, err, tc.valid)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	date := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{"none", http.Header{}, 0},
		{"seconds", http.Header{"Retry-After": {"17"}}, 17 * time.Second},
		{"milliseconds first", http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"17"}}, 1500 * time.Millisecond},
		{"HTTP date, relative to the response's", http.Header{"Retry-After": {date.Add(30 * time.Second).Format(http.TimeFormat)}, "Date": {date.Format(http.TimeFormat)}}, 30 * time.Second},
		{"HTTP date without the response's", http.Header{"Retry-After": {date.Format(http.TimeFormat)}}, 0},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := retryAfter(&http.Response{Header: tc.header}); got != tc.want {
				t.Fatalf("retryAfter(%v) = %s, want %s", tc.header, got, tc.want)
			}
		})
	}
}
