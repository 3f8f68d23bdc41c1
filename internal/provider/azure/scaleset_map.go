package azure

import (
	"encoding/base64"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	"k8s.io/utils/ptr"

	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// This file maps scalegroup's model (with VMModel and ScaleSetSettings)
// onto armcompute's scale set, and Azure's VMs onto scalegroup.Instance.

// desired is the scale set a GroupSpec asks for.
type desired struct {
	scaleSet armcompute.VirtualMachineScaleSet
	mode     armcompute.OrchestrationMode
	tags     map[string]string
	settings ScaleSetSettings
	location string
}

// desiredScaleSet maps a spec onto the scale set to PUT, without I/O.
// Errors are Invalid: the spec cannot be expressed.
func desiredScaleSet(ref scalegroup.Ref, spec scalegroup.GroupSpec) (desired, error) {
	m := spec.Model
	vm, ok, err := kit.ModelPart[VMModel](m.Provider, "the model's Azure part")
	switch {
	case err != nil:
		return desired{}, err
	case !ok:
		return desired{}, scalegroup.NewInvalid("the model's Azure part (azure.VMModel) is nil")
	}
	settings, _, err := kit.ModelPart[ScaleSetSettings](m.InPlace, "the scale set's in-place settings")
	if err != nil {
		return desired{}, err
	}
	if t := settings.TerminateNotificationTimeout; t != 0 && (t < 5 || t > 15) {
		return desired{}, scalegroup.NewInvalid(fmt.Sprintf("terminateNotificationTimeout %d is not within 5 and 15 minutes", t))
	}
	if m.InstanceType == "" {
		return desired{}, scalegroup.NewInvalid("the model has no VM size (instance type)")
	}
	if spec.Capacity < 0 {
		return desired{}, scalegroup.NewInvalid(fmt.Sprintf("capacity %d is negative", spec.Capacity))
	}
	if strings.EqualFold(vm.OSDisk.OSType, string(armcompute.OperatingSystemTypesWindows)) {
		return desired{}, scalegroup.NewInvalid("Windows scale sets are not supported yet: use a Linux image (osDisk.osType Linux)")
	}

	mode := armcompute.OrchestrationModeUniform
	switch {
	case vm.OrchestrationMode == "", strings.EqualFold(vm.OrchestrationMode, string(armcompute.OrchestrationModeUniform)):
	case strings.EqualFold(vm.OrchestrationMode, string(armcompute.OrchestrationModeFlexible)):
		mode = armcompute.OrchestrationModeFlexible
	default:
		return desired{}, scalegroup.NewInvalid(fmt.Sprintf("orchestration mode %q is neither Uniform nor Flexible", vm.OrchestrationMode))
	}

	tags := maps.Clone(m.Tags)
	if tags == nil {
		tags = map[string]string{}
	}
	if spec.ModelHash != "" {
		tags[TagModelHash] = spec.ModelHash
	}
	if m.Version != "" {
		tags[TagKubernetesVersion] = m.Version
	}

	img, plan, err := imageReference(vm.Image, m.Image)
	if err != nil {
		return desired{}, err
	}
	profile, err := vmProfile(ref, spec, vm, img, mode, settings)
	if err != nil {
		return desired{}, err
	}
	props := &armcompute.VirtualMachineScaleSetProperties{
		OrchestrationMode:     ptr.To(mode),
		VirtualMachineProfile: profile,
		// Beyond 100 VMs; Flexible requires it.
		SinglePlacementGroup: ptr.To(false),
	}
	if mode == armcompute.OrchestrationModeUniform {
		// The engine picks every VM to create and delete.
		props.UpgradePolicy = &armcompute.UpgradePolicy{Mode: ptr.To(armcompute.UpgradeModeManual)}
		props.Overprovision = ptr.To(false)
	}
	switch {
	case vm.PlatformFaultDomainCount > 0:
		props.PlatformFaultDomainCount = ptr.To(vm.PlatformFaultDomainCount)
	case mode == armcompute.OrchestrationModeFlexible:
		props.PlatformFaultDomainCount = ptr.To[int32](1) // Flexible requires it
	}
	if vm.ZoneBalance != nil && len(m.Zones) > 0 {
		props.ZoneBalance = ptr.To(*vm.ZoneBalance)
	}
	if vm.UltraSSDEnabled != nil {
		props.AdditionalCapabilities = &armcompute.AdditionalCapabilities{UltraSSDEnabled: ptr.To(*vm.UltraSSDEnabled)}
	}
	v := armcompute.VirtualMachineScaleSet{
		SKU: &armcompute.SKU{
			Name:     ptr.To(m.InstanceType),
			Tier:     ptr.To("Standard"),
			Capacity: ptr.To(int64(spec.Capacity)),
		},
		Tags:       stringMapPtr(tags),
		Zones:      to.SliceOfPtrs(m.Zones...),
		Plan:       plan,
		Properties: props,
	}
	if ref.Location != "" {
		v.Location = ptr.To(ref.Location)
	}
	if id, err := scaleSetIdentity(vm.Identity); err != nil {
		return desired{}, err
	} else if id != nil {
		v.Identity = id
	}
	return desired{scaleSet: v, mode: mode, tags: tags, settings: settings, location: ref.Location}, nil
}

// vmProfile is the scale set's VM model.
func vmProfile(ref scalegroup.Ref, spec scalegroup.GroupSpec, vm VMModel, img *armcompute.ImageReference, mode armcompute.OrchestrationMode, settings ScaleSetSettings) (*armcompute.VirtualMachineScaleSetVMProfile, error) {
	admin := vm.AdminUsername
	if admin == "" {
		admin = "capi"
	}
	prefix := vm.ComputerNamePrefix
	if prefix == "" {
		prefix = defaultComputerNamePrefix(ref.Name)
	}
	linux := &armcompute.LinuxConfiguration{DisablePasswordAuthentication: ptr.To(true)}
	if vm.SSHPublicKey != "" {
		linux.SSH = &armcompute.SSHConfiguration{PublicKeys: []*armcompute.SSHPublicKey{{
			Path:    ptr.To("/home/" + admin + "/.ssh/authorized_keys"),
			KeyData: ptr.To(vm.SSHPublicKey),
		}}}
	}
	os := &armcompute.VirtualMachineScaleSetOSProfile{
		ComputerNamePrefix: ptr.To(prefix),
		AdminUsername:      ptr.To(admin),
		LinuxConfiguration: linux,
	}
	if len(spec.Model.CustomData) > 0 {
		os.CustomData = ptr.To(base64.StdEncoding.EncodeToString(spec.Model.CustomData))
	}
	p := &armcompute.VirtualMachineScaleSetVMProfile{
		OSProfile: os,
		StorageProfile: &armcompute.VirtualMachineScaleSetStorageProfile{
			ImageReference: img,
			OSDisk:         scaleSetOSDisk(vm.OSDisk),
		},
		NetworkProfile: networkProfile(ref, vm, mode),
	}
	for _, d := range vm.DataDisks {
		dd := &armcompute.VirtualMachineScaleSetDataDisk{
			CreateOption: ptr.To(armcompute.DiskCreateOptionTypesEmpty),
			Lun:          ptr.To(d.Lun),
			DiskSizeGB:   ptr.To(d.SizeGB),
		}
		if d.Caching != "" {
			dd.Caching = ptr.To(armcompute.CachingTypes(d.Caching))
		}
		dd.ManagedDisk = managedDisk(d.StorageAccountType, d.DiskEncryptionSetID)
		p.StorageProfile.DataDisks = append(p.StorageProfile.DataDisks, dd)
	}
	if s := vm.Spot; s != nil {
		p.Priority = ptr.To(armcompute.VirtualMachinePriorityTypesSpot)
		p.EvictionPolicy = ptr.To(armcompute.VirtualMachineEvictionPolicyTypesDeallocate)
		if s.EvictionPolicy != "" {
			p.EvictionPolicy = ptr.To(armcompute.VirtualMachineEvictionPolicyTypes(s.EvictionPolicy))
		}
		price := -1.0
		if s.MaxPrice != "" {
			f, err := strconv.ParseFloat(s.MaxPrice, 64)
			if err != nil || f < 0 && f != -1 {
				return nil, scalegroup.NewInvalid(fmt.Sprintf("spot max price %q is not a price in US dollars (or -1)", s.MaxPrice))
			}
			price = f
		}
		p.BillingProfile = &armcompute.BillingProfile{MaxPrice: ptr.To(price)}
	}
	if s := vm.Security; s != nil {
		sp := &armcompute.SecurityProfile{EncryptionAtHost: s.EncryptionAtHost}
		if s.SecurityType != "" {
			sp.SecurityType = ptr.To(armcompute.SecurityTypes(s.SecurityType))
		}
		if s.SecureBoot != nil || s.VTPM != nil {
			sp.UefiSettings = &armcompute.UefiSettings{SecureBootEnabled: s.SecureBoot, VTpmEnabled: s.VTPM}
		}
		p.SecurityProfile = sp
	}
	if len(vm.Extensions) > 0 {
		p.ExtensionProfile = &armcompute.VirtualMachineScaleSetExtensionProfile{}
		for _, x := range vm.Extensions {
			props := &armcompute.VirtualMachineScaleSetExtensionProperties{
				Publisher:          ptr.To(x.Publisher),
				Type:               ptr.To(x.Name),
				TypeHandlerVersion: ptr.To(x.Version),
			}
			if len(x.Settings) > 0 {
				props.Settings = x.Settings
			}
			if len(x.ProtectedSettings) > 0 {
				props.ProtectedSettings = x.ProtectedSettings
			}
			p.ExtensionProfile.Extensions = append(p.ExtensionProfile.Extensions, &armcompute.VirtualMachineScaleSetExtension{Name: ptr.To(x.Name), Properties: props})
		}
	}
	switch vm.BootDiagnostics {
	case "":
	case "Managed":
		p.DiagnosticsProfile = &armcompute.DiagnosticsProfile{BootDiagnostics: &armcompute.BootDiagnostics{Enabled: ptr.To(true)}}
	default:
		p.DiagnosticsProfile = &armcompute.DiagnosticsProfile{BootDiagnostics: &armcompute.BootDiagnostics{Enabled: ptr.To(true), StorageURI: ptr.To(vm.BootDiagnostics)}}
	}
	if t := settings.TerminateNotificationTimeout; t > 0 {
		p.ScheduledEventsProfile = &armcompute.ScheduledEventsProfile{TerminateNotificationProfile: &armcompute.TerminateNotificationProfile{
			Enable: ptr.To(true), NotBeforeTimeout: ptr.To(fmt.Sprintf("PT%dM", t)),
		}}
	}
	return p, nil
}

// defaultComputerNamePrefix is a host name prefix from the scale set's
// name when the model gives none: lower-case letters, digits and '-'.
func defaultComputerNamePrefix(name string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(name) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' && b.Len() > 0 {
			b.WriteRune(c)
		}
	}
	s := b.String()
	if len(s) > 9 {
		s = s[:9]
	}
	if s = strings.TrimRight(s, "-"); s == "" {
		s = "vm"
	}
	return s
}

