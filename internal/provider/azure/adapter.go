package azure

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// ProviderName labels the Azure provider in metrics, events and logs.
const ProviderName = "azure"

// Azure's limits on the names mpool derives.
const (
	// maxScaleSetName is the longest scale set name Azure accepts.
	maxScaleSetName = 64
	// maxComputerNamePrefix keeps a Linux host name (prefix + 6 digits)
	// within its 64 characters; 58 is Azure's documented limit.
	maxComputerNamePrefix = 58
	// adminUsername is the VMs' admin user, as CAPZ's.
	adminUsername = "capi"
)

// Tags mpool (like CAPZ) puts on a scale set.
const (
	// TagClusterPrefix + the cluster's name, value "owned": the cluster
	// owns the resource (CAPZ's owned-cluster tag).
	TagClusterPrefix = "sigs.k8s.io_cluster-api-provider-azure_cluster_"
	// TagRole is the resource's role in the cluster ("node").
	TagRole = "sigs.k8s.io_cluster-api-provider-azure_role"
)

// Adapter maps AzureMachinePool and AzureMachinePoolMachine onto the
// infrapool engine; their scale sets are placed by the AzureCluster.
type Adapter struct {
	kit.Objects[infrav1.AzureMachinePool, infrav1.AzureMachinePoolMachine, infrav1.AzureMachinePoolMachineList, infrav1.AzureCluster]
}

var _ contract.Adapter = Adapter{}

// Kinds implements contract.Adapter.
func (a Adapter) Kinds() contract.Kinds {
	return a.Named(contract.Kinds{Provider: ProviderName, PoolFinalizer: infrav1.AzureMachinePoolFinalizer, InstanceFinalizer: infrav1.AzureMachinePoolMachineFinalizer})
}

// GroupRef implements contract.Adapter: the scale set lives in the
// AzureCluster's subscription and resource group, in the pool's location
// (else the AzureCluster's), reached with the AzureCluster's identity.
func (a Adapter) GroupRef(p contract.Pool, infra client.Object) (scalegroup.Ref, error) {
	pool := p.(*infrav1.AzureMachinePool)
	ac, err := a.InfraCluster(infra)
	if err != nil {
		return scalegroup.Ref{}, err
	}
	if ac.Spec.SubscriptionID == "" {
		return scalegroup.Ref{}, fmt.Errorf("AzureCluster %s has no spec.subscriptionID: set the subscription the scale set is created in", ac.Name)
	}
	rg := ac.Spec.ResourceGroup
	if rg == "" {
		rg = ac.Name // CAPZ's default: the resource group is named after the cluster
	}
	location := pool.Spec.Location
	if location == "" {
		location = ac.Spec.Location
	}
	if location == "" {
		return scalegroup.Ref{}, fmt.Errorf("neither the AzureMachinePool's spec.location nor AzureCluster %s's spec.location is set: set the region of the scale set", ac.Name)
	}
	ref := scalegroup.Ref{
		Name:      ScaleSetName(pool.Namespace, pool.Name),
		Scope:     "/subscriptions/" + ac.Spec.SubscriptionID + "/resourceGroups/" + rg,
		Location:  location,
		Namespace: pool.Namespace,
	}
	if id := ac.Spec.IdentityRef; id != nil && id.Name != "" {
		if id.Kind != "" && id.Kind != infrav1.AzureClusterIdentityKind {
			return scalegroup.Ref{}, fmt.Errorf("AzureCluster %s's spec.identityRef is a %s; mpool reads AzureClusterIdentity", ac.Name, id.Kind)
		}
		ns := id.Namespace
		if ns == "" {
			ns = ac.Namespace
		}
		ref.Credentials = ns + "/" + id.Name
	}
	return ref, nil
}

// ScaleSetName is the scale set of the AzureMachinePool namespace/name:
// the pool's name when that is a valid scale set name shorter than the
// limit, as CAPZ names it, made unique per namespace with a short hash
// (see contract.GroupName).
func ScaleSetName(namespace, name string) string {
	return contract.GroupName(namespace, name, maxScaleSetName)
}

// computerNamePrefix is the VMs' host name prefix: the pool's name (so
// that Nodes are named <pool><6 digits>, as CAPZ's), lower-cased, limited
// to letters, digits and '-'.
func computerNamePrefix(pool string) string {
	b := []byte(strings.ToLower(pool))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			b[i] = '-'
		}
	}
	s := strings.Trim(string(b), "-")
	if len(s) > maxComputerNamePrefix {
		s = strings.TrimRight(s[:maxComputerNamePrefix], "-")
	}
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		s = "vm" + s
	}
	return s
}

