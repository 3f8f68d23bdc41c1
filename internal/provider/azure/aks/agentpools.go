package aks

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	azureprovider "github.com/mpool-dev/mpool/internal/provider/azure"
	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// Tags mpool reads on an agent pool.
const (
	// TagModelHash is the agent pool's tag holding the model hash.
	TagModelHash = azureprovider.TagModelHash
	// TagModelTarget is the agent pool's tag holding the Kubernetes version
	// the model hash stands for.
	TagModelTarget = "mpool.dev/model-target"
)

// AgentPools is scalegroup.ScaleGroup on the agent pools of AKS clusters,
// through armcontainerservice. It keeps nothing between calls: the agent
// pool's tags carry the model hash.
type AgentPools struct {
	opts    azureprovider.Options
	armOpts arm.ClientOptions
	clients kit.ClientCache[clientKey, *sdkClients]
	writes  writes
}

var _ scalegroup.ScaleGroup = (*AgentPools)(nil)

type clientKey struct {
	subscription string
	cred         azcore.TokenCredential
}

type sdkClients struct {
	pools    *armcontainerservice.AgentPoolsClient
	machines *armcontainerservice.MachinesClient
}

// New returns the AKS ScaleGroup. opts.Credentials is required.
func New(opts azureprovider.Options) (*AgentPools, error) {
	opts, co, err := azureprovider.ClientOptions(opts)
	if err != nil {
		return nil, fmt.Errorf("aks agent pools: %w", err)
	}
	return &AgentPools{opts: opts, armOpts: co}, nil
}

// Capabilities implements scalegroup.ScaleGroup: AKS runs its agent pools'
// rollouts and scale-ins itself.
func (*AgentPools) Capabilities() scalegroup.Capabilities {
	return scalegroup.Capabilities{CloudRollouts: true}
}

// cluster is where an agent pool lives.
type cluster struct {
	subscription, resourceGroup, name string
}

// parseRef parses a Ref's scope, the AKS cluster's ID.
func parseRef(ref scalegroup.Ref) (cluster, error) {
	segs := strings.Split(ref.Scope, "/")
	if len(segs) != 9 || segs[0] != "" || !strings.EqualFold(segs[1], "subscriptions") || !strings.EqualFold(segs[3], "resourceGroups") ||
		!strings.EqualFold(segs[5], "providers") || !strings.EqualFold(segs[6], "Microsoft.ContainerService") || !strings.EqualFold(segs[7], "managedClusters") ||
		segs[2] == "" || segs[4] == "" || segs[8] == "" {
		return cluster{}, scalegroup.NewInvalid(fmt.Sprintf("scope %q of agent pool %s is not an AKS cluster's ID, /subscriptions/<subscription>/resourceGroups/<name>/providers/Microsoft.ContainerService/managedClusters/<name>", ref.Scope, ref.Name))
	}
	return cluster{subscription: segs[2], resourceGroup: segs[4], name: segs[8]}, nil
}

func (s *AgentPools) resolve(ctx context.Context, ref scalegroup.Ref) (cluster, *sdkClients, error) {
	at, err := parseRef(ref)
	if err != nil {
		return at, nil, err
	}
	cred, err := s.opts.Credentials.TokenCredential(ctx, ref)
	if err != nil {
		return at, nil, err
	}
	c, err := s.clients.Get(clientKey{at.subscription, cred}, func() (*sdkClients, error) {
		f, err := armcontainerservice.NewClientFactory(at.subscription, cred, &s.armOpts)
		if err != nil {
			return nil, err
		}
		return &sdkClients{pools: f.NewAgentPoolsClient(), machines: f.NewMachinesClient()}, nil
	})
	return at, c, err
}

// Get implements scalegroup.ScaleGroup: the agent pool's GET and its
// machines list. The operation the pool recorded (its resume token, from
// an earlier process) is taken as mpool's when this process started none.
func (s *AgentPools) Get(ctx context.Context, ref scalegroup.Ref) (*scalegroup.Group, error) {
	at, c, err := s.resolve(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("getting agent pool %s: %w", ref, err)
	}
	if op, ok := scalegroup.RecordedOperation(ctx); ok {
		s.writes.recorded(ref, op)
	}
	res, err := c.pools.Get(ctx, at.resourceGroup, at.name, ref.Name, nil)
	if err != nil {
		err = azureprovider.CloudError(err, ref)
		if scalegroup.IsNotFound(err) {
			s.writes.gone(ref)
		}
		return nil, fmt.Errorf("getting agent pool %s: %w", ref, err)
	}
	return s.group(ctx, c, at, ref, &res.AgentPool)
}