// imageReference maps the model's image: VMModel.Image, else the model's
// Image string (a resource ID, gallery:<gallery>/<name>/<version> or
// publisher:offer:sku:version).
func imageReference(i Image, s string) (*armcompute.ImageReference, *armcompute.Plan, error) {
	if i == (Image{}) {
		switch {
		case strings.HasPrefix(s, "/"):
			i.ID = s
		case strings.HasPrefix(s, "gallery:"):
			parts := strings.Split(strings.TrimPrefix(s, "gallery:"), "/")
			if len(parts) != 3 {
				return nil, nil, scalegroup.NewInvalid(fmt.Sprintf("image %q is not gallery:<gallery>/<name>/<version>", s))
			}
			i.Gallery, i.Name, i.Version = parts[0], parts[1], parts[2]
		default:
			parts := strings.Split(s, ":")
			if len(parts) != 4 {
				return nil, nil, scalegroup.NewInvalid(fmt.Sprintf("image %q is neither a resource ID nor publisher:offer:sku:version", s))
			}
			i.Publisher, i.Offer, i.SKU, i.Version = parts[0], parts[1], parts[2], parts[3]
		}
	}
	var plan *armcompute.Plan
	if i.ThirdParty {
		plan = &armcompute.Plan{Name: ptr.To(i.SKU), Product: ptr.To(i.Offer), Publisher: ptr.To(i.Publisher)}
	}
	switch {
	case i.ID != "":
		return &armcompute.ImageReference{ID: ptr.To(i.ID)}, plan, nil
	case i.Gallery != "":
		if i.Name == "" || i.Version == "" {
			return nil, nil, scalegroup.NewInvalid(fmt.Sprintf("gallery image %s names no image or version", i.String()))
		}
		return &armcompute.ImageReference{CommunityGalleryImageID: ptr.To(
			"/CommunityGalleries/" + i.Gallery + "/Images/" + i.Name + "/Versions/" + i.Version)}, plan, nil
	case i.Publisher != "" && i.Offer != "" && i.SKU != "":
		version := i.Version
		if version == "" {
			version = "latest"
		}
		return &armcompute.ImageReference{Publisher: ptr.To(i.Publisher), Offer: ptr.To(i.Offer), SKU: ptr.To(i.SKU), Version: ptr.To(version)}, plan, nil
	}
	return nil, nil, scalegroup.NewInvalid("the model names no image: an image ID, a gallery image or a Marketplace publisher, offer and SKU")
}