// minFlexibleVersion is the oldest Kubernetes version CAPZ allows Flexible
// scale sets for.
var minFlexibleVersion = version.MustParseSemantic("v1.26.0")

// Desired implements contract.Adapter.
func (a Adapter) Desired(p contract.Pool, owner contract.Owner) (contract.Desired, error) {
	pool := p.(*infrav1.AzureMachinePool)
	ac, err := a.InfraCluster(owner.InfraCluster)
	if err != nil {
		return contract.Desired{}, err
	}
	t := pool.Spec.Template
	if t.VMSize == "" {
		return contract.Desired{}, fmt.Errorf("spec.template.vmSize is required: set the VM size (for example Standard_D2s_v3)")
	}
	mode := string(pool.Spec.OrchestrationMode)
	if mode == "" {
		mode = string(infrav1.UniformOrchestrationMode)
	}
	if mode == string(infrav1.FlexibleOrchestrationMode) {
		v, err := version.ParseSemantic(owner.Version)
		if err != nil || v.LessThan(minFlexibleVersion) {
			return contract.Desired{}, fmt.Errorf("orchestrationMode Flexible needs Kubernetes %s or later, and the MachinePool's spec.template.spec.version is %q: raise the version or use orchestrationMode Uniform", "v1.26.0", owner.Version)
		}
	}
	img, err := image(t.Image, owner.Version)
	if err != nil {
		return contract.Desired{}, err
	}
	vm := VMModel{
		OrchestrationMode:        mode,
		ComputerNamePrefix:       computerNamePrefix(pool.Name),
		AdminUsername:            adminUsername,
		SSHPublicKey:             sshKey(t.SSHPublicKey),
		Image:                    img,
		OSDisk:                   osDisk(t.OSDisk),
		AcceleratedNetworking:    t.AcceleratedNetworking,
		Identity:                 identity(pool),
		BootDiagnostics:          bootDiagnostics(t.Diagnostics),
		PlatformFaultDomainCount: ptr.Deref(pool.Spec.PlatformFaultDomainCount, 0),
		ZoneBalance:              pool.Spec.ZoneBalance,
		UltraSSDEnabled:          ultraSSD(t),
	}
	subnet := t.SubnetName
	if subnet == "" {
		if s := ac.NodeSubnet(); s != nil {
			subnet = s.Name
		}
	}
	if subnet != "" {
		vm.SubnetID = subnetID(ac, subnet)
	}
	for _, d := range t.DataDisks {
		dd := DataDisk{NameSuffix: d.NameSuffix, SizeGB: d.DiskSizeGB, Lun: ptr.Deref(d.Lun, 0), Caching: d.CachingType}
		if md := d.ManagedDisk; md != nil {
			dd.StorageAccountType = md.StorageAccountType
			if md.DiskEncryptionSet != nil {
				dd.DiskEncryptionSetID = md.DiskEncryptionSet.ID
			}
		}
		vm.DataDisks = append(vm.DataDisks, dd)
	}
	for _, n := range t.NetworkInterfaces {
		name := n.SubnetName
		if name == "" {
			name = subnet
		}
		vm.NetworkInterfaces = append(vm.NetworkInterfaces, NetworkInterface{SubnetID: subnetID(ac, name), PrivateIPConfigs: n.PrivateIPConfigs, AcceleratedNetworking: n.AcceleratedNetworking})
	}
	if s := t.SpotVMOptions; s != nil {
		vm.Spot = &Spot{EvictionPolicy: ptr.Deref(s.EvictionPolicy, "")}
		if s.MaxPrice != nil {
			vm.Spot.MaxPrice = s.MaxPrice.AsDec().String()
		}
	}
	if s := t.SecurityProfile; s != nil {
		vm.Security = &Security{EncryptionAtHost: s.EncryptionAtHost, SecurityType: s.SecurityType}
		if u := s.UefiSettings; u != nil {
			vm.Security.SecureBoot, vm.Security.VTPM = u.SecureBootEnabled, u.VTpmEnabled
		}
	}
	for _, x := range t.VMExtensions {
		vm.Extensions = append(vm.Extensions, Extension{Name: x.Name, Publisher: x.Publisher, Version: x.Version, Settings: x.Settings, ProtectedSettings: x.ProtectedSettings})
	}

	m := scalegroup.Model{
		InstanceType: t.VMSize,
		Image:        img.String(),
		Version:      owner.Version,
		CustomData:   owner.BootstrapData,
		Tags:         tags(pool, ac, owner),
		Provider:     vm,
	}
	if owner.MachinePool != nil {
		m.Zones = slices.Clone(owner.MachinePool.Spec.FailureDomains)
	}
	if n := ptr.Deref(t.TerminateNotificationTimeout, 0); n > 0 {
		m.InPlace = ScaleSetSettings{TerminateNotificationTimeout: n}
	}
	view, err := Adapter{}.ReadPool(pool)
	if err != nil {
		return contract.Desired{}, err
	}
	return contract.Desired{Model: m, Strategy: view.Rollout.Strategy}, nil
}

