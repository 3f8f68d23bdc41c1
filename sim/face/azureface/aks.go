package azureface

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/mpool-dev/mpool/sim/admin"
	"github.com/mpool-dev/mpool/sim/cloudinit"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/nodeagent"
	"github.com/mpool-dev/mpool/sim/wire/azureapi"
)

// The simulated AKS (Microsoft.ContainerService), served by the Azure face
// on ARM's endpoint: see the package doc, "AKS".

// AKS's defaults in the simulation.
const (
	// AKSDefaultClusterName is the AKS cluster `mpool up` registers
	// (PrepareSandbox) in the default subscription and resource group, and
	// examples/aks names.
	AKSDefaultClusterName = "mpool-aks"
	// AKSSampleClusterName is the AKS cluster, in the resource group of
	// the same name, that `mpool up` registers for `mpool up --sample aks`
	// (the azure aks flavor for the cluster name aks), at AKSSampleVersion.
	AKSSampleClusterName = "aks"
	AKSSampleVersion     = "1.32.0"
	// AKSDefaultVersion is a cluster's Kubernetes version when none is given.
	AKSDefaultVersion = "1.31.2"
	// AKSNodeImageVersion is the node image every agent pool runs.
	AKSNodeImageVersion = "AKSUbuntu-2204gen2containerd-202411.12.0"
	// AKSMaxNodesPerPool is AKS's limit on an agent pool's count (VM Scale
	// Set pools).
	AKSMaxNodesPerPool = 1000
	// AKSMaxPoolsPerCluster is AKS's limit on a cluster's agent pools.
	AKSMaxPoolsPerCluster = 100
)

// Labels AKS puts on an agent pool's Nodes.
const (
	AKSLabelAgentPool = "kubernetes.azure.com/agentpool"
	AKSLabelMode      = "kubernetes.azure.com/mode"
	AKSLabelCluster   = "kubernetes.azure.com/cluster"
	AKSLabelNodeImage = "kubernetes.azure.com/node-image-version"
	AKSLabelPriority  = "kubernetes.azure.com/scalesetpriority"
)

// Operation names of the simulated AKS, as counted in Stats.
const (
	OpAKSManagedClustersGet            = "azure.ManagedClusters.Get"
	OpAKSAgentPoolsCreateOrUpdate      = "azure.AgentPools.CreateOrUpdate"
	OpAKSAgentPoolsGet                 = "azure.AgentPools.Get"
	OpAKSAgentPoolsList                = "azure.AgentPools.List"
	OpAKSAgentPoolsDelete              = "azure.AgentPools.Delete"
	OpAKSAgentPoolsDeleteMachines      = "azure.AgentPools.DeleteMachines"
	OpAKSAgentPoolsUpgradeNodeImage    = "azure.AgentPools.UpgradeNodeImageVersion"
	OpAKSMachinesList                  = "azure.Machines.List"
	OpAKSOperationStatus               = "azure.ContainerServiceOperations.Get"
	aksProvider                        = "Microsoft.ContainerService"
	aksTypeManagedClusters             = "Microsoft.ContainerService/managedClusters"
	aksTypeAgentPools                  = "Microsoft.ContainerService/managedClusters/agentPools"
	aksTypeMachines                    = "Microsoft.ContainerService/managedClusters/agentPools/machines"
	aksOpWrite, aksOpDelete            = "aksWrite", "aksDelete"
	aksOpDeleteMachines                = "aksDeleteMachines"
	aksCallTimeout                     = 10 * time.Second
	aksDefaultOSDiskSizeGB, aksMaxPods = 128, 110
)

// Agent pool modes.
const (
	NodePoolModeSystem = "System"
	NodePoolModeUser   = "User"
)

// aksPoolNameRE is AKS's rule for a Linux agent pool's name.
var aksPoolNameRE = regexp.MustCompile(`^[a-z][a-z0-9]{0,11}$`)

// aksCluster is a managed cluster of the simulated AKS (the Azure face's
// data).
type aksCluster struct {
	Subscription  string    `json:"subscription"`
	ResourceGroup string    `json:"resourceGroup"`
	Name          string    `json:"name"`
	Location      string    `json:"location"`
	Version       string    `json:"version"`
	NodeRG        string    `json:"nodeResourceGroup"`
	CreatedAt     time.Time `json:"createdAt"`
	Pools         []aksPool `json:"pools,omitempty"`
	// NodeImage is the newest node image, the one new nodes get; "" is
	// AKSNodeImageVersion (see AKSReleaseNodeImage).
	NodeImage string `json:"nodeImage,omitempty"`
}

// aksPool is an agent pool: its properties as last written, and what its
// nodes join the workload cluster with.
type aksPool struct {
	Name       string         `json:"name"`
	Properties map[string]any `json:"properties"`
	// VMSS is the pool's scale set in the node resource group.
	VMSS string `json:"vmss"`
	// NodeImage is the node image of the pool's nodes ("" is
	// AKSNodeImageVersion).
	NodeImage string `json:"nodeImage,omitempty"`
	// Writing is Creating, Updating or Scaling while the last write's
	// nodes boot; OpStart when it started.
	Writing  string                `json:"writing,omitempty"`
	OpStart  time.Time             `json:"opStart"`
	Deleting bool                  `json:"deleting,omitempty"`
	Ticket   *nodeagent.JoinTicket `json:"ticket,omitempty"`
	// Upgrade is the version upgrade in progress, nil at rest.
	Upgrade *aksUpgrade `json:"upgrade,omitempty"`
	// ScaleIn is the scale-in in progress (nodes draining before they go)
	// or failed, nil at rest.
	ScaleIn *aksScaleIn `json:"scaleIn,omitempty"`
}

// aksUpgrade is an agent pool's version upgrade: AKS surges Surge nodes of
// the new version (model Hash), then drains, soaks and removes old ones
// (see advanceUpgrade).
type aksUpgrade struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Surge int32  `json:"surge"`
	Hash  string `json:"hash"`
	// Draining are the old nodes being drained (by instance ID) and since
	// when; Soaking those drained, and since when; Blocked those that
	// could not be drained within drainTimeoutInMinutes, Message why.
	Draining map[string]time.Time `json:"draining,omitempty"`
	Soaking  map[string]time.Time `json:"soaking,omitempty"`
	Blocked  []string             `json:"blocked,omitempty"`
	Message  string               `json:"message,omitempty"`
	// Failed is why the upgrade failed; it is over, and the next write of
	// the pool starts it again.
	Failed *azureapi.ErrorBody `json:"failed,omitempty"`
}