// managedDisk is a disk's managed disk parameters: its storage account
// type and disk encryption set, nil when it names neither (Azure's
// defaults).
func managedDisk(storageAccountType, encryptionSetID string) *armcompute.VirtualMachineScaleSetManagedDiskParameters {
	if storageAccountType == "" && encryptionSetID == "" {
		return nil
	}
	md := &armcompute.VirtualMachineScaleSetManagedDiskParameters{}
	if storageAccountType != "" {
		md.StorageAccountType = ptr.To(armcompute.StorageAccountTypes(storageAccountType))
	}
	if encryptionSetID != "" {
		md.DiskEncryptionSet = &armcompute.DiskEncryptionSetParameters{ID: ptr.To(encryptionSetID)}
	}
	return md
}

// scaleSetOSDisk is the VMs' OS disk, created from the image.
func scaleSetOSDisk(d OSDisk) *armcompute.VirtualMachineScaleSetOSDisk {
	out := &armcompute.VirtualMachineScaleSetOSDisk{
		CreateOption: ptr.To(armcompute.DiskCreateOptionTypesFromImage),
		OSType:       ptr.To(armcompute.OperatingSystemTypesLinux),
	}
	if d.SizeGB > 0 {
		out.DiskSizeGB = ptr.To(d.SizeGB)
	}
	if d.Caching != "" {
		out.Caching = ptr.To(armcompute.CachingTypes(d.Caching))
	}
	out.ManagedDisk = managedDisk(d.StorageAccountType, d.DiskEncryptionSetID)
	if d.EphemeralPlacement != "" {
		out.DiffDiskSettings = &armcompute.DiffDiskSettings{Option: ptr.To(armcompute.DiffDiskOptionsLocal)}
		if !strings.EqualFold(d.EphemeralPlacement, string(armcompute.DiffDiskOptionsLocal)) {
			out.DiffDiskSettings.Placement = ptr.To(armcompute.DiffDiskPlacement(d.EphemeralPlacement))
		}
	}
	return out
}