// group is the agent pool ap with its machines.
func (s *AgentPools) group(ctx context.Context, c *sdkClients, at cluster, ref scalegroup.Ref, ap *armcontainerservice.AgentPool) (*scalegroup.Group, error) {
	var machines []*armcontainerservice.Machine
	pager := c.machines.NewListPager(at.resourceGroup, at.name, ref.Name, nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing the machines of agent pool %s: %w", ref, azureprovider.CloudError(err, ref))
		}
		machines = append(machines, page.Value...)
	}
	props := ap.Properties
	if props == nil {
		props = &armcontainerservice.ManagedClusterAgentPoolProfileProperties{}
	}
	g := &scalegroup.Group{Name: ref.Name, Capacity: ptr.Deref(props.Count, 0)}
	if ptr.Deref(props.Tags[TagModelTarget], "") == ptr.Deref(props.CurrentOrchestratorVersion, "") {
		g.ModelHash = ptr.Deref(props.Tags[TagModelHash], "")
	}
	switch state := ptr.Deref(props.ProvisioningState, ""); state {
	case "Succeeded", "":
		s.writes.succeeded(ref)
	case "Failed":
		g.Failed, g.Message = true, s.failedMessage(ctx, c, at, ref)
	default:
		typ := scalegroup.OperationUpdate
		switch state {
		case "Deleting":
			typ = scalegroup.OperationDelete
		case "Scaling":
			typ = scalegroup.OperationScale
		}
		g.Operation = &scalegroup.Operation{ID: ref.Scope + "/agentPools/" + ref.Name, Type: typ, Message: "AKS agent pool is " + state,
			ResumeToken: s.writes.inFlight(ref)}
	}
	for _, m := range machines {
		if m == nil || m.Name == nil {
			continue
		}
		in := scalegroup.Instance{ID: *m.Name, State: scalegroup.StateRunning, ModelHash: g.ModelHash}
		if m.Properties != nil && m.Properties.ResourceID != nil {
			in.ProviderID = "azure://" + *m.Properties.ResourceID
		}
		g.Instances = append(g.Instances, in)
	}
	slices.SortFunc(g.Instances, func(a, b scalegroup.Instance) int { return strings.Compare(a.ID, b.ID) })
	return g, nil
}