// nodeImage is the cluster's newest node image.
func (c *aksCluster) nodeImage() string { return cmp.Or(c.NodeImage, AKSNodeImageVersion) }

// nodeImage is the node image of the pool's nodes.
func (p *aksPool) nodeImage() string { return cmp.Or(p.NodeImage, AKSNodeImageVersion) }

func (c *aksCluster) key() string {
	return strings.ToLower(c.Subscription + "/" + c.ResourceGroup + "/" + c.Name)
}

func (c *aksCluster) pool(name string) *aksPool {
	for i := range c.Pools {
		if strings.EqualFold(c.Pools[i].Name, name) {
			return &c.Pools[i]
		}
	}
	return nil
}

func (d *azureFaceData) aksCluster(sub, rg, name string) *aksCluster {
	k := strings.ToLower(sub + "/" + rg + "/" + name)
	for i := range d.AKSClusters {
		if d.AKSClusters[i].key() == k {
			return &d.AKSClusters[i]
		}
	}
	return nil
}

// AKSCreateCluster registers a running AKS cluster name in resource group
// rg of subscription sub at location (version "" is AKSDefaultVersion), as
// `az aks create` would; its nodes join the node agent's first workload API
// server. A cluster that exists is left as it is.
func AKSCreateCluster(c *core.Cloud, sub, rg, name, location, version string) error {
	version = strings.TrimPrefix(version, "v")
	if version == "" {
		version = AKSDefaultVersion
	}
	if strings.Count(version, ".") == 1 {
		version += ".0"
	}
	_, err := updateAzureData(c, func(d *azureFaceData) error {
		if d.aksCluster(sub, rg, name) != nil {
			return nil
		}
		d.AKSClusters = append(d.AKSClusters, aksCluster{Subscription: sub, ResourceGroup: rg, Name: name,
			Location: strings.ToLower(location), Version: version, CreatedAt: c.Clock().Now().UTC(),
			NodeRG: "MC_" + rg + "_" + name + "_" + strings.ToLower(location)})
		return nil
	})
	return err
}

// PrepareSandbox implements server.SandboxFace: the AKS cluster examples/aks
// names (AKSDefaultClusterName in the default subscription, resource group
// and location), and the one `mpool up --sample aks` names (AKSSampleClusterName
// in its own resource group, at AKSSampleVersion unless version is given,
// so that the sample's pools can be upgraded), whose nodes join the node
// agent's API server.
func (*AzureFace) PrepareSandbox(c *core.Cloud, version string) error {
	if err := AKSCreateCluster(c, AzureDefaultSubscriptionID, AzureDefaultResourceGroup, AKSDefaultClusterName, AzureDefaultLocation, version); err != nil {
		return err
	}
	if version == "" {
		version = AKSSampleVersion
	}
	return AKSCreateCluster(c, AzureDefaultSubscriptionID, AKSSampleClusterName, AKSSampleClusterName, AzureDefaultLocation, version)
}

// aksRoutes are AKS's operations; rg is the path of a resource group's
// Microsoft.ContainerService provider below /subscriptions/{sub}.
func aksRoutes(rg string) []core.Route {
	cluster := rg + "/managedClusters/{cluster}"
	pool := cluster + "/agentPools/{pool}"
	return []core.Route{
		core.GetRoute(cluster, OpAKSManagedClustersGet),
		core.GetRoute(cluster+"/agentPools", OpAKSAgentPoolsList),
		{Path: pool, Ops: map[string]string{http.MethodPut: OpAKSAgentPoolsCreateOrUpdate, http.MethodGet: OpAKSAgentPoolsGet,
			http.MethodDelete: OpAKSAgentPoolsDelete}},
		core.PostRoute(pool+"/deleteMachines", OpAKSAgentPoolsDeleteMachines),
		core.PostRoute(pool+"/upgradeNodeImageVersion", OpAKSAgentPoolsUpgradeNodeImage),
		core.GetRoute(pool+"/machines", OpAKSMachinesList),
		core.GetRoute("providers/"+aksProvider+"/locations/{location}/operations/{operation}", OpAKSOperationStatus),
	}
}

func (h *azureHandler) aksHandlers() map[string]http.HandlerFunc {
	return map[string]http.HandlerFunc{
		OpAKSManagedClustersGet:         h.arm(h.getManagedCluster),
		OpAKSAgentPoolsCreateOrUpdate:   h.arm(h.putAgentPool),
		OpAKSAgentPoolsGet:              h.arm(h.getAgentPool),
		OpAKSAgentPoolsList:             h.arm(h.listAgentPools),
		OpAKSAgentPoolsDelete:           h.arm(h.deleteAgentPool),
		OpAKSAgentPoolsDeleteMachines:   h.arm(h.deleteMachines),
		OpAKSMachinesList:               h.arm(h.listMachines),
		OpAKSAgentPoolsUpgradeNodeImage: h.arm(h.upgradeNodeImage),
		OpAKSOperationStatus:            h.arm(h.operationStatus),
	}
}

func aksClusterID(c *aksCluster) string {
	return "/subscriptions/" + c.Subscription + "/resourceGroups/" + c.ResourceGroup + "/providers/" + aksProvider + "/managedClusters/" + c.Name
}

// clusterOr404 reads the request's cluster, or answers ARM's 404.
func (h *azureHandler) clusterOr404(w http.ResponseWriter, r *http.Request) (azureFaceData, *aksCluster, bool) {
	d := readAzureData(h.env.Cloud.FaceData(AzureFaceName))
	c := d.aksCluster(r.PathValue("sub"), r.PathValue("rg"), r.PathValue("cluster"))
	if c == nil {
		armNotFound(w, aksTypeManagedClusters, r.PathValue("cluster"), r.PathValue("rg"))
		return d, nil, false
	}
	return d, c, true
}

// getManagedCluster serves GET .../managedClusters/{cluster}.
func (h *azureHandler) getManagedCluster(w http.ResponseWriter, r *http.Request) {
	_, c, ok := h.clusterOr404(w, r)
	if !ok {
		return
	}
	props := map[string]any{
		"provisioningState": azureapi.ProvisioningSucceeded, "powerState": map[string]any{"code": "Running"},
		"kubernetesVersion": c.Version, "currentKubernetesVersion": c.Version, "nodeResourceGroup": c.NodeRG,
		"dnsPrefix": c.Name, "agentPoolProfiles": []any{},
	}
	if s := h.env.Cloud.Agent().Servers(); len(s) > 0 {
		props["fqdn"] = strings.TrimPrefix(s[0].Host, "https://")
	}
	admin.WriteJSON(w, http.StatusOK, map[string]any{
		"id": aksClusterID(c), "name": c.Name, "type": aksTypeManagedClusters, "location": c.Location,
		"identity": map[string]any{"type": "SystemAssigned"}, "sku": map[string]any{"name": "Base", "tier": "Free"},
		"properties": props,
	})
}