// networkProfile is the VMs' NICs: VMModel.NetworkInterfaces, else one NIC
// in SubnetID; nil when the model names no subnet.
func networkProfile(ref scalegroup.Ref, vm VMModel, mode armcompute.OrchestrationMode) *armcompute.VirtualMachineScaleSetNetworkProfile {
	nics := vm.NetworkInterfaces
	if len(nics) == 0 && vm.SubnetID != "" {
		nics = []NetworkInterface{{SubnetID: vm.SubnetID, AcceleratedNetworking: vm.AcceleratedNetworking}}
	}
	if len(nics) == 0 {
		return nil
	}
	p := &armcompute.VirtualMachineScaleSetNetworkProfile{}
	if mode == armcompute.OrchestrationModeFlexible {
		p.NetworkAPIVersion = ptr.To(armcompute.NetworkAPIVersionTwoThousandTwenty1101)
	}
	for i, n := range nics {
		cfg := &armcompute.VirtualMachineScaleSetNetworkConfigurationProperties{
			Primary:                     ptr.To(i == 0),
			EnableAcceleratedNetworking: n.AcceleratedNetworking,
		}
		for j := range max(n.PrivateIPConfigs, 1) {
			cfg.IPConfigurations = append(cfg.IPConfigurations, &armcompute.VirtualMachineScaleSetIPConfiguration{
				Name: ptr.To(fmt.Sprintf("ipconfig%d", j)),
				Properties: &armcompute.VirtualMachineScaleSetIPConfigurationProperties{
					Primary:                 ptr.To(j == 0),
					PrivateIPAddressVersion: ptr.To(armcompute.IPVersionIPv4),
					Subnet:                  &armcompute.APIEntityReference{ID: ptr.To(n.SubnetID)},
				},
			})
		}
		p.NetworkInterfaceConfigurations = append(p.NetworkInterfaceConfigurations, &armcompute.VirtualMachineScaleSetNetworkConfiguration{
			Name:       ptr.To(fmt.Sprintf("%s-nic-%d", ref.Name, i)),
			Properties: cfg,
		})
	}
	return p
}

