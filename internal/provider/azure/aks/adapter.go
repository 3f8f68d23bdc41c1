package aks

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/capi"
	azureprovider "github.com/mpool-dev/mpool/internal/provider/azure"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/rollout"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// ProviderName labels the AKS provider in metrics, events and logs.
const ProviderName = "aks"

// AgentPool is the part of the model that changes what a node is (the
// model hash covers it): AKS refuses a change of any of it on an existing
// agent pool.
type AgentPool struct {
	OSDiskSizeGB           int32                     `json:"osDiskSizeGB,omitempty"`
	OSDiskType             string                    `json:"osDiskType,omitempty"`
	MaxPods                int32                     `json:"maxPods,omitempty"`
	OSType                 string                    `json:"osType,omitempty"`
	ScaleSetPriority       string                    `json:"scaleSetPriority,omitempty"`
	SpotMaxPrice           string                    `json:"spotMaxPrice,omitempty"`
	KubeletConfig          *infrav1.AKSKubeletConfig `json:"kubeletConfig,omitempty"`
	LinuxOSConfig          *infrav1.AKSLinuxOSConfig `json:"linuxOSConfig,omitempty"`
	VnetSubnetID           string                    `json:"vnetSubnetID,omitempty"`
	EnableNodePublicIP     bool                      `json:"enableNodePublicIP,omitempty"`
	NodePublicIPPrefixID   string                    `json:"nodePublicIPPrefixID,omitempty"`
	EnableFIPS             bool                      `json:"enableFIPS,omitempty"`
	EnableEncryptionAtHost bool                      `json:"enableEncryptionAtHost,omitempty"`
}

// Settings are what AKS applies to an agent pool in place: not part of the
// model hash.
type Settings struct {
	Mode          string
	Labels        map[string]string
	Taints        []string
	ScaleDownMode string
	// AutoScaling turns AKS's cluster autoscaler on within MinCount and
	// MaxCount (spec.scaling).
	AutoScaling        bool
	MinCount, MaxCount int32
	// ExternalReplicas: an autoscaler owns the size (the MachinePool's
	// replicas-managed-by); the count is then clamped into the range.
	ExternalReplicas bool
	// DrainTimeoutInMinutes is the agent pool's
	// upgradeSettings.drainTimeoutInMinutes: the MachinePool's
	// nodeDrainTimeout in whole minutes (rounded up, within AKS's 1 to
	// 1440); 0 sends none (AKS's default, 30).
	DrainTimeoutInMinutes int32
}

// drainTimeoutInMinutes is AKS's drainTimeoutInMinutes for the
// MachinePool's nodeDrainTimeout (seconds), 0 when it has none.
func drainTimeoutInMinutes(seconds *int32) int32 {
	if seconds == nil || *seconds <= 0 {
		return 0
	}
	return min(max((*seconds+59)/60, 1), 1440)
}

// count is the agent pool's count for capacity under st.
func (st Settings) count(capacity int32) int32 {
	if st.AutoScaling && st.ExternalReplicas {
		return min(max(capacity, st.MinCount), st.MaxCount)
	}
	return capacity
}

// Adapter maps AzureManagedMachinePool and AzureManagedMachinePoolMachine
// onto the infrapool engine; their agent pools are placed by the Cluster's
// AzureManagedControlPlane.
type Adapter struct {
	kit.Objects[infrav1.AzureManagedMachinePool, infrav1.AzureManagedMachinePoolMachine, infrav1.AzureManagedMachinePoolMachineList, infrav1.AzureManagedControlPlane]
}

var _ contract.Adapter = Adapter{}

// Kinds implements contract.Adapter. AKS bootstraps its nodes: the
// MachinePool's dataSecretName is "".
func (a Adapter) Kinds() contract.Kinds {
	return a.Named(contract.Kinds{Provider: ProviderName, PoolFinalizer: infrav1.AzureManagedMachinePoolFinalizer,
		InstanceFinalizer: infrav1.AzureManagedMachinePoolMachineFinalizer, SelfBootstrapping: true})
}

// AgentPoolName is the pool's agent pool: spec.name, else the object's
// name, as CAPZ names it (admission checks it is a valid one).
func AgentPoolName(pool *infrav1.AzureManagedMachinePool) string {
	return ptr.Deref(pool.Spec.Name, pool.Name)
}