// aksScope is the core scope of a cluster's node resource group.
func aksScope(h *azureHandler, c *aksCluster) core.Scope {
	return h.env.Cloud.Scope(AzureFaceName, azureScope(c.Subscription, c.NodeRG))
}

// AKSScaleSetKey is the core's key of the scale set of agent pool pool of
// the AKS cluster name in resource group rg of subscription sub, whose
// node resource group is nodeRG.
func AKSScaleSetKey(sub, rg, name, nodeRG, pool string) core.GroupKey {
	c := aksCluster{Subscription: sub, ResourceGroup: rg, Name: name}
	return AzureGroupKey(sub, nodeRG, aksVMSSName(&c, pool))
}

// aksVMSSName is the pool's scale set, aks-<pool>-<8 digits>-vmss, the
// digits AKS derives from the cluster.
func aksVMSSName(c *aksCluster, pool string) string {
	sum := sha256.Sum256([]byte(c.key()))
	return fmt.Sprintf("aks-%s-%08d-vmss", pool, binary.BigEndian.Uint32(sum[:4])%100000000)
}

// aksImmutable are the agent pool properties AKS refuses to change.
var aksImmutable = []string{"vmSize", "osDiskSizeGB", "osDiskType", "availabilityZones", "maxPods", "osType",
	"scaleSetPriority", "spotMaxPrice", "enableNodePublicIP", "nodePublicIPPrefixID", "kubeletConfig", "linuxOSConfig",
	"vnetSubnetID", "enableFIPS", "enableEncryptionAtHost", "enableUltraSSD", "kubeletDiskType"}

// aksComputed are the properties AKS computes: dropped from what is stored.
var aksComputed = []string{"provisioningState", "powerState", "currentOrchestratorVersion", "nodeImageVersion"}

func numberOf(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	case float64:
		return int64(n), true
	}
	return 0, false
}