// desired is the agent pool spec asks for, with capacity as its count.
func desired(spec scalegroup.GroupSpec) (*armcontainerservice.ManagedClusterAgentPoolProfileProperties, error) {
	ap, _ := spec.Model.Provider.(AgentPool)
	st, _ := spec.Model.InPlace.(Settings)
	if st.Mode == "" {
		st.Mode = "User"
	}
	version := strings.TrimPrefix(spec.Model.Version, "v")
	tags := map[string]*string{}
	for k, v := range spec.Model.Tags {
		tags[k] = to.Ptr(v)
	}
	tags[TagModelHash], tags[TagModelTarget] = to.Ptr(spec.ModelHash), to.Ptr(version)
	p := &armcontainerservice.ManagedClusterAgentPoolProfileProperties{
		Count:  to.Ptr(st.count(spec.Capacity)),
		VMSize: to.Ptr(spec.Model.InstanceType),
		Mode:   to.Ptr(armcontainerservice.AgentPoolMode(st.Mode)),
		Type:   to.Ptr(armcontainerservice.AgentPoolTypeVirtualMachineScaleSets),
		OSType: to.Ptr(armcontainerservice.OSType(ap.OSType)),
		Tags:   tags,
	}
	if version != "" {
		p.OrchestratorVersion = to.Ptr(version)
	}
	for _, z := range spec.Model.Zones {
		p.AvailabilityZones = append(p.AvailabilityZones, to.Ptr(z))
	}
	if len(st.Labels) > 0 {
		p.NodeLabels = map[string]*string{}
		for k, v := range st.Labels {
			p.NodeLabels[k] = to.Ptr(v)
		}
	}
	for _, t := range st.Taints {
		p.NodeTaints = append(p.NodeTaints, to.Ptr(t))
	}
	if st.ScaleDownMode != "" {
		p.ScaleDownMode = to.Ptr(armcontainerservice.ScaleDownMode(st.ScaleDownMode))
	}
	if st.AutoScaling {
		p.EnableAutoScaling, p.MinCount, p.MaxCount = to.Ptr(true), to.Ptr(st.MinCount), to.Ptr(st.MaxCount)
	}
	if st.DrainTimeoutInMinutes > 0 {
		p.UpgradeSettings = &armcontainerservice.AgentPoolUpgradeSettings{DrainTimeoutInMinutes: to.Ptr(st.DrainTimeoutInMinutes)}
	}
	if ap.OSDiskSizeGB > 0 {
		p.OSDiskSizeGB = to.Ptr(ap.OSDiskSizeGB)
	}
	if ap.OSDiskType != "" {
		p.OSDiskType = to.Ptr(armcontainerservice.OSDiskType(ap.OSDiskType))
	}
	if ap.MaxPods > 0 {
		p.MaxPods = to.Ptr(ap.MaxPods)
	}
	if ap.ScaleSetPriority != "" {
		p.ScaleSetPriority = to.Ptr(armcontainerservice.ScaleSetPriority(ap.ScaleSetPriority))
	}
	if ap.SpotMaxPrice != "" {
		var f float32
		if _, err := fmt.Sscan(ap.SpotMaxPrice, &f); err != nil {
			return nil, scalegroup.NewInvalid("spec.spotMaxPrice " + ap.SpotMaxPrice + " is not a number")
		}
		p.SpotMaxPrice = to.Ptr(f)
	}
	if ap.VnetSubnetID != "" {
		p.VnetSubnetID = to.Ptr(ap.VnetSubnetID)
	}
	if ap.EnableNodePublicIP {
		p.EnableNodePublicIP = to.Ptr(true)
	}
	if ap.NodePublicIPPrefixID != "" {
		p.NodePublicIPPrefixID = to.Ptr(ap.NodePublicIPPrefixID)
	}
	if ap.EnableFIPS {
		p.EnableFIPS = to.Ptr(true)
	}
	if ap.EnableEncryptionAtHost {
		p.EnableEncryptionAtHost = to.Ptr(true)
	}
	if k := ap.KubeletConfig; k != nil {
		p.KubeletConfig = &armcontainerservice.KubeletConfig{
			CPUManagerPolicy: k.CPUManagerPolicy, CPUCfsQuota: k.CPUCfsQuota, CPUCfsQuotaPeriod: k.CPUCfsQuotaPeriod,
			ImageGcHighThreshold: k.ImageGcHighThreshold, ImageGcLowThreshold: k.ImageGcLowThreshold,
			TopologyManagerPolicy: k.TopologyManagerPolicy, FailSwapOn: k.FailSwapOn,
			ContainerLogMaxSizeMB: k.ContainerLogMaxSizeMB, ContainerLogMaxFiles: k.ContainerLogMaxFiles, PodMaxPids: k.PodMaxPids,
		}
		for _, s := range k.AllowedUnsafeSysctls {
			p.KubeletConfig.AllowedUnsafeSysctls = append(p.KubeletConfig.AllowedUnsafeSysctls, to.Ptr(s))
		}
	}
	if l := ap.LinuxOSConfig; l != nil {
		p.LinuxOSConfig = &armcontainerservice.LinuxOSConfig{SwapFileSizeMB: l.SwapFileSizeMB,
			TransparentHugePageDefrag: l.TransparentHugePageDefrag, TransparentHugePageEnabled: l.TransparentHugePageEnabled}
	}
	return p, nil
}

// inPlaceEqual reports whether the agent pool cur already has what mpool
// sets on it: count, version, tags, mode, labels, taints, autoscaling,
// the drain timeout.
func inPlaceEqual(cur, want *armcontainerservice.ManagedClusterAgentPoolProfileProperties) bool {
	str := func(p *string) string { return ptr.Deref(p, "") }
	strs := func(m map[string]*string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = str(v)
		}
		return out
	}
	list := func(l []*string) []string {
		var out []string
		for _, s := range l {
			out = append(out, str(s))
		}
		return out
	}
	return ptr.Deref(cur.Count, 0) == ptr.Deref(want.Count, 0) &&
		(want.OrchestratorVersion == nil || str(cur.OrchestratorVersion) == str(want.OrchestratorVersion)) &&
		maps.Equal(strs(cur.Tags), strs(want.Tags)) && maps.Equal(strs(cur.NodeLabels), strs(want.NodeLabels)) &&
		slices.Equal(list(cur.NodeTaints), list(want.NodeTaints)) &&
		ptr.Deref(cur.Mode, "") == ptr.Deref(want.Mode, "") &&
		ptr.Deref(cur.EnableAutoScaling, false) == ptr.Deref(want.EnableAutoScaling, false) &&
		ptr.Deref(cur.MinCount, 0) == ptr.Deref(want.MinCount, 0) && ptr.Deref(cur.MaxCount, 0) == ptr.Deref(want.MaxCount, 0) &&
		(want.ScaleDownMode == nil || ptr.Deref(cur.ScaleDownMode, "") == *want.ScaleDownMode) &&
		(want.UpgradeSettings == nil || cur.UpgradeSettings != nil &&
			ptr.Deref(cur.UpgradeSettings.DrainTimeoutInMinutes, 0) == ptr.Deref(want.UpgradeSettings.DrainTimeoutInMinutes, 0))
}