// tags are the AzureCluster's and the pool's additional tags and the tags
// of the owning cluster, role and pool.
func tags(pool *infrav1.AzureMachinePool, ac *infrav1.AzureCluster, owner contract.Owner) map[string]string {
	out := kit.PoolTags(pool, ac.Spec.AdditionalTags, pool.Spec.AdditionalTags)
	if cluster := owner.ClusterName(); cluster != "" {
		out[TagClusterPrefix+cluster] = "owned"
	}
	out[TagRole] = "node"
	return out
}

// subnetID is the resource ID of a subnet of the AzureCluster's vnet.
func subnetID(ac *infrav1.AzureCluster, subnet string) string {
	rg := ac.Spec.NetworkSpec.Vnet.ResourceGroup
	if rg == "" {
		rg = ac.Spec.ResourceGroup
	}
	if rg == "" {
		rg = ac.Name
	}
	vnet := ac.Spec.NetworkSpec.Vnet.Name
	if vnet == "" {
		vnet = ac.Name + "-vnet" // CAPZ's default vnet name
	}
	return "/subscriptions/" + ac.Spec.SubscriptionID + "/resourceGroups/" + rg +
		"/providers/Microsoft.Network/virtualNetworks/" + vnet + "/subnets/" + subnet
}

// image maps the template's image; none is CAPZ's reference image for the
// Kubernetes version (publisher cncf-upstream, offer capi, version
// <major><minor>.<patch>.0).
func image(i *infrav1.Image, k8sVersion string) (Image, error) {
	switch {
	case i == nil:
		v, err := version.ParseSemantic(k8sVersion)
		if err != nil {
			return Image{}, fmt.Errorf("spec.template.image is unset and the MachinePool's version %q is not a Kubernetes version to pick CAPZ's reference image by: set one of them", k8sVersion)
		}
		return Image{Publisher: "cncf-upstream", Offer: "capi", SKU: "ubuntu-2204-gen1",
			Version: fmt.Sprintf("%d%02d.%d.0", v.Major(), v.Minor(), v.Patch())}, nil
	case i.ID != nil:
		return Image{ID: *i.ID}, nil
	case i.Marketplace != nil:
		m := i.Marketplace
		return Image{Publisher: m.Publisher, Offer: m.Offer, SKU: m.SKU, Version: m.Version, ThirdParty: m.ThirdPartyImage}, nil
	case i.SharedGallery != nil:
		g := i.SharedGallery
		out := Image{ID: fmt.Sprintf("/subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/galleries/%s/images/%s/versions/%s",
			g.SubscriptionID, g.ResourceGroup, g.Gallery, g.Name, g.Version)}
		if g.Publisher != nil && g.Offer != nil && g.SKU != nil {
			out.withPlan(infrav1.ImagePlan{Publisher: *g.Publisher, Offer: *g.Offer, SKU: *g.SKU})
		}
		return out, nil
	case i.ComputeGallery != nil:
		g := i.ComputeGallery
		out := Image{Gallery: g.Gallery, Name: g.Name, Version: g.Version}
		if g.SubscriptionID != nil && g.ResourceGroup != nil {
			out = Image{ID: fmt.Sprintf("/subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/galleries/%s/images/%s/versions/%s",
				*g.SubscriptionID, *g.ResourceGroup, g.Gallery, g.Name, g.Version)}
		}
		if g.Plan != nil {
			out.withPlan(*g.Plan)
		}
		return out, nil
	default:
		return Image{}, fmt.Errorf("spec.template.image sets no image: set id, marketplace, sharedGallery or computeGallery")
	}
}

// withPlan gives a gallery image the purchase plan of the third-party image
// it derives from, as CAPZ does for a shared gallery image with publisher,
// offer and sku, or a compute gallery image with a plan.
func (i *Image) withPlan(p infrav1.ImagePlan) {
	i.Publisher, i.Offer, i.SKU, i.ThirdParty = p.Publisher, p.Offer, p.SKU, true
}