// putAgentPool serves PUT .../agentPools/{pool}: create or update, a
// long-running operation (201 or 200 with Azure-AsyncOperation).
func (h *azureHandler) putAgentPool(w http.ResponseWriter, r *http.Request) {
	res, ok := readARMBody(w, r)
	if !ok {
		return
	}
	name := r.PathValue("pool")
	if !aksPoolNameRE.MatchString(name) {
		writeARMTargetError(w, http.StatusBadRequest, azureapi.CodeInvalidParameter, "name",
			"The agent pool name '%s' is invalid: a Linux agent pool's name is a lowercase letter followed by at most 11 lowercase letters and digits.", name)
		return
	}
	props := child(res, true, "properties")
	for _, k := range aksComputed {
		delete(props, k)
	}
	if _, ok := props["osType"]; !ok {
		props["osType"] = "Linux"
	}
	if _, ok := props["mode"]; !ok {
		props["mode"] = NodePoolModeUser
	}
	if _, ok := props["type"]; !ok {
		props["type"] = "VirtualMachineScaleSets"
	}
	vmSize, _ := props["vmSize"].(string)
	sku := findAzureSku(vmSize)
	if sku == nil {
		writeARMTargetError(w, http.StatusBadRequest, "VMSizeNotSupported", "properties.vmSize",
			"The VM size '%s' is not supported for agent pool '%s'. Choose a size available in the cluster's location, such as Standard_D2s_v5 (see `az vm list-skus`).", vmSize, name)
		return
	}
	zones := aksZones(props)
	for _, z := range zones {
		if !slices.Contains(sku.Zones, z) {
			writeARMTargetError(w, http.StatusBadRequest, azureapi.CodeInvalidParameter, "properties.availabilityZones",
				"The VM size '%s' is not available in zone '%s' (available zones: %s).", sku.Name, z, strings.Join(sku.Zones, ", "))
			return
		}
	}
	if t, _ := props["type"].(string); t != "VirtualMachineScaleSets" {
		writeARMTargetError(w, http.StatusBadRequest, azureapi.CodeInvalidParameter, "properties.type", "The simulated AKS runs VirtualMachineScaleSets agent pools only, not '%s'.", t)
		return
	}
	if os, _ := props["osType"].(string); !strings.EqualFold(os, "Linux") {
		writeARMTargetError(w, http.StatusBadRequest, azureapi.CodeInvalidParameter, "properties.osType", "The simulated AKS runs Linux agent pools only, not '%s'.", os)
		return
	}
	mode, _ := props["mode"].(string)
	if mode != NodePoolModeSystem && mode != NodePoolModeUser {
		writeARMTargetError(w, http.StatusBadRequest, azureapi.CodeInvalidParameter, "properties.mode", "The agent pool mode '%s' is not one of System, User.", mode)
		return
	}
	count, hasCount := numberOf(props["count"])
	if !hasCount {
		count = 1
	}
	if count < 0 || count > AKSMaxNodesPerPool {
		writeARMTargetError(w, http.StatusBadRequest, azureapi.CodeInvalidParameter, "properties.count",
			"The agent pool count %d is not within 0 and %d.", count, AKSMaxNodesPerPool)
		return
	}
	auto, _ := props["enableAutoScaling"].(bool)
	minCount, hasMin := numberOf(props["minCount"])
	maxCount, hasMax := numberOf(props["maxCount"])
	if auto {
		switch {
		case !hasMin || !hasMax:
			writeARMTargetError(w, http.StatusBadRequest, azureapi.CodeInvalidParameter, "properties.minCount",
				"minCount and maxCount are required when enableAutoScaling is true.")
			return
		case minCount > maxCount || maxCount > AKSMaxNodesPerPool:
			writeARMTargetError(w, http.StatusBadRequest, azureapi.CodeInvalidParameter, "properties.maxCount",
				"The agent pool's minCount %d must be at most its maxCount %d, at most %d.", minCount, maxCount, AKSMaxNodesPerPool)
			return
		case count < minCount || count > maxCount:
			writeARMTargetError(w, http.StatusBadRequest, azureapi.CodeInvalidParameter, "properties.count",
				"The agent pool's count %d is not within its minCount %d and maxCount %d.", count, minCount, maxCount)
			return
		}
	}
	if mode == NodePoolModeSystem && (count < 1 || auto && minCount < 1) {
		writeARMTargetError(w, http.StatusBadRequest, azureapi.CodeInvalidParameter, "properties.count",
			"A System agent pool must have at least 1 node (count %d, minCount %d): set count (and minCount) to 1 or more, or use mode User.", count, minCount)
		return
	}
	if k, msg := validUpgradeSettings(props); k != "" {
		writeARMTargetError(w, http.StatusBadRequest, azureapi.CodeInvalidParameter, "properties.upgradeSettings."+k, "%s", msg)
		return
	}
	if p, _ := props["scaleSetPriority"].(string); p == "Spot" && mode == NodePoolModeSystem {
		writeARMTargetError(w, http.StatusBadRequest, azureapi.CodeInvalidParameter, "properties.scaleSetPriority", "A System agent pool cannot use Spot VMs.")
		return
	}

	var status int
	now := h.env.Cloud.Clock().Now()
	h.face.aksMu.Lock()
	defer h.face.aksMu.Unlock()
	_, c, ok := h.clusterOr404(w, r)
	if !ok {
		return
	}
	version, _ := props["orchestratorVersion"].(string)
	if version == "" {
		version = c.Version
		props["orchestratorVersion"] = version
	}
	p := c.pool(name)
	if p != nil && p.Deleting {
		if _, err := aksScope(h, c).GetGroup(groupName(p.VMSS)); core.CodeOf(err) == core.CodeNotFound {
			// Deleted: forgotten, and created anew.
			c.Pools = slices.DeleteFunc(c.Pools, func(q aksPool) bool { return q.Name == p.Name })
			p = nil
		}
	}
	if p == nil {
		if len(c.Pools) >= AKSMaxPoolsPerCluster {
			writeARMTargetError(w, http.StatusBadRequest, "AgentPoolCountExceeded", "", "A cluster has at most %d agent pools.", AKSMaxPoolsPerCluster)
			return
		}
		if !aksVersionAtMost(version, c.Version) {
			writeARMTargetError(w, http.StatusBadRequest, azureapi.CodeInvalidParameter, "properties.orchestratorVersion",
				"The agent pool's orchestratorVersion %s is newer than the control plane's %s.", version, c.Version)
			return
		}
		c.Pools = append(c.Pools, aksPool{Name: name, VMSS: aksVMSSName(c, name), Writing: azureapi.ProvisioningCreating, NodeImage: c.nodeImage()})
		p = &c.Pools[len(c.Pools)-1]
		status = http.StatusCreated
	} else {
		if p.Deleting {
			writeARMTargetError(w, http.StatusConflict, azureapi.CodeOperationNotAllowed, "", "Operation is not allowed: agent pool %s is being deleted.", name)
			return
		}
		was, is := aksWithDefaults(p.Properties), aksWithDefaults(props)
		for _, k := range aksImmutable {
			if !jsonEqual(was[k], is[k]) {
				writeARMTargetError(w, http.StatusBadRequest, azureapi.CodePropertyChangeNotAllowed, "properties."+k,
					"Changing property '%s' is not allowed: AKS cannot change it on an existing agent pool; create a new agent pool instead.", k)
				return
			}
		}
		if p.Upgrade != nil && p.Upgrade.Failed == nil {
			writeARMTargetError(w, http.StatusConflict, azureapi.CodeOperationNotAllowed, "",
				"Operation is not allowed because there's an in progress upgrade operation on agent pool %s (%s to %s).", name, p.Upgrade.From, p.Upgrade.To)
			return
		}
		if p.ScaleIn != nil && p.ScaleIn.Failed == nil {
			writeARMTargetError(w, http.StatusConflict, azureapi.CodeOperationNotAllowed, "",
				"Operation is not allowed because there's an in progress scale operation on agent pool %s (%d node(s) draining).", name, len(p.ScaleIn.Draining))
			return
		}
		keepUpgradeSettings(p.Properties, props)
		p.Writing = azureapi.ProvisioningUpdating
		old, _ := p.Properties["orchestratorVersion"].(string)
		if u := p.Upgrade; u != nil {
			// A write after a failed upgrade starts it again.
			old, p.Upgrade = u.From, nil
		}
		if old != version {
			switch {
			case !aksVersionAtMost(old, version):
				writeARMTargetError(w, http.StatusBadRequest, azureapi.CodeInvalidParameter, "properties.orchestratorVersion",
					"Downgrading an agent pool's orchestratorVersion from %s to %s is not allowed.", old, version)
				return
			case !aksVersionAtMost(version, c.Version):
				writeARMTargetError(w, http.StatusBadRequest, azureapi.CodeInvalidParameter, "properties.orchestratorVersion",
					"The agent pool's orchestratorVersion %s is newer than the control plane's %s: upgrade the control plane first.", version, c.Version)
				return
			}
			// A version upgrade moves the nodes to the newest image too.
			p.NodeImage = c.nodeImage()
			p.Upgrade = &aksUpgrade{From: old, To: version, Surge: aksMaxSurge(props, int32(count)), Hash: aksModelHash(version, p.NodeImage)}
			p.Writing = "Upgrading"
			// The upgrade replaces the nodes a failed scale-in kept.
			p.ScaleIn = nil
		} else if g, err := aksScope(h, c).GetGroup(groupName(p.VMSS)); err == nil && h.drains(p) {
			// A lower count: AKS drains the nodes it removes first.
			h.startScaleIn(p, g, int(count), now)
		}
		status = http.StatusOK
	}
	if !auto {
		delete(props, "minCount")
		delete(props, "maxCount")
	}
	props["count"] = count
	p.Properties, p.OpStart = props, now
	if p.Ticket == nil {
		if cfg := firstServer(h); cfg != nil {
			ctx, cancel := context.WithTimeout(r.Context(), aksCallTimeout)
			t, err := nodeagent.IssueJoinTicket(ctx, cfg, map[string]string{AKSLabelAgentPool: name},
				"AKS agent pool "+aksClusterID(c)+"/agentPools/"+name)
			cancel()
			if err != nil {
				writeARMError(w, http.StatusInternalServerError, azureapi.CodeInternalServerError, err.Error())
				return
			}
			p.Ticket = &t
		}
	}
	g, err := h.applyPoolVMSS(c, p, sku, zones, int32(count))
	if err == nil {
		err = h.saveAKSCluster(c)
	}
	if err != nil {
		writeAzureCloudError(w, err)
		return
	}
	out := aksPoolResource(c, p, g)
	h.setAKSOperationHeaders(w, r, azureOp{Kind: aksOpWrite, Name: c.Name + "/" + name, Start: now.UnixNano()}, c.Location, false)
	admin.WriteJSON(w, status, out)
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// aksVersionAtMost reports whether version a is at most b (major.minor.patch).
func aksVersionAtMost(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < 3; i++ {
		x, y := 0, 0
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			return x < y
		}
	}
	return true
}