// scaleSetIdentity is the VMs' managed identity; nil leaves Azure's.
func scaleSetIdentity(id Identity) (*armcompute.VirtualMachineScaleSetIdentity, error) {
	if id.Type == "" {
		return nil, nil
	}
	for _, t := range armcompute.PossibleResourceIdentityTypeValues() {
		if !strings.EqualFold(id.Type, string(t)) {
			continue
		}
		out := &armcompute.VirtualMachineScaleSetIdentity{Type: ptr.To(t)}
		if strings.Contains(string(t), "UserAssigned") {
			if len(id.UserAssigned) == 0 {
				return nil, scalegroup.NewInvalid("identity type " + id.Type + " names no user-assigned identities")
			}
			out.UserAssignedIdentities = map[string]*armcompute.UserAssignedIdentitiesValue{}
			for _, u := range id.UserAssigned {
				out.UserAssignedIdentities[u] = &armcompute.UserAssignedIdentitiesValue{}
			}
		}
		return out, nil
	}
	return nil, scalegroup.NewInvalid(fmt.Sprintf("identity type %q is not None, SystemAssigned, UserAssigned or 'SystemAssigned, UserAssigned'", id.Type))
}

// change is what Apply must write.
type change struct {
	// full: PUT the whole scale set (created, or its model, tags or
	// in-place settings differ).
	full bool
	// capacity: only the capacity differs (PATCH).
	capacity bool
	// invalid: the spec asks for what Azure refuses to change.
	invalid error
}

// compareScaleSet says what to write to turn cur (nil when absent) into
// want. Custom data is not compared: Azure never returns it (see the
// bootstrap data policy in package scalegroup). Tags set by others (Azure
// Policy, users) are left alone: the spec's tags must be present with
// their values.
func compareScaleSet(cur *armcompute.VirtualMachineScaleSet, want desired, spec scalegroup.GroupSpec) change {
	if cur == nil {
		if want.location == "" {
			return change{invalid: scalegroup.NewInvalid("no location to create the scale set in: set the pool's or its cluster's location")}
		}
		return change{full: true}
	}
	mode := armcompute.OrchestrationModeUniform
	if isFlexible(cur) {
		mode = armcompute.OrchestrationModeFlexible
	}
	if mode != want.mode {
		return change{invalid: scalegroup.NewInvalid(fmt.Sprintf(
			"the scale set's orchestration mode is %s and the pool asks for %s: Azure cannot change a scale set's orchestration mode; create a new pool instead", mode, want.mode))}
	}
	if loc := ptr.Deref(cur.Location, ""); want.location != "" && normalizeLocation(loc) != normalizeLocation(want.location) {
		return change{invalid: scalegroup.NewInvalid(fmt.Sprintf(
			"the scale set is in %s and the pool asks for %s: Azure cannot move a scale set; create a new pool instead", loc, want.location))}
	}
	var ch change
	for k, v := range want.tags {
		if got, ok := cur.Tags[k]; !ok || got == nil || *got != v {
			ch.full = true
		}
	}
	if terminateNotification(cur) != want.settings.TerminateNotificationTimeout {
		ch.full = true
	}
	if cur.SKU == nil || ptr.Deref(cur.SKU.Capacity, -1) != int64(spec.Capacity) {
		ch.capacity = true
	}
	return ch
}

// normalizeLocation is a location's name as ARM compares them ("East US"
// is eastus).
func normalizeLocation(l string) string { return strings.ToLower(strings.ReplaceAll(l, " ", "")) }

// terminateNotification is the scale set's terminate notification timeout
// in minutes, 0 when disabled.
func terminateNotification(v *armcompute.VirtualMachineScaleSet) int32 {
	if v.Properties == nil || v.Properties.VirtualMachineProfile == nil || v.Properties.VirtualMachineProfile.ScheduledEventsProfile == nil {
		return 0
	}
	t := v.Properties.VirtualMachineProfile.ScheduledEventsProfile.TerminateNotificationProfile
	if t == nil || !ptr.Deref(t.Enable, false) {
		return 0
	}
	s := strings.ToUpper(ptr.Deref(t.NotBeforeTimeout, ""))
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(s, "PT"), "M"))
	if err != nil || !strings.HasPrefix(s, "PT") || !strings.HasSuffix(s, "M") {
		return -1 // not ours: rewrite it
	}
	return int32(n)
}

// isFlexible reports whether a scale set is in Flexible orchestration mode.
func isFlexible(v *armcompute.VirtualMachineScaleSet) bool {
	return v.Properties != nil && v.Properties.OrchestrationMode != nil &&
		strings.EqualFold(string(*v.Properties.OrchestrationMode), string(armcompute.OrchestrationModeFlexible))
}