// ultraSSD is the VMs' Ultra SSD capability, as CAPZ sets it: the
// template's additionalCapabilities.ultraSSDEnabled, else enabled when a
// data disk is UltraSSD_LRS, else Azure's default (nil).
func ultraSSD(t infrav1.AzureMachinePoolMachineTemplate) *bool {
	if c := t.AdditionalCapabilities; c != nil && c.UltraSSDEnabled != nil {
		return ptr.To(*c.UltraSSDEnabled)
	}
	for _, d := range t.DataDisks {
		if d.ManagedDisk != nil && d.ManagedDisk.StorageAccountType == "UltraSSD_LRS" {
			return ptr.To(true)
		}
	}
	return nil
}

func osDisk(d infrav1.OSDisk) OSDisk {
	out := OSDisk{OSType: d.OSType, SizeGB: ptr.Deref(d.DiskSizeGB, 0), Caching: d.CachingType}
	if md := d.ManagedDisk; md != nil {
		out.StorageAccountType = md.StorageAccountType
		if md.DiskEncryptionSet != nil {
			out.DiskEncryptionSetID = md.DiskEncryptionSet.ID
		}
	}
	if dd := d.DiffDiskSettings; dd != nil {
		out.EphemeralPlacement = ptr.Deref(dd.Placement, "CacheDisk")
	}
	if out.OSType == "" {
		out.OSType = "Linux"
	}
	return out
}

// sshKey accepts the key as OpenSSH text or base64-encoded (CAPZ's
// templates pass ${AZURE_SSH_PUBLIC_KEY_B64}).
func sshKey(k string) string {
	k = strings.TrimSpace(k)
	if k == "" || strings.HasPrefix(k, "ssh-") || strings.HasPrefix(k, "ecdsa-") {
		return k
	}
	if b, err := base64.StdEncoding.DecodeString(k); err == nil {
		if s := strings.TrimSpace(string(b)); strings.HasPrefix(s, "ssh-") || strings.HasPrefix(s, "ecdsa-") {
			return s
		}
	}
	return k
}

func identity(pool *infrav1.AzureMachinePool) Identity {
	out := Identity{Type: string(pool.Spec.Identity)}
	if out.Type == "" {
		out.Type = string(infrav1.VMIdentityNone)
	}
	if pool.Spec.Identity == infrav1.VMIdentityUserAssigned {
		for _, u := range pool.Spec.UserAssignedIdentities {
			out.UserAssigned = append(out.UserAssigned, strings.TrimPrefix(u.ProviderID, "azure://"))
		}
	}
	return out
}

func bootDiagnostics(d *infrav1.Diagnostics) string {
	if d == nil || d.Boot == nil {
		return ""
	}
	if d.Boot.UserManaged != nil {
		return d.Boot.UserManaged.StorageAccountURI
	}
	if d.Boot.StorageAccountType == "Managed" {
		return "Managed"
	}
	return ""
}

// WritePool implements contract.Adapter: the contract's fields, CAPZ's
// provisioningState and longRunningOperationStates, and the engine's
// conditions mirrored under CAPZ's names.
func (a Adapter) WritePool(p contract.Pool, r contract.PoolReport) {
	pool := p.(*infrav1.AzureMachinePool)
	st := &pool.Status
	observed := a.Pool(pool).Write(r)
	kit.MirrorConditions(pool, conditionAliases)
	if r.FailureReason != nil {
		st.ProvisioningState = ptr.To(infrav1.Failed)
	}
	if !observed {
		return
	}
	st.LongRunningOperationStates = nil
	switch op := r.Operation; {
	case op != nil:
		st.ProvisioningState = ptr.To(operationState(op.Type))
		st.LongRunningOperationStates = []infrav1.Future{future(pool, op)}
	case r.FailureReason != nil:
	case r.Ready:
		st.ProvisioningState = ptr.To(infrav1.Succeeded)
	default:
		st.ProvisioningState = nil
	}
	st.Instances = nil
	for _, in := range r.Instances {
		st.Instances = append(st.Instances, infrav1.AzureMachinePoolInstanceStatus{
			Version:            in.Version,
			ProvisioningState:  ptr.To(instanceState.Word(in.State)),
			ProviderID:         in.ProviderID,
			InstanceID:         in.InstanceID,
			InstanceName:       instanceName(in.ProviderID),
			LatestModelApplied: in.LatestModelApplied,
		})
	}
}