func firstServer(h *azureHandler) *rest.Config {
	if s := h.env.Cloud.Agent().Servers(); len(s) > 0 {
		return s[0]
	}
	return nil
}

// aksNodeLabels are the labels an agent pool's Nodes register with.
func aksNodeLabels(c *aksCluster, p *aksPool) map[string]string {
	l := map[string]string{}
	if nl, ok := p.Properties["nodeLabels"].(map[string]any); ok {
		for k, v := range nl {
			l[k], _ = v.(string)
		}
	}
	mode, _ := p.Properties["mode"].(string)
	l[AKSLabelAgentPool], l["agentpool"] = p.Name, p.Name
	l[AKSLabelMode] = strings.ToLower(mode)
	l[AKSLabelCluster] = c.NodeRG
	l[AKSLabelNodeImage] = p.nodeImage()
	l["kubernetes.azure.com/role"] = "agent"
	l["kubernetes.azure.com/os-sku"] = "Ubuntu"
	if pr, _ := p.Properties["scaleSetPriority"].(string); pr == "Spot" {
		l[AKSLabelPriority] = "spot"
	}
	return l
}

// aksTaints are the pool's nodeTaints (key=value:Effect).
func aksTaints(p *aksPool) []corev1.Taint {
	var out []corev1.Taint
	ts, _ := p.Properties["nodeTaints"].([]any)
	for _, t := range ts {
		s, _ := t.(string)
		kv, effect, _ := strings.Cut(s, ":")
		k, v, _ := strings.Cut(kv, "=")
		out = append(out, corev1.Taint{Key: k, Value: v, Effect: corev1.TaintEffect(effect)})
	}
	if pr, _ := p.Properties["scaleSetPriority"].(string); pr == "Spot" {
		out = append(out, corev1.Taint{Key: AKSLabelPriority, Value: "spot", Effect: corev1.TaintEffectNoSchedule})
	}
	return out
}

// applyPoolVMSS writes the pool's scale set in the node resource group
// with count VMs. New VMs join with the pool's labels and taints; existing
// ones keep theirs.
func (h *azureHandler) applyPoolVMSS(c *aksCluster, p *aksPool, sku *azureSku, zones []string, count int32) (*core.Group, error) {
	version, _ := p.Properties["orchestratorVersion"].(string)
	prefix := strings.TrimSuffix(p.VMSS, "-vmss") + "-vmss"
	image := map[string]any{"id": "/subscriptions/109a5e88-712a-48ae-9078-9ca8b3c81345/resourceGroups/AKS-Ubuntu/providers/Microsoft.Compute/galleries/AKSUbuntu/images/2204gen2containerd/versions/202411.12.0"}
	res := map[string]any{
		"location": c.Location, "sku": map[string]any{"name": sku.Name, "tier": "Standard"},
		"tags": map[string]any{"aks-managed-poolName": p.Name, "aks-managed-orchestrator": "Kubernetes:" + version},
		"properties": map[string]any{"orchestrationMode": azureapi.OrchestrationUniform, "upgradePolicy": map[string]any{"mode": "Manual"},
			"virtualMachineProfile": map[string]any{
				"osProfile":      map[string]any{"computerNamePrefix": prefix, "adminUsername": "azureuser"},
				"storageProfile": map[string]any{"imageReference": image},
			}},
	}
	if len(zones) > 0 {
		res["zones"] = zones
	}
	now := h.env.Cloud.Clock().Now()
	sc := aksScope(h, c)
	gname := groupName(p.VMSS)
	old, gerr := sc.GetGroup(gname)
	gp := azureGroupPayload{Resource: res, Name: p.VMSS, Subscription: c.Subscription, ResourceGroup: strings.ToLower(c.NodeRG),
		Location: c.Location, Mode: azureapi.OrchestrationUniform, ComputerNamePrefix: prefix, AdminUsername: "azureuser", Image: image,
		Writing: azureapi.ProvisioningCreating, OpStart: now}
	if gerr == nil {
		op := readAzurePayload(old)
		gp.UniqueID, gp.TimeCreated, gp.Writing = op.UniqueID, op.TimeCreated, azureapi.ProvisioningUpdating
	} else {
		sum := sha256.Sum256([]byte(p.VMSS + now.String()))
		gp.UniqueID, gp.TimeCreated = core.UUIDFrom(sum[:16]), now
	}
	payload, err := json.Marshal(gp)
	if err != nil {
		return nil, err
	}
	tags := map[string]string{"aks-managed-poolName": p.Name}
	if t, ok := p.Properties["tags"].(map[string]any); ok {
		for k, v := range t {
			tags[k], _ = v.(string)
		}
	}
	model := core.Model{
		InstanceType: sku.Name, Image: p.nodeImage(), Zones: zones, Tags: tags,
		CustomData: aksCloudInit(c, p),
		Extra: map[string]string{
			core.ExtraCPU: strconv.Itoa(sku.VCPUs), core.ExtraMemory: strconv.Itoa(int(sku.MemoryGB*1024)) + "Mi",
			core.ExtraVersion: "v" + version,
		},
	}
	hash := aksModelHash(version, p.nodeImage())
	if p.Upgrade != nil {
		count += p.Upgrade.Surge
	}
	count += p.ScaleIn.extra()
	before := map[string]bool{}
	if gerr == nil {
		for _, in := range old.Instances {
			if in.State != core.StateDeleting {
				before[in.ID] = true
			}
		}
	}
	g, err := sc.ApplyGroup(gname, core.GroupSpec{Capacity: count, ModelHash: hash, Model: model, Payload: payload})
	if err != nil {
		return nil, err
	}
	// A scale-in: AKS removes the Nodes of the VMs it deletes.
	var gone []string
	for _, in := range g.Instances {
		if in.State == core.StateDeleting && before[in.ID] {
			gone = append(gone, in.Hostname)
		}
	}
	h.deleteNodes(p, gone)
	return g, nil
}

// aksModelHash is the core's model hash of a pool's nodes at version and
// node image: the VMs AKS creates for it carry it.
func aksModelHash(version, image string) string {
	sum := sha256.Sum256([]byte(version + "/" + image))
	return hex.EncodeToString(sum[:8])
}