// Apply implements scalegroup.ScaleGroup: it reads the agent pool and
// writes it (one PUT, whose long-running operation it does not wait for)
// only when what mpool sets differs, or when the pool is Failed (the
// engine retries a Failed group with backoff: Group.Failed). A change AKS
// cannot make in place is AKS's to refuse (Invalid, naming the property).
func (s *AgentPools) Apply(ctx context.Context, ref scalegroup.Ref, spec scalegroup.GroupSpec) (*scalegroup.Group, error) {
	at, c, err := s.resolve(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("applying agent pool %s: %w", ref, err)
	}
	want, err := desired(spec)
	if err != nil {
		return nil, fmt.Errorf("applying agent pool %s: %w", ref, err)
	}
	res, err := c.pools.Get(ctx, at.resourceGroup, at.name, ref.Name, nil)
	switch err = azureprovider.CloudError(err, ref); {
	case err == nil && res.Properties != nil && ptr.Deref(res.Properties.ProvisioningState, "") == "Failed":
		// Failed: the engine's retry, sent again as it is.
	case err == nil && res.Properties != nil && inPlaceEqual(res.Properties, want):
		return s.group(ctx, c, at, ref, &res.AgentPool)
	case err != nil && !scalegroup.IsNotFound(err):
		return nil, fmt.Errorf("applying agent pool %s: %w", ref, err)
	}
	p, err := c.pools.BeginCreateOrUpdate(ctx, at.resourceGroup, at.name, ref.Name, armcontainerservice.AgentPool{Properties: want}, nil)
	if err != nil {
		return nil, fmt.Errorf("writing agent pool %s: %w", ref, azureprovider.CloudError(err, ref))
	}
	if tok, err := p.ResumeToken(); err == nil {
		s.writes.started(ref, methodPut, tok)
	}
	return s.Get(ctx, ref)
}

// DeleteInstances implements scalegroup.ScaleGroup: the agent pool's
// deleteMachines of those of ids it has (AKS lowers the count by their
// number).
func (s *AgentPools) DeleteInstances(ctx context.Context, ref scalegroup.Ref, ids []string) error {
	ids = kit.UniqueIDs(ids)
	if len(ids) == 0 {
		return nil
	}
	g, err := s.Get(ctx, ref)
	if scalegroup.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var names []*string
	for _, in := range g.Instances {
		if slices.Contains(ids, in.ID) {
			names = append(names, to.Ptr(in.ID))
		}
	}
	if len(names) == 0 {
		return nil
	}
	at, c, err := s.resolve(ctx, ref)
	if err != nil {
		return err
	}
	_, err = c.pools.BeginDeleteMachines(ctx, at.resourceGroup, at.name, ref.Name, armcontainerservice.AgentPoolDeleteMachinesParameter{MachineNames: names}, nil)
	if err = azureprovider.CloudError(err, ref); err != nil && !scalegroup.IsNotFound(err) {
		return fmt.Errorf("deleting machines of agent pool %s: %w", ref, err)
	}
	return nil
}

// Delete implements scalegroup.ScaleGroup: the agent pool's DELETE.
func (s *AgentPools) Delete(ctx context.Context, ref scalegroup.Ref) error {
	at, c, err := s.resolve(ctx, ref)
	if err != nil {
		return fmt.Errorf("deleting agent pool %s: %w", ref, err)
	}
	p, err := c.pools.BeginDelete(ctx, at.resourceGroup, at.name, ref.Name, nil)
	if err = azureprovider.CloudError(err, ref); err != nil && !scalegroup.IsNotFound(err) {
		return fmt.Errorf("deleting agent pool %s: %w", ref, err)
	}
	if err == nil {
		if tok, err := p.ResumeToken(); err == nil {
			s.writes.started(ref, methodDelete, tok)
		}
	}
	return nil
}