// tagValue returns a tag's value, "" when absent.
func tagValue(tags map[string]*string, k string) string {
	return ptr.Deref(tags[k], "")
}

// uniformInstance maps a Uniform scale set VM. A VM with the scale set's
// latest model has the scale set's model hash; an older one carries the
// tags of the model it was created from.
func uniformInstance(vm *armcompute.VirtualMachineScaleSetVM, groupHash string) scalegroup.Instance {
	p := vm.Properties
	if p == nil {
		p = &armcompute.VirtualMachineScaleSetVMProperties{}
	}
	var statuses []*armcompute.InstanceViewStatus
	if p.InstanceView != nil {
		statuses = p.InstanceView.Statuses
	}
	in := vmInstance(vm.InstanceID, vm.ID, vm.Tags, vm.Zones, p.ProvisioningState, p.TimeCreated, statuses)
	if ptr.Deref(p.LatestModelApplied, false) && groupHash != "" {
		in.ModelHash = groupHash
	}
	return in
}

// flexibleInstance maps a Flexible scale set VM: its ID is its name, its
// model hash its own tag.
func flexibleInstance(vm *armcompute.VirtualMachine, groupHash string) scalegroup.Instance {
	p := vm.Properties
	if p == nil {
		p = &armcompute.VirtualMachineProperties{}
	}
	var statuses []*armcompute.InstanceViewStatus
	if p.InstanceView != nil {
		statuses = p.InstanceView.Statuses
	}
	in := vmInstance(vm.Name, vm.ID, vm.Tags, vm.Zones, p.ProvisioningState, p.TimeCreated, statuses)
	if in.ModelHash == "" {
		in.ModelHash = groupHash // a VM without tags: created by the current model
	}
	return in
}

// vmInstance maps what a Uniform and a Flexible VM have alike: its ID, its
// resource ID, its model hash tag, its zone, creation time and state.
func vmInstance(id, resourceID *string, tags map[string]*string, zones []*string, provisioning *string, created *time.Time, statuses []*armcompute.InstanceViewStatus) scalegroup.Instance {
	in := scalegroup.Instance{
		ID:         ptr.Deref(id, ""),
		ProviderID: "azure://" + ptr.Deref(resourceID, ""),
		ModelHash:  tagValue(tags, TagModelHash),
		CreatedAt:  timeOf(created),
	}
	if len(zones) > 0 {
		in.Zone = ptr.Deref(zones[0], "")
	}
	in.State, in.Message = vmState(ptr.Deref(provisioning, ""), statuses)
	return in
}

// vmState maps a VM's provisioningState and, when the instance view was
// returned, its power state: Creating; Deleting; Failed (with the
// provisioning status's message); a provisioned VM starting is Booting, a
// stopped or deallocated one (an evicted Spot VM) Failed, as it will not
// run again by itself; otherwise Running.
func vmState(provisioning string, statuses []*armcompute.InstanceViewStatus) (scalegroup.InstanceState, string) {
	var power, failure string
	for _, s := range statuses {
		if s == nil {
			continue
		}
		code := ptr.Deref(s.Code, "")
		switch {
		case strings.HasPrefix(code, "PowerState/"):
			power = strings.TrimPrefix(code, "PowerState/")
		case strings.HasPrefix(code, "ProvisioningState/failed"):
			failure = strings.TrimSpace(ptr.Deref(s.DisplayStatus, "") + ": " + ptr.Deref(s.Message, ""))
		}
	}
	switch strings.ToLower(provisioning) {
	case "creating":
		return scalegroup.StateCreating, ""
	case "deleting":
		return scalegroup.StateDeleting, ""
	case "failed":
		if failure == "" {
			failure = "Azure reports the VM's provisioning state Failed"
		}
		return scalegroup.StateFailed, failure
	}
	switch power {
	case "starting":
		return scalegroup.StateBooting, ""
	case "stopping", "stopped", "deallocating", "deallocated":
		return scalegroup.StateFailed, "the VM is " + power + " (an evicted Spot VM, or stopped by someone): delete it to replace it"
	}
	return scalegroup.StateRunning, ""
}

// stringMapPtr is m as ARM's tags.
func stringMapPtr(m map[string]string) map[string]*string {
	out := make(map[string]*string, len(m))
	for k, v := range m {
		out[k] = ptr.To(v)
	}
	return out
}