// aksMaxSurge is the pool's upgradeSettings.maxSurge for count nodes: a
// number, or a percentage rounded up; AKS's default is 10%, at least one.
func aksMaxSurge(props map[string]any, count int32) int32 {
	v := "10%"
	if us, ok := props["upgradeSettings"].(map[string]any); ok {
		if m, ok := us["maxSurge"].(string); ok && m != "" {
			v = m
		}
	}
	if pct, ok := strings.CutSuffix(v, "%"); ok {
		n, _ := strconv.Atoi(pct)
		return max(1, int32((int(count)*n+99)/100))
	}
	n, _ := strconv.Atoi(v)
	return max(1, int32(n))
}

// advanceAKS moves the upgrades of the request's cluster on: AKS's own
// rolling replacement, advanced whenever the cluster is read (its
// pools, machines or operations), so it needs no loop and survives a
// restart of the cloud.
func (h *azureHandler) advanceAKS(sub, rg, cluster string) {
	h.face.aksMu.Lock()
	defer h.face.aksMu.Unlock()
	d := readAzureData(h.env.Cloud.FaceData(AzureFaceName))
	c := d.aksCluster(sub, rg, cluster)
	if c == nil {
		return
	}
	changed := false
	for i := range c.Pools {
		if p := &c.Pools[i]; p.Upgrade != nil && p.Upgrade.Failed == nil && !p.Deleting {
			changed = h.advanceUpgrade(c, p) || changed
		}
		if p := &c.Pools[i]; p.ScaleIn != nil && p.ScaleIn.Failed == nil && !p.Deleting {
			changed = h.advanceScaleIn(c, p) || changed
		}
	}
	if changed {
		_ = h.saveAKSCluster(c)
	}
}

// aksCloudInit is the bootstrap data AKS gives a pool's VMs: a kubeadm join
// of the workload cluster with the pool's token, labels and taints; empty
// without a workload API server (the VMs boot and never join).
func aksCloudInit(c *aksCluster, p *aksPool) []byte {
	t := p.Ticket
	if t == nil {
		return nil
	}
	j := cloudinit.JoinConfig{
		APIServerEndpoint: strings.TrimPrefix(strings.TrimPrefix(t.Endpoint, "https://"), "http://"),
		DiscoveryToken:    t.Token,
		CACertHashes:      []string{t.CAHash},
		Taints:            aksTaints(p),
		NodeLabels:        aksNodeLabels(c, p),
	}
	if mp, ok := numberOf(p.Properties["maxPods"]); ok {
		j.KubeletExtraArgs = map[string]string{"max-pods": strconv.FormatInt(mp, 10)}
	}
	return cloudinit.WriteJoin(j, false)
}

// deleteNodes deletes the named Nodes of the workload cluster, as AKS does
// with the VMs it removes.
func (h *azureHandler) deleteNodes(p *aksPool, names []string) {
	if len(names) == 0 {
		return
	}
	h.onWorkload(p, func(ctx context.Context, cs kubernetes.Interface) {
		for _, n := range names {
			_ = cs.CoreV1().Nodes().Delete(ctx, n, metav1.DeleteOptions{})
		}
	})
}

// onWorkload runs fn, bounded by aksCallTimeout, with a client of the
// workload cluster the pool's nodes join; not when it has none.
func (h *azureHandler) onWorkload(p *aksPool, fn func(context.Context, kubernetes.Interface)) {
	if p.Ticket == nil {
		return
	}
	cs := h.workload(p.Ticket.Endpoint)
	if cs == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), aksCallTimeout)
	defer cancel()
	fn(ctx, cs)
}

// workload returns a client of the workload API server at endpoint, nil
// when the node agent has none.
func (h *azureHandler) workload(endpoint string) kubernetes.Interface {
	for _, s := range h.env.Cloud.Agent().Servers() {
		if s.Host == endpoint {
			cs, err := kubernetes.NewForConfig(s)
			if err == nil {
				return cs
			}
		}
	}
	return nil
}

// aksPoolState is the pool's provisioningState: Deleting, the last write's
// (Creating, Updating) while its VMs boot, Failed when one failed,
// Succeeded otherwise.
func aksPoolState(p *aksPool, g *core.Group) string {
	switch {
	case p.Deleting:
		return azureapi.ProvisioningDeleting
	case g == nil:
		return azureapi.ProvisioningFailed
	case p.Upgrade != nil && p.Upgrade.Failed != nil:
		return azureapi.ProvisioningFailed
	case p.Upgrade != nil:
		return "Upgrading"
	case p.ScaleIn != nil && p.ScaleIn.Failed != nil:
		return azureapi.ProvisioningFailed
	case p.ScaleIn != nil:
		return "Scaling"
	}
	switch writeStatus(g, p.OpStart) {
	case azureapi.StatusInProgress:
		return p.Writing
	case azureapi.StatusFailed:
		return azureapi.ProvisioningFailed
	}
	return azureapi.ProvisioningSucceeded
}