// future records an operation in progress as CAPZ does (Future), with
// the cloud's operation ID, else its type, in place of a resume token
// the operation has none of.
func future(pool *infrav1.AzureMachinePool, op *scalegroup.Operation) infrav1.Future {
	f := Future(futureService, op, pool.Annotations[contract.GroupRefAnnotation], pool.Name)
	if f.Data == "" {
		f.Data = op.ID
	}
	if f.Data == "" {
		f.Data = op.Type
	}
	return f
}

// futureService is CAPZ's service name in a Future of a scale set.
const futureService = "scalesets"

func operationState(t string) infrav1.ProvisioningState {
	if t == scalegroup.OperationDelete {
		return infrav1.Deleting
	}
	return infrav1.Updating
}

// instanceState is the VM's provisioningState in Azure's terms.
// Updating is Running too; the other states (Deleted, Canceled) say nothing
// of the VM.
var instanceState = kit.StateWords[infrav1.ProvisioningState]{Pending: infrav1.Creating, Running: infrav1.Succeeded, Failed: infrav1.Failed, Deleting: infrav1.Deleting,
	Also: map[infrav1.ProvisioningState]contract.InstanceState{infrav1.Updating: contract.InstanceRunning}}

// instanceName is the VM's name from its providerID: <vmss>_<n> for a
// Uniform VM, the VM's name for a Flexible one.
func instanceName(providerID string) string {
	id := strings.TrimPrefix(providerID, "azure://")
	if _, n, ok := strings.Cut(id, "/virtualMachineScaleSets/"); ok {
		if set, vm, ok := strings.Cut(n, "/virtualMachines/"); ok {
			return set + "_" + vm
		}
	}
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		return id[i+1:]
	}
	return id
}

// capzReasons are CAPZ's names of the engine's reasons.
var capzReasons = map[string]string{
	infrav1.ScaleGroupNotFoundReason:        "ScaleSetNotFound",
	infrav1.ScaleGroupProvisionFailedReason: "ScaleSetProvisionFailed",
	infrav1.ScaleGroupModelOutOfDateReason:  "ScaleSetModelOutOfDate",
	infrav1.ScaleGroupScaleUpReason:         "ScaleSetScalingUp",
	infrav1.ScaleGroupScaleDownReason:       "ScaleSetScalingDown",
	infrav1.ScaleGroupDeletingReason:        "ScaleSetDeleting",
}

// conditionAliases are the engine's conditions under CAPZ's names, with
// CAPZ's reasons.
var conditionAliases = map[string][]kit.ConditionAlias{
	infrav1.ScaleGroupReadyCondition:           {{Type: infrav1.ScaleSetRunningCondition, Reasons: capzReasons}},
	infrav1.ScaleGroupModelUpdatedCondition:    {{Type: infrav1.ScaleSetModelUpdatedCondition, Reasons: capzReasons}},
	infrav1.ScaleGroupDesiredReplicasCondition: {{Type: infrav1.ScaleSetDesiredReplicasCondition, Reasons: capzReasons}},
}

// WriteInstanceStatus implements contract.Adapter: the VM's
// provisioningState and name.
func (a Adapter) WriteInstanceStatus(obj contract.InstanceObject, r contract.InstanceReport) {
	m := obj.(*infrav1.AzureMachinePoolMachine)
	a.Instance(m).WriteStatus(r)
	m.Status.ProvisioningState = ptr.To(instanceState.Word(r.State))
	m.Status.InstanceName = instanceName(r.ProviderID)
}

// ReadPool implements contract.Reader: the pool rolls by its
// spec.strategy; the scale set's operation it recorded (its poller's
// resume token) is handed back to Get after a restart.
func (Adapter) ReadPool(p contract.Pool) (contract.PoolView, error) {
	pool := p.(*infrav1.AzureMachinePool)
	view, err := kit.SpecStrategy(pool.Spec.Strategy, pool.Status.ObservedGeneration)
	view.Operation = RecordedOperation(pool.Status.LongRunningOperationStates, futureService)
	return view, err
}

// ReadInstance implements contract.Reader. An AzureMachinePoolMachine
// records the VM's provisioningState (CAPZ's field), which says less than
// mpool's states: Creating is Pending (Azure does not tell a booting VM),
// and a failure reason makes the instance Failed whatever the state. CAPZ's
// kind has no zone: it is the topology.kubernetes.io/zone label the engine
// puts on the object.
func (a Adapter) ReadInstance(obj contract.InstanceObject) contract.InstanceView {
	m := obj.(*infrav1.AzureMachinePoolMachine)
	cloud := ptr.Deref(m.Status.ProvisioningState, "")
	return a.Instance(m).View(string(cloud), instanceState.State(cloud), m.Labels[contract.ZoneLabel])
}