// ClusterID is the ARM ID of the AKS cluster an AzureManagedControlPlane
// names (named after the object, as CAPZ names it).
func ClusterID(cp *infrav1.AzureManagedControlPlane) string {
	return "/subscriptions/" + cp.Spec.SubscriptionID + "/resourceGroups/" + cp.Spec.ResourceGroupName +
		"/providers/Microsoft.ContainerService/managedClusters/" + cp.Name
}

// GroupRef implements contract.Adapter: the agent pool of the
// AzureManagedControlPlane's AKS cluster (the scope is the cluster's ID),
// reached with its identity.
func (a Adapter) GroupRef(p contract.Pool, infra client.Object) (scalegroup.Ref, error) {
	pool := p.(*infrav1.AzureManagedMachinePool)
	cp, err := a.InfraCluster(infra)
	if err != nil {
		return scalegroup.Ref{}, err
	}
	if cp.Spec.SubscriptionID == "" || cp.Spec.ResourceGroupName == "" || cp.Spec.Location == "" {
		return scalegroup.Ref{}, fmt.Errorf("AzureManagedControlPlane %s needs spec.subscriptionID, spec.resourceGroupName and spec.location", cp.Name)
	}
	ref := scalegroup.Ref{Name: AgentPoolName(pool), Scope: ClusterID(cp), Location: cp.Spec.Location, Namespace: pool.Namespace}
	if id := cp.Spec.IdentityRef; id != nil && id.Name != "" {
		ns := id.Namespace
		if ns == "" {
			ns = cp.Namespace
		}
		ref.Credentials = ns + "/" + id.Name
	}
	return ref, nil
}

// Desired implements contract.Adapter.
func (Adapter) Desired(p contract.Pool, owner contract.Owner) (contract.Desired, error) {
	pool := p.(*infrav1.AzureManagedMachinePool)
	spec := pool.Spec
	replicas := kit.OwnerReplicas(owner)
	st := Settings{Mode: spec.Mode, Labels: maps.Clone(spec.NodeLabels), ScaleDownMode: ptr.Deref(spec.ScaleDownMode, "Delete"),
		ExternalReplicas: capi.ReplicasManagedExternally(owner.MachinePool)}
	if mp := owner.MachinePool; mp != nil {
		st.DrainTimeoutInMinutes = drainTimeoutInMinutes(mp.Spec.Template.Spec.Deletion.NodeDrainTimeoutSeconds)
	}
	if sc := spec.Scaling; sc != nil {
		st.AutoScaling = true
		st.MinCount, st.MaxCount = ptr.Deref(sc.MinSize, 0), ptr.Deref(sc.MaxSize, max(replicas, 1))
		if err := kit.CheckScaling("AzureManagedMachinePool", replicas, st.MinCount, st.MaxCount, st.ExternalReplicas); err != nil {
			return contract.Desired{}, err
		}
	}
	if spec.Mode == infrav1.NodePoolModeSystem && replicas < 1 && !st.ExternalReplicas {
		return contract.Desired{}, fmt.Errorf("a System agent pool needs at least 1 node: set the MachinePool's spec.replicas to 1 or more, or spec.mode to User")
	}
	for _, t := range spec.Taints {
		st.Taints = append(st.Taints, t.Key+"="+t.Value+":"+t.Effect)
	}
	ap := AgentPool{
		OSDiskSizeGB: ptr.Deref(spec.OSDiskSizeGB, 0), OSDiskType: ptr.Deref(spec.OsDiskType, "Managed"),
		MaxPods: ptr.Deref(spec.MaxPods, 0), OSType: ptr.Deref(spec.OSType, "Linux"),
		ScaleSetPriority: ptr.Deref(spec.ScaleSetPriority, ""), KubeletConfig: spec.KubeletConfig, LinuxOSConfig: spec.LinuxOSConfig,
		EnableNodePublicIP: ptr.Deref(spec.EnableNodePublicIP, false), NodePublicIPPrefixID: ptr.Deref(spec.NodePublicIPPrefixID, ""),
		EnableFIPS: ptr.Deref(spec.EnableFIPS, false), EnableEncryptionAtHost: ptr.Deref(spec.EnableEncryptionAtHost, false),
	}
	if q := spec.SpotMaxPrice; q != nil {
		ap.SpotMaxPrice = q.AsDec().String()
	}
	if s := ptr.Deref(spec.SubnetName, ""); s != "" {
		cp, _ := owner.InfraCluster.(*infrav1.AzureManagedControlPlane)
		if cp == nil {
			return contract.Desired{}, fmt.Errorf("spec.subnetName needs the Cluster's AzureManagedControlPlane to name the virtual network")
		}
		// CAPZ's default virtual network of a managed cluster is named after it.
		ap.VnetSubnetID = "/subscriptions/" + cp.Spec.SubscriptionID + "/resourceGroups/" + cp.Spec.ResourceGroupName +
			"/providers/Microsoft.Network/virtualNetworks/" + cp.Name + "/subnets/" + s
	}
	tags := kit.PoolTags(pool, spec.AdditionalTags)
	if cluster := owner.ClusterName(); cluster != "" {
		tags[azureprovider.TagClusterPrefix+cluster] = "owned"
	}
	zones := slices.Clone(spec.AvailabilityZones)
	slices.Sort(zones)
	m := scalegroup.Model{InstanceType: spec.SKU, Zones: zones, Version: owner.Version, Tags: tags, Provider: ap, InPlace: st}
	view, _ := Adapter{}.ReadPool(pool)
	d := contract.Desired{Model: m, Strategy: view.Rollout.Strategy}
	if st.AutoScaling && st.ExternalReplicas {
		d.ReplicaRange = &[2]int32{st.MinCount, st.MaxCount}
	}
	return d, nil
}