// aksWithDefaults is props with AKS's defaults of the properties it
// reports when a write left them out (osDiskSizeGB, maxPods, osDiskType):
// a client that writes back what it read changes none of them.
func aksWithDefaults(props map[string]any) map[string]any {
	out := maps.Clone(props)
	if out == nil {
		out = map[string]any{}
	}
	for k, v := range map[string]any{"osDiskSizeGB": aksDefaultOSDiskSizeGB, "maxPods": aksMaxPods, "osDiskType": "Managed"} {
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	return out
}

// aksPoolResource is the agent pool as ARM returns it.
func aksPoolResource(c *aksCluster, p *aksPool, g *core.Group) map[string]any {
	props := deepCopy(p.Properties)
	if props == nil {
		props = map[string]any{}
	}
	props["provisioningState"] = aksPoolState(p, g)
	props["powerState"] = map[string]any{"code": "Running"}
	props["currentOrchestratorVersion"] = props["orchestratorVersion"]
	if p.Upgrade != nil {
		props["currentOrchestratorVersion"] = p.Upgrade.From
	}
	props["nodeImageVersion"] = p.nodeImage()
	if g != nil && p.Upgrade == nil && p.ScaleIn == nil {
		props["count"] = g.Capacity
	}
	props = aksWithDefaults(props)
	return map[string]any{
		"id":   aksClusterID(c) + "/agentPools/" + p.Name,
		"name": p.Name, "type": aksTypeAgentPools, "properties": props,
	}
}

// poolOr404 reads the request's cluster and agent pool, dropping a deleted
// pool whose scale set is gone, or answers ARM's 404.
func (h *azureHandler) poolOr404(w http.ResponseWriter, r *http.Request) (*aksCluster, *aksPool, *core.Group, bool) {
	_, c, ok := h.clusterOr404(w, r)
	if !ok {
		return nil, nil, nil, false
	}
	p := c.pool(r.PathValue("pool"))
	var g *core.Group
	if p != nil {
		g, _ = aksScope(h, c).GetGroup(groupName(p.VMSS))
		if p.Deleting && g == nil {
			p = nil // deleted
		}
	}
	if p == nil {
		armNotFound(w, aksTypeAgentPools, r.PathValue("cluster")+"/"+r.PathValue("pool"), r.PathValue("rg"))
		return nil, nil, nil, false
	}
	return c, p, g, true
}

// saveAKSCluster writes c into the face's data (with aksMu held).
func (h *azureHandler) saveAKSCluster(c *aksCluster) error {
	_, err := updateAzureData(h.env.Cloud, func(d *azureFaceData) error {
		if dc := d.aksCluster(c.Subscription, c.ResourceGroup, c.Name); dc != nil {
			*dc = *c
			return nil
		}
		return fmt.Errorf("managed cluster %s is gone", c.Name)
	})
	return err
}

// getAgentPool serves GET .../agentPools/{pool}.
func (h *azureHandler) getAgentPool(w http.ResponseWriter, r *http.Request) {
	h.advanceAKS(r.PathValue("sub"), r.PathValue("rg"), r.PathValue("cluster"))
	c, p, g, ok := h.poolOr404(w, r)
	if !ok {
		return
	}
	admin.WriteJSON(w, http.StatusOK, aksPoolResource(c, p, g))
}

// listAgentPools serves GET .../agentPools.
func (h *azureHandler) listAgentPools(w http.ResponseWriter, r *http.Request) {
	h.advanceAKS(r.PathValue("sub"), r.PathValue("rg"), r.PathValue("cluster"))
	_, c, ok := h.clusterOr404(w, r)
	if !ok {
		return
	}
	out := []map[string]any{}
	for i := range c.Pools {
		p := &c.Pools[i]
		g, _ := aksScope(h, c).GetGroup(groupName(p.VMSS))
		if p.Deleting && g == nil {
			continue
		}
		out = append(out, aksPoolResource(c, p, g))
	}
	admin.WriteJSON(w, http.StatusOK, map[string]any{"value": out})
}

// deleteAgentPool serves DELETE .../agentPools/{pool}: 202 and an
// operation (204 when there is no such pool). The scale set, the Nodes and
// the pool's bootstrap token go. A System pool that is the cluster's last
// is refused, as AKS refuses it.
func (h *azureHandler) deleteAgentPool(w http.ResponseWriter, r *http.Request) {
	h.face.aksMu.Lock()
	defer h.face.aksMu.Unlock()
	_, c, ok := h.clusterOr404(w, r)
	if !ok {
		return
	}
	q := c.pool(r.PathValue("pool"))
	if q == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	q.Deleting = true
	p := *q
	if err := h.saveAKSCluster(c); err != nil {
		writeAzureCloudError(w, err)
		return
	}
	if _, err := aksScope(h, c).DeleteGroup(groupName(p.VMSS)); err != nil && core.CodeOf(err) != core.CodeNotFound {
		writeAzureCloudError(w, err)
		return
	}
	h.cleanUpPool(&p)
	h.setAKSOperationHeaders(w, r, azureOp{Kind: aksOpDelete, Name: c.Name + "/" + p.Name, Start: h.env.Cloud.Clock().Now().UnixNano()}, c.Location, true)
	w.WriteHeader(http.StatusAccepted)
}

// cleanUpPool deletes a deleted pool's Nodes and bootstrap token from the
// workload cluster.
func (h *azureHandler) cleanUpPool(p *aksPool) {
	h.onWorkload(p, func(ctx context.Context, cs kubernetes.Interface) {
		sel := metav1.ListOptions{LabelSelector: AKSLabelAgentPool + "=" + p.Name}
		_ = cs.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, sel)
		_ = cs.CoreV1().Secrets(metav1.NamespaceSystem).DeleteCollection(ctx, metav1.DeleteOptions{}, sel)
	})
}

// aksMachine is a machine of an agent pool as ARM returns it.
func aksMachine(c *aksCluster, p *aksPool, g *core.Group, in core.Instance) map[string]any {
	gp := readAzurePayload(g)
	props := map[string]any{"resourceId": azureVMSSID(gp.Subscription, gp.ResourceGroup, gp.Name) + "/virtualMachines/" + in.ID}
	if in.PrivateIP != "" {
		props["network"] = map[string]any{"ipAddresses": []any{map[string]any{"family": "IPv4", "ip": in.PrivateIP}}}
	}
	return map[string]any{
		"id":   aksClusterID(c) + "/agentPools/" + p.Name + "/machines/" + in.Hostname,
		"name": in.Hostname, "type": aksTypeMachines, "properties": props,
	}
}

// listMachines serves GET .../agentPools/{pool}/machines: the pool's VMs
// not being deleted, named as their Nodes.
func (h *azureHandler) listMachines(w http.ResponseWriter, r *http.Request) {
	h.advanceAKS(r.PathValue("sub"), r.PathValue("rg"), r.PathValue("cluster"))
	c, p, g, ok := h.poolOr404(w, r)
	if !ok {
		return
	}
	out := []map[string]any{}
	if g != nil {
		for _, in := range g.Instances {
			if in.State != core.StateDeleting {
				out = append(out, aksMachine(c, p, g, in))
			}
		}
	}
	admin.WriteJSON(w, http.StatusOK, map[string]any{"value": out})
}

