package gcp

import (
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

// ProviderName labels the GCP provider in metrics, events and logs; the
// simulated cloud's face for it has the same name.
const ProviderName = "gcp"

// Labels mpool (like CAPG) puts on a pool's instances.
const (
	// LabelClusterPrefix + the cluster's name, value "owned": the cluster
	// owns the resource (CAPG's owned-cluster label).
	LabelClusterPrefix = "capg-cluster-"
	// LabelRole is the resource's role in the cluster ("node").
	LabelRole = "capg-role"
)

// CAPG's defaults.
const (
	// defaultRootDeviceSize is a boot disk's size in GB.
	defaultRootDeviceSize = 30
	// defaultDiskType is a disk's type.
	defaultDiskType = "pd-standard"
	// cloudPlatformScope is the instances' default OAuth scope.
	cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"
)

// Adapter maps GCPMachinePool and GCPMachinePoolMachine onto the infrapool
// engine; their managed instance groups are placed by the GCPCluster.
type Adapter struct {
	kit.Objects[infrav1.GCPMachinePool, infrav1.GCPMachinePoolMachine, infrav1.GCPMachinePoolMachineList, infrav1.GCPCluster]
}

var _ contract.Adapter = Adapter{}

// Kinds implements contract.Adapter.
func (a Adapter) Kinds() contract.Kinds {
	return a.Named(contract.Kinds{Provider: ProviderName, PoolFinalizer: infrav1.GCPMachinePoolFinalizer, InstanceFinalizer: infrav1.GCPMachinePoolMachineFinalizer})
}

// GroupRef implements contract.Adapter: the group lives in the GCPCluster's
// project (Scope), in its zone when the pool (else the GCPCluster) names
// exactly one, else in its region (a regional group) (Location), reached
// with the GCPCluster's credentialsRef (Credentials "<namespace>/<name>" of
// its Secret), else with the manager's own credentials.
func (a Adapter) GroupRef(p contract.Pool, infra client.Object) (scalegroup.Ref, error) {
	pool := p.(*infrav1.GCPMachinePool)
	gc, err := a.InfraCluster(infra)
	if err != nil {
		return scalegroup.Ref{}, err
	}
	if gc.Spec.Project == "" || gc.Spec.Region == "" {
		return scalegroup.Ref{}, fmt.Errorf("GCPCluster %s needs spec.project and spec.region: set the project and region the managed instance group is created in", gc.Name)
	}
	location := gc.Spec.Region
	zones := pool.Spec.Zones
	if len(zones) == 0 {
		zones = gc.Spec.FailureDomains
	}
	if len(zones) == 1 {
		location = zones[0]
	}
	for _, z := range zones {
		if !strings.HasPrefix(z, gc.Spec.Region+"-") {
			return scalegroup.Ref{}, fmt.Errorf("zone %q is not in GCPCluster %s's region %s: change spec.zones (or the GCPCluster's failureDomains) to zones of %s", z, gc.Name, gc.Spec.Region, gc.Spec.Region)
		}
	}
	ref := scalegroup.Ref{Name: GroupName(pool.Namespace, pool.Name), Scope: gc.Spec.Project, Location: location, Namespace: pool.Namespace}
	if c := gc.Spec.CredentialsRef; c != nil {
		ref.Credentials = c.Namespace + "/" + c.Name
	}
	return ref, nil
}

// GroupName is the managed instance group of the GCPMachinePool
// namespace/name (see contract.GroupName), short enough that its instance
// templates' names (<group>-<model hash>-<user-data hash>) keep within
// Compute Engine's 63 characters.
func GroupName(namespace, name string) string {
	return contract.GroupName(namespace, name, maxGroupName)
}

// Desired implements contract.Adapter.
func (a Adapter) Desired(p contract.Pool, owner contract.Owner) (contract.Desired, error) {
	pool := p.(*infrav1.GCPMachinePool)
	gc, err := a.InfraCluster(owner.InfraCluster)
	if err != nil {
		return contract.Desired{}, err
	}
	spec := pool.Spec
	if spec.InstanceType == "" {
		return contract.Desired{}, fmt.Errorf("spec.instanceType is required: set the machine type (for example n2-standard-2)")
	}
	image, err := imageOf(pool, gc, owner.Version)
	if err != nil {
		return contract.Desired{}, err
	}
	t := Template{
		Network:           networkOf(gc),
		PublicIP:          ptr.Deref(spec.PublicIP, false),
		BootDiskSizeGB:    spec.RootDeviceSize,
		BootDiskType:      string(ptr.Deref(spec.RootDeviceType, defaultDiskType)),
		NetworkTags:       sortedUnique(spec.AdditionalNetworkTags),
		ServiceAccount:    "default",
		Scopes:            []string{cloudPlatformScope},
		Preemptible:       spec.Preemptible,
		ProvisioningModel: ptr.Deref(spec.ProvisioningModel, ""),
		OnHostMaintenance: ptr.Deref(spec.OnHostMaintenance, ""),
		CanIPForward:      ptr.Deref(spec.IPForwarding, infrav1.GCPPolicyEnabled) == infrav1.GCPPolicyEnabled,
	}
	if t.BootDiskSizeGB == 0 {
		t.BootDiskSizeGB = defaultRootDeviceSize
	}
	if s := spec.Subnet; s != nil {
		t.Subnetwork = *s
		if !strings.Contains(*s, "/") {
			t.Subnetwork = "projects/" + hostProject(gc) + "/regions/" + gc.Spec.Region + "/subnetworks/" + *s
		}
	}
	if c := ptr.Deref(spec.ConfidentialCompute, ""); c != "" && c != "Disabled" {
		t.Confidential = c
	}
	for _, d := range spec.AdditionalDisks {
		size := ptr.Deref(d.Size, defaultRootDeviceSize)
		typ := string(ptr.Deref(d.DeviceType, defaultDiskType))
		if typ == "local-ssd" {
			size = 375
		}
		t.Disks = append(t.Disks, Disk{Type: typ, SizeGB: size})
	}
	for _, m := range spec.AdditionalMetadata {
		t.Metadata = append(t.Metadata, MetadataItem{Key: m.Key, Value: ptr.Deref(m.Value, "")})
	}
	if sa := spec.ServiceAccount; sa != nil {
		if sa.Email != "" {
			t.ServiceAccount = sa.Email
		}
		if sa.Scopes != nil {
			t.Scopes = slices.Clone(sa.Scopes)
		}
	}
	if s := spec.ShieldedInstanceConfig; s != nil {
		t.Shielded = &Shielded{
			SecureBoot:          s.SecureBoot == infrav1.GCPPolicyEnabled,
			VTPM:                s.VirtualizedTrustedPlatformModule != infrav1.GCPPolicyDisabled,
			IntegrityMonitoring: s.IntegrityMonitoring != infrav1.GCPPolicyDisabled,
		}
	}
	zones := slices.Clone(spec.Zones)
	if len(zones) == 0 && owner.MachinePool != nil {
		zones = slices.Clone(owner.MachinePool.Spec.FailureDomains)
	}
	if len(zones) == 0 {
		zones = slices.Clone(gc.Spec.FailureDomains)
	}
	m := scalegroup.Model{
		InstanceType: spec.InstanceType,
		Image:        image,
		Zones:        sortedUnique(zones),
		Version:      owner.Version,
		CustomData:   owner.BootstrapData,
		Tags:         labels(pool, gc, owner),
		Provider:     t,
	}
	view, err := Adapter{}.ReadPool(pool)
	if err != nil {
		return contract.Desired{}, err
	}
	return contract.Desired{Model: m, Strategy: view.Rollout.Strategy}, nil
}

// imageOf is the boot disk's image: spec.image, else spec.imageFamily, else
// CAPG's reference image family of the Kubernetes version in the cluster's
// project (capi-ubuntu-1804-k8s-v1-30).
func imageOf(pool *infrav1.GCPMachinePool, gc *infrav1.GCPCluster, k8sVersion string) (string, error) {
	switch {
	case pool.Spec.Image != nil:
		return *pool.Spec.Image, nil
	case pool.Spec.ImageFamily != nil:
		return *pool.Spec.ImageFamily, nil
	}
	v, err := version.ParseSemantic(k8sVersion)
	if err != nil {
		return "", fmt.Errorf("spec.image and spec.imageFamily are unset and the MachinePool's version %q is not a Kubernetes version to pick CAPG's image family by: set one of them", k8sVersion)
	}
	return fmt.Sprintf("projects/%s/global/images/family/capi-ubuntu-1804-k8s-v%d-%d", gc.Spec.Project, v.Major(), v.Minor()), nil
}

// hostProject is the project of the cluster's network: its Shared VPC host
// project, else the cluster's.
func hostProject(gc *infrav1.GCPCluster) string {
	if p := ptr.Deref(gc.Spec.Network.HostProject, ""); p != "" {
		return p
	}
	return gc.Spec.Project
}

// networkOf is the cluster's network (CAPG's default: "default").
func networkOf(gc *infrav1.GCPCluster) string {
	return "projects/" + hostProject(gc) + "/global/networks/" + ptr.Deref(gc.Spec.Network.Name, "default")
}

// labels are the GCPCluster's and the pool's additional labels and CAPG's
// labels of the owning cluster and role, and the pool's.
func labels(pool *infrav1.GCPMachinePool, gc *infrav1.GCPCluster, owner contract.Owner) map[string]string {
	out := kit.PoolTags(pool, gc.Spec.AdditionalLabels, pool.Spec.AdditionalLabels)
	if cluster := owner.ClusterName(); cluster != "" {
		out[LabelClusterPrefix+cluster] = "owned"
	}
	out[LabelRole] = "node"
	return out
}

func sortedUnique(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// WritePool implements contract.Adapter: the contract's fields, the
// group's instance template, and the engine's conditions mirrored under
// GCP's names.
func (a Adapter) WritePool(p contract.Pool, r contract.PoolReport) {
	pool := p.(*infrav1.GCPMachinePool)
	observed := a.Pool(pool).Write(r)
	kit.MirrorConditions(pool, conditionAliases)
	if observed && r.Template != nil {
		pool.Status.InstanceTemplate = r.Template.ID
	}
}

// conditionAliases are the engine's conditions under GCP's names.
var conditionAliases = map[string][]kit.ConditionAlias{
	infrav1.ScaleGroupReadyCondition: {
		kit.ReadyAlias(infrav1.InstanceGroupReadyCondition, "InstanceGroupNotFound", "InstanceGroupProvisionFailed", "InstanceGroupDeleting"),
		kit.ReadyAlias(infrav1.InstanceTemplateReadyCondition, "InstanceTemplateNotFound", "InstanceTemplateCreateFailed", ""),
	},
}

// WriteInstanceStatus implements contract.Adapter: the managed instance's
// current action, in Compute Engine's terms, and its zone.
func (a Adapter) WriteInstanceStatus(obj contract.InstanceObject, r contract.InstanceReport) {
	m := obj.(*infrav1.GCPMachinePoolMachine)
	a.Instance(m).WriteStatus(r)
	m.Status.CurrentAction = currentAction.Word(r.State)
	m.Status.Zone = r.Zone
}

// currentAction is an instance's state as a managed instance's current
// action (a failed instance is NONE: its failure is in failureReason).
// The engine writes none of the others: they are the group's.
var currentAction = kit.StateWords[string]{Pending: "CREATING", Booting: "VERIFYING", Running: "NONE", Deleting: "DELETING",
	Also: map[string]contract.InstanceState{
		"CREATING_WITHOUT_RETRIES": contract.InstancePending, "RECREATING": contract.InstancePending,
		"STARTING": contract.InstanceBooting, "RESTARTING": contract.InstanceBooting, "REFRESHING": contract.InstanceBooting,
		"ABANDONING": contract.InstanceDeleting,
	}, Other: contract.InstanceRunning}

// ReadPool implements contract.Reader: the pool rolls by its
// spec.strategy.
func (Adapter) ReadPool(p contract.Pool) (contract.PoolView, error) {
	pool := p.(*infrav1.GCPMachinePool)
	return kit.SpecStrategy(pool.Spec.Strategy, pool.Status.ObservedGeneration)
}

// ReadInstance implements contract.Reader: CREATING is Pending, VERIFYING
// Booting, DELETING (and ABANDONING) Deleting, NONE Running — or Failed
// when the object records a failure.
func (a Adapter) ReadInstance(obj contract.InstanceObject) contract.InstanceView {
	m := obj.(*infrav1.GCPMachinePoolMachine)
	return a.Instance(m).View(m.Status.CurrentAction, currentAction.State(m.Status.CurrentAction), m.Status.Zone)
}