// WritePool implements contract.Adapter: the contract's fields, and
// CAPZ's longRunningOperationStates: the agent pool's operation in
// progress that mpool started, with its poller's resume token (none once
// it is done, as CAPZ drops a future that completed).
func (a Adapter) WritePool(p contract.Pool, r contract.PoolReport) {
	pool := p.(*infrav1.AzureManagedMachinePool)
	if !a.Pool(pool).Write(r) {
		return
	}
	pool.Status.LongRunningOperationStates = nil
	if op := r.Operation; op != nil && op.ResumeToken != "" {
		pool.Status.LongRunningOperationStates = []infrav1.Future{
			azureprovider.Future(futureService, op, pool.Annotations[contract.GroupRefAnnotation], AgentPoolName(pool))}
	}
}

// futureService is CAPZ's service name in a Future of an agent pool.
const futureService = "agentpools"

// WriteInstanceStatus implements contract.Adapter: the provisioning state
// and the zone.
func (a Adapter) WriteInstanceStatus(obj contract.InstanceObject, r contract.InstanceReport) {
	m := obj.(*infrav1.AzureManagedMachinePoolMachine)
	a.Instance(m).WriteStatus(r)
	m.Status.ProvisioningState = provisioningState.Word(r.State)
	m.Status.AvailabilityZone = r.Zone
}

// provisioningState is a machine's state in ARM's terms.
// Any other state is a machine in service.
var provisioningState = kit.StateWords[string]{Pending: "Creating", Running: "Succeeded", Failed: "Failed", Deleting: "Deleting",
	Other: contract.InstanceRunning}

// ReadPool implements contract.Reader: AKS replaces out-of-date nodes
// itself (upgradeSettings.maxSurge, one node by default); the engine
// removes the nodes marked for deletion one at a time (deleteMachines),
// the pool's count made whole again afterwards.
func (Adapter) ReadPool(p contract.Pool) (contract.PoolView, error) {
	pool := p.(*infrav1.AzureManagedMachinePool)
	one := intstr.FromInt32(1)
	return contract.PoolView{Rollout: contract.RolloutView{
		Strategy:      rollout.Strategy{MaxSurge: &one, MaxUnavailable: &one},
		Source:        "AKS's upgradeSettings (maxSurge 1, AKS's default): AKS replaces the nodes itself; marked nodes go one at a time",
		CloudRollouts: true,
	}, ObservedGeneration: pool.Status.ObservedGeneration,
		Operation: azureprovider.RecordedOperation(pool.Status.LongRunningOperationStates, futureService)}, nil
}

// ReadInstance implements contract.Reader.
func (a Adapter) ReadInstance(obj contract.InstanceObject) contract.InstanceView {
	m := obj.(*infrav1.AzureManagedMachinePoolMachine)
	return a.Instance(m).View(m.Status.ProvisioningState, provisioningState.State(m.Status.ProvisioningState), m.Status.AvailabilityZone)
}