// deleteMachines serves POST .../agentPools/{pool}/deleteMachines
// ({"machineNames": [...]}): the machines' VMs and Nodes are deleted and
// the pool's count lowered by their number; a name the pool does not have
// is refused and nothing deleted.
func (h *azureHandler) deleteMachines(w http.ResponseWriter, r *http.Request) {
	var req struct {
		MachineNames []string `json:"machineNames"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, admin.MaxBody)).Decode(&req); err != nil || len(req.MachineNames) == 0 {
		writeARMTargetError(w, http.StatusBadRequest, azureapi.CodeInvalidParameter, "machineNames", "Required parameter 'machineNames' is missing or empty.")
		return
	}
	h.face.aksMu.Lock()
	defer h.face.aksMu.Unlock()
	c, p, g, ok := h.poolOr404(w, r)
	if !ok {
		return
	}
	if g == nil || p.Deleting {
		writeARMTargetError(w, http.StatusConflict, azureapi.CodeOperationNotAllowed, "", "Operation is not allowed: agent pool %s is being deleted.", p.Name)
		return
	}
	if p.Upgrade != nil && p.Upgrade.Failed == nil || p.ScaleIn != nil && p.ScaleIn.Failed == nil {
		writeARMTargetError(w, http.StatusConflict, azureapi.CodeOperationNotAllowed, "", "Operation is not allowed because there's an in progress operation on agent pool %s.", p.Name)
		return
	}
	byName := map[string]core.Instance{}
	for _, in := range g.Instances {
		byName[strings.ToLower(in.Hostname)] = in
	}
	var ids, names, opIDs []string
	for _, n := range req.MachineNames {
		in, ok := byName[strings.ToLower(n)]
		if !ok {
			writeARMTargetError(w, http.StatusBadRequest, azureapi.CodeInvalidParameter, "machineNames",
				"The machine '%s' is not a machine of agent pool '%s'.", n, p.Name)
			return
		}
		if in.State != core.StateDeleting {
			ids, names = append(ids, in.ID), append(names, in.Hostname)
		}
		opIDs = append(opIDs, in.ID)
	}
	mode, _ := p.Properties["mode"].(string)
	live := 0
	for _, in := range g.Instances {
		if in.State != core.StateDeleting {
			live++
		}
	}
	if mode == NodePoolModeSystem && live-len(ids) < 1 {
		writeARMTargetError(w, http.StatusBadRequest, azureapi.CodeInvalidParameter, "machineNames",
			"A System agent pool must keep at least 1 node: deleting %d of its %d machines is not allowed.", len(ids), live)
		return
	}
	now := h.env.Cloud.Clock().Now()
	if len(ids) > 0 && h.drains(p) {
		// AKS drains the machines first (advanceScaleIn deletes them); the
		// count is lowered by their number at once.
		if p.ScaleIn != nil && p.ScaleIn.Failed != nil {
			p.ScaleIn.resume(now)
		}
		if p.ScaleIn == nil {
			p.ScaleIn = &aksScaleIn{Draining: map[string]time.Time{}}
		}
		for _, id := range ids {
			p.ScaleIn.Draining[id] = now
		}
		count, _ := numberOf(p.Properties["count"])
		p.Properties["count"], p.OpStart = max(0, count-int64(len(ids))), now
		if err := h.saveAKSCluster(c); err != nil {
			writeAzureCloudError(w, err)
			return
		}
		ids = nil
	}
	if len(ids) > 0 {
		g2, err := aksScope(h, c).DeleteInstances(groupName(p.VMSS), ids)
		if err != nil {
			writeAzureCloudError(w, err)
			return
		}
		p.Properties["count"] = g2.Capacity
		if err := h.saveAKSCluster(c); err != nil {
			writeAzureCloudError(w, err)
			return
		}
		h.deleteNodes(p, names)
	}
	h.setAKSOperationHeaders(w, r, azureOp{Kind: aksOpDeleteMachines, Name: c.Name + "/" + p.Name, IDs: opIDs, Start: now.UnixNano()}, c.Location, true)
	w.WriteHeader(http.StatusAccepted)
}

// setAKSOperationHeaders sets the Azure-AsyncOperation (and Location) of an
// AKS operation, under Microsoft.ContainerService's operations.
func (h *azureHandler) setAKSOperationHeaders(w http.ResponseWriter, r *http.Request, op azureOp, region string, location bool) {
	h.setProviderOperationHeaders(w, r, aksProvider, op, region, location)
}

// aksOperationStatus is the status of an AKS operation: a write runs while
// the VMs it created boot; a delete while the scale set exists; a
// deleteMachines while its VMs do.
func (h *azureHandler) aksOperationStatus(op azureOp, start time.Time) (string, *azureapi.ErrorBody) {
	sub, rg, _ := strings.Cut(strings.TrimPrefix(op.Scope, "/subscriptions/"), "/resourceGroups/")
	cluster, pool, _ := strings.Cut(op.Name, "/")
	h.advanceAKS(sub, rg, cluster)
	d := readAzureData(h.env.Cloud.FaceData(AzureFaceName))
	c := d.aksCluster(sub, rg, cluster)
	var p *aksPool
	var g *core.Group
	if c != nil {
		if p = c.pool(pool); p != nil {
			g, _ = aksScope(h, c).GetGroup(groupName(p.VMSS))
		}
	}
	switch op.Kind {
	case aksOpWrite:
		if p == nil || p.Deleting || g == nil {
			return azureapi.StatusFailed, &azureapi.ErrorBody{Code: "Canceled", Message: "The agent pool was deleted while the operation was in progress."}
		}
		if p.Upgrade != nil {
			if f := p.Upgrade.Failed; f != nil {
				return azureapi.StatusFailed, f
			}
			return azureapi.StatusInProgress, nil
		}
		if s := p.ScaleIn; s != nil {
			if s.Failed != nil {
				return azureapi.StatusFailed, s.Failed
			}
			return azureapi.StatusInProgress, nil
		}
		st := writeStatus(g, start)
		if st == azureapi.StatusFailed {
			return st, &azureapi.ErrorBody{Code: "VMExtensionProvisioningError", Message: "One or more nodes of the agent pool failed to provision (simulated boot failure)."}
		}
		return st, nil
	case aksOpDelete:
		if g != nil {
			return azureapi.StatusInProgress, nil
		}
	case aksOpDeleteMachines:
		if s := p.ScaleIn; s != nil && s.Failed != nil && slices.ContainsFunc(s.Kept, func(id string) bool { return slices.Contains(op.IDs, id) }) {
			return azureapi.StatusFailed, s.Failed
		}
		if g != nil && slices.ContainsFunc(g.Instances, func(in core.Instance) bool { return slices.Contains(op.IDs, in.ID) }) {
			return azureapi.StatusInProgress, nil
		}
	}
	return azureapi.StatusSucceeded, nil
}

// aksZones are an agent pool's properties.availabilityZones (an entry that
// is no string reads as "", a zone no VM size has).
func aksZones(props map[string]any) []string {
	var zones []string
	if zs, ok := props["availabilityZones"].([]any); ok {
		for _, z := range zs {
			s, _ := z.(string)
			zones = append(zones, s)
		}
	}
	return zones
}
