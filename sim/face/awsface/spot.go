package awsface

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mpool-dev/mpool/sim/admin"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/awsapi"
)

// The AWS face's mixed instances policies and Spot instances.
//
// A group with a MixedInstancesPolicy launches each new instance On-Demand
// or Spot by AWS's rule: the first OnDemandBaseCapacity instances
// On-Demand, then OnDemandPercentageAboveBaseCapacity percent of the
// capacity above the base (rounded up, in favour of On-Demand), the rest
// Spot. Its instance type comes from the overrides: On-Demand by the
// OnDemandAllocationStrategy (prioritized: the first override;
// lowest-price: the cheapest), Spot by the SpotAllocationStrategy
// (lowest-price: the cheapest; capacity-optimized-prioritized: the first;
// capacity-optimized and price-capacity-optimized: spread over the
// overrides, the type with the fewest Spot instances first). Prices are
// the simulation's (by vCPUs, then memory). WeightedCapacity is kept and
// reported but every instance counts as one unit of capacity. Spot
// instances do not count against the On-Demand vCPU quota
// (AWSFace.VCPUQuota).
//
// A Spot instance is interrupted by AWSInterruptSpot (the admin endpoint
// POST /admin/aws/spot-interruptions). With CapacityRebalance on, the
// group takes it as a rebalance recommendation: it launches a replacement
// at once, above the desired capacity, and terminates the at-risk
// instance once the replacement is InService (booted and joined), or when
// the interruption notice (AWSFace.SpotInterruptionNotice) runs out,
// whichever comes first. Without it, the instance is terminated when the
// notice runs out, and the group launches a replacement to keep its
// desired capacity. Both are recorded as scaling activities.

// AWSDefaultSpotInterruptionNotice is EC2's Spot instance interruption
// notice: the time between the notice and the instance's termination.
const AWSDefaultSpotInterruptionNotice = 2 * time.Minute

// Markets of an instance of a mixed instances policy (awsInstancePayload.Market).
const (
	awsMarketOnDemand = "on-demand"
	awsMarketSpot     = "spot"
	// awsMarketPending: launched under a mixed instances policy, its market
	// and type not assigned yet (assignMarkets does, in the same request).
	awsMarketPending = "pending"
)

// awsSpotDriveTick is how often an interruption's driver looks at its
// group (cloud clock).
const awsSpotDriveTick = 100 * time.Millisecond

// awsMixed is a group's mixed instances policy as the face keeps it, AWS's
// defaults filled in.
type awsMixed struct {
	Overrides                  []awsapi.LaunchTemplateOverrides `json:"overrides,omitempty"`
	OnDemandAllocationStrategy string                           `json:"onDemandAllocationStrategy"`
	OnDemandBase               int32                            `json:"onDemandBase"`
	OnDemandPercentAboveBase   int32                            `json:"onDemandPercentAboveBase"`
	SpotAllocationStrategy     string                           `json:"spotAllocationStrategy"`
	SpotInstancePools          int32                            `json:"spotInstancePools,omitempty"`
	SpotMaxPrice               string                           `json:"spotMaxPrice,omitempty"`
}

// awsInterruption is a Spot interruption in progress: the at-risk
// instance, when the notice came, and (with capacity rebalance) its
// replacement.
type awsInterruption struct {
	InstanceID  string    `json:"instanceId"`
	NoticeAt    time.Time `json:"noticeAt"`
	Replacement string    `json:"replacement,omitempty"`
}

func (f *AWSFace) spotNotice() time.Duration {
	return core.OrDefault(f.SpotInterruptionNotice, AWSDefaultSpotInterruptionNotice)
}

// onDemandTarget is how many of n instances are On-Demand.
func (m *awsMixed) onDemandTarget(n int) int {
	base := min(n, int(m.OnDemandBase))
	above := n - base
	return base + (above*int(m.OnDemandPercentAboveBase)+99)/100
}

// parseMixed reads the request's MixedInstancesPolicy over p.Mixed (only
// the fields sent change); a LaunchTemplate sent instead removes it.
func parseMixed(req *awsRequest, p *awsGroupPayload) error {
	f := req.form
	const pre = "MixedInstancesPolicy."
	if qHas(f, "LaunchTemplate") {
		p.Mixed = nil
		return nil
	}
	if !qHas(f, "MixedInstancesPolicy") {
		return nil
	}
	m := p.Mixed
	if m == nil {
		m = &awsMixed{OnDemandAllocationStrategy: "prioritized", OnDemandPercentAboveBase: 100, SpotAllocationStrategy: "lowest-price", SpotInstancePools: 2}
	}
	out := *m
	if qHas(f, pre+"LaunchTemplate.Overrides.member") {
		out.Overrides = nil
		for _, n := range qIndices(f, pre+"LaunchTemplate.Overrides.member") {
			k := pre + "LaunchTemplate.Overrides.member." + strconv.Itoa(n) + "."
			o := awsapi.LaunchTemplateOverrides{InstanceType: f.Get(k + "InstanceType"), WeightedCapacity: f.Get(k + "WeightedCapacity")}
			if _, ok := awsInstanceTypes[o.InstanceType]; !ok {
				return validationError("The instance type '%s' in the overrides is not supported (the simulated AWS offers %v).", o.InstanceType, awsInstanceTypeNames())
			}
			if o.WeightedCapacity != "" {
				if w, err := strconv.Atoi(o.WeightedCapacity); err != nil || w < 1 || w > 999 {
					return validationError("Value '%s' at 'weightedCapacity' failed to satisfy constraint: Member must be an integer between 1 and 999", o.WeightedCapacity)
				}
			}
			out.Overrides = append(out.Overrides, o)
		}
		if len(out.Overrides) > 40 {
			return validationError("The number of overrides (%d) exceeds the maximum of 40.", len(out.Overrides))
		}
	}
	d := pre + "InstancesDistribution."
	if v := f.Get(d + "OnDemandAllocationStrategy"); v != "" {
		if v != "prioritized" && v != "lowest-price" {
			return validationError("Invalid On-Demand allocation strategy: %s", v)
		}
		out.OnDemandAllocationStrategy = v
	}
	if v := f.Get(d + "SpotAllocationStrategy"); v != "" {
		if !slices.Contains([]string{"lowest-price", "capacity-optimized", "capacity-optimized-prioritized", "price-capacity-optimized"}, v) {
			return validationError("Invalid Spot allocation strategy: %s", v)
		}
		out.SpotAllocationStrategy = v
	}
	for _, x := range []struct {
		key      string
		dst      *int32
		max      int64
		wireName string
	}{
		{"OnDemandBaseCapacity", &out.OnDemandBase, 1 << 30, "onDemandBaseCapacity"},
		{"OnDemandPercentageAboveBaseCapacity", &out.OnDemandPercentAboveBase, 100, "onDemandPercentageAboveBaseCapacity"},
		{"SpotInstancePools", &out.SpotInstancePools, 20, "spotInstancePools"},
	} {
		v, ok := qInt(f, d+x.key)
		if !ok || v != nil && (*v < 0 || *v > x.max) {
			return validationError("Value '%s' at '%s' failed to satisfy constraint: Member must have value between 0 and %d", f.Get(d+x.key), x.wireName, x.max)
		}
		if v != nil {
			*x.dst = int32(*v)
		}
	}
	if qHas(f, d+"SpotMaxPrice") {
		out.SpotMaxPrice = f.Get(d + "SpotMaxPrice")
		if out.SpotMaxPrice != "" {
			if v, err := strconv.ParseFloat(out.SpotMaxPrice, 64); err != nil || v <= 0 {
				return validationError("Invalid SpotMaxPrice: %s", out.SpotMaxPrice)
			}
		}
	}
	p.Mixed = &out
	return nil
}

// wireMixed reports p's mixed instances policy in out: the launch
// template moves into it, as AWS reports a group with one.
func wireMixed(out *awsapi.AutoScalingGroup, p awsGroupPayload) {
	m := p.Mixed
	if m == nil {
		return
	}
	lt := p.LaunchTemplate
	if lt.Version == "" {
		lt.Version = "$Default"
	}
	out.MixedInstancesPolicy = &awsapi.MixedInstancesPolicy{
		LaunchTemplate: awsapi.MixedLaunchTemplate{LaunchTemplateSpecification: lt, Overrides: slices.Clone(m.Overrides)},
		InstancesDistribution: &awsapi.InstancesDistribution{
			OnDemandAllocationStrategy: m.OnDemandAllocationStrategy, OnDemandBaseCapacity: m.OnDemandBase,
			OnDemandPercentageAboveBaseCapacity: m.OnDemandPercentAboveBase, SpotAllocationStrategy: m.SpotAllocationStrategy,
			SpotInstancePools: m.SpotInstancePools, SpotMaxPrice: m.SpotMaxPrice,
		},
	}
	out.LaunchTemplate = nil
}

// mixedIdentity marks an instance a mixed group launches: its market and
// type are assigned once its group knows the instances launched with it.
func mixedIdentity(inst *awsInstancePayload, p *awsGroupPayload) {
	if p.Mixed != nil {
		inst.Market, inst.Spot = awsMarketPending, false
	}
}

// awsPrice orders instance types by the simulation's price.
func awsPrice(typ string) int {
	it := awsInstanceTypes[typ]
	return it.vcpus*1_000_000 + it.memoryMi
}

// pickType is the instance type of a new instance of market, given the
// Spot instances of each type the group has.
func (m *awsMixed) pickType(market, fallback string, spotByType map[string]int) string {
	if len(m.Overrides) == 0 {
		return fallback
	}
	first := m.Overrides[0].InstanceType
	cheapest := first
	for _, o := range m.Overrides {
		if awsPrice(o.InstanceType) < awsPrice(cheapest) {
			cheapest = o.InstanceType
		}
	}
	if market == awsMarketOnDemand {
		if m.OnDemandAllocationStrategy == "lowest-price" {
			return cheapest
		}
		return first
	}
	switch m.SpotAllocationStrategy {
	case "lowest-price":
		return cheapest
	case "capacity-optimized-prioritized":
		return first
	}
	best := first
	for _, o := range m.Overrides {
		if spotByType[o.InstanceType] < spotByType[best] {
			best = o.InstanceType
		}
	}
	return best
}

// assignMarkets assigns the market and instance type of g's instances
// still pending one, in launch order, by p's mixed instances policy, the
// instances in exclude (at risk of interruption) left out of the count.
func (h *awsHandler) assignMarkets(req *awsRequest, name string, p *awsGroupPayload, g *core.Group, exclude map[string]bool) *core.Group {
	m := p.Mixed
	if m == nil || g == nil {
		return g
	}
	total, od := 0, 0
	spotByType := map[string]int{}
	var pending []core.Instance
	for _, in := range g.Instances {
		if in.State == core.StateDeleting || exclude[in.ID] {
			continue
		}
		ip := readAWSInstance(in)
		switch {
		case ip.Market == awsMarketPending:
			pending = append(pending, in)
			continue
		case ip.Spot:
			spotByType[ip.InstanceType]++
		default:
			od++
		}
		total++
	}
	for _, in := range pending {
		total++
		market := awsMarketSpot
		if od < m.onDemandTarget(total) {
			market = awsMarketOnDemand
			od++
		}
		typ := m.pickType(market, p.InstanceType, spotByType)
		if market == awsMarketSpot {
			spotByType[typ]++
		}
		ng, err := h.scope(req).UpdateInstancePayload(name, in.ID, core.EditPayload(func(ip *awsInstancePayload) error {
			ip.Market, ip.Spot, ip.InstanceType = market, market == awsMarketSpot, typ
			return nil
		}))
		if err != nil {
			h.env.Log.Error(err, "Assigning an instance's market failed", "group", name, "instance", in.ID)
			continue
		}
		g = ng
	}
	return g
}

// mixedVCPUFit is vcpuFit for a group with a mixed instances policy: how
// many instances it may have with its On-Demand ones (of its On-Demand
// type) under the quota; -1 when unlimited.
func (f *AWSFace) mixedVCPUFit(sc core.Scope, name string, p *awsGroupPayload) int {
	m := p.Mixed
	it := awsInstanceTypes[m.pickType(awsMarketOnDemand, p.InstanceType, nil)]
	if f.VCPUQuota <= 0 || !it.standard || it.vcpus == 0 {
		return -1
	}
	fit := max(0, (f.VCPUQuota-usedVCPUs(sc, name, true))/it.vcpus)
	if m.OnDemandPercentAboveBase == 0 && int(m.OnDemandBase) <= fit {
		return -1
	}
	n := 0
	for n < 1<<20 && m.onDemandTarget(n+1) <= fit {
		n++
	}
	// The quota holds launches back; it never takes running instances
	// away (a distribution changed to more On-Demand applies to launches).
	if g, err := sc.GetGroup(name); err == nil {
		n = max(n, awsLive(g))
	}
	return n
}

// rebalanceExtra is how many instances g has above p's desired capacity
// for capacity rebalancing: replacements launched for at-risk instances
// still in service.
func rebalanceExtra(g *core.Group, p *awsGroupPayload) int {
	if g == nil {
		return 0
	}
	n := 0
	for _, it := range p.Interruptions {
		if it.Replacement == "" {
			continue
		}
		for _, in := range g.Instances {
			if in.ID == it.InstanceID && in.State != core.StateDeleting {
				n++
			}
		}
	}
	return n
}

// awsSpotMu serializes the progress of interruptions.
var awsSpotMu sync.Mutex

func findInstance(g *core.Group, id string) *core.Instance {
	if id == "" {
		return nil
	}
	for i := range g.Instances {
		if g.Instances[i].ID == id {
			return &g.Instances[i]
		}
	}
	return nil
}

// inService reports whether a replacement is InService for capacity
// rebalancing: running and, when the cloud joins instances to a cluster,
// joined.
func (h *awsHandler) inService(in *core.Instance) bool {
	return in.State == core.StateRunning && (h.env.Cloud.Agent() == nil || in.Join == core.JoinJoined)
}

// progressSpot moves g's Spot interruptions on (see the package's "mixed
// instances policies and Spot instances"): launches rebalance
// replacements, terminates at-risk instances whose replacement is in
// service or whose notice ran out, and launches replacements for
// interrupted instances.
func (h *awsHandler) progressSpot(req *awsRequest, g *core.Group) *core.Group {
	if len(readAWSPayload(g).Interruptions) == 0 {
		return g
	}
	awsSpotMu.Lock()
	defer awsSpotMu.Unlock()
	sc := h.scope(req)
	name := g.Name
	g, err := sc.GetGroup(name)
	if err != nil {
		return g
	}
	p := readAWSPayload(g)
	if len(p.Interruptions) == 0 {
		return g
	}
	if g.Operation != nil && g.Operation.Type == core.OperationDelete {
		return g
	}
	now := h.env.Cloud.Clock().Now().UTC()
	var keep []awsInterruption
	var acts []awsActivity
	interrupted := false
	for _, it := range p.Interruptions {
		at := findInstance(g, it.InstanceID)
		if at == nil || at.State == core.StateDeleting {
			continue
		}
		deadline := it.NoticeAt.Add(h.face.spotNotice())
		if p.CapacityRebalance {
			rep := findInstance(g, it.Replacement)
			if (rep == nil || rep.State == core.StateDeleting || rep.State == core.StateFailed) && now.Before(deadline) {
				before := map[string]bool{}
				for _, in := range g.Instances {
					before[in.ID] = true
				}
				ng, err := sc.SetCapacity(name, g.Capacity+1)
				if err != nil {
					h.env.Log.Error(err, "Launching a capacity rebalance replacement failed", "group", name, "instance", it.InstanceID)
					keep = append(keep, it)
					continue
				}
				for _, in := range ng.Instances {
					if !before[in.ID] {
						it.Replacement = in.ID
						acts = append(acts, awsActivity{Kind: "launch", InstanceID: in.ID, Start: now, Cause: fmt.Sprintf(
							"At %s an instance was launched in response to an EC2 instance rebalance recommendation for instance %s.", AWSTime(now), it.InstanceID)})
					}
				}
				g = h.assignMarkets(req, name, &p, ng, map[string]bool{it.InstanceID: true})
				rep = findInstance(g, it.Replacement)
			}
			if rep != nil && h.inService(rep) || !now.Before(deadline) {
				cause := "in response to an EC2 instance rebalance recommendation"
				if !now.Before(deadline) {
					cause = "in response to an EC2 Spot Instance interruption notice"
				}
				if ng, err := sc.DeleteInstances(name, []string{it.InstanceID}); err == nil {
					g = ng
					acts = append(acts, awsActivity{Kind: "terminate", InstanceID: it.InstanceID, Start: now, Cause: fmt.Sprintf(
						"At %s instance %s was taken out of service %s.", AWSTime(now), it.InstanceID, cause)})
					continue
				}
			}
			keep = append(keep, it)
			continue
		}
		if now.Before(deadline) {
			keep = append(keep, it)
			continue
		}
		ng, err := sc.DeleteInstances(name, []string{it.InstanceID})
		if err != nil {
			keep = append(keep, it)
			continue
		}
		g, interrupted = ng, true
		acts = append(acts, awsActivity{Kind: "terminate", InstanceID: it.InstanceID, Start: now, Cause: fmt.Sprintf(
			"At %s instance %s was taken out of service in response to an EC2 Spot Instance interruption notice.", AWSTime(now), it.InstanceID)})
	}
	p.Interruptions = keep
	h.recordActivities(req, name, acts, false)
	if interrupted {
		// The group keeps its desired capacity: replacements launch.
		if ng, err := h.apply(req, name, &p, g, "an instance was started in response to a difference between desired and actual capacity"); err == nil {
			return ng
		}
	}
	if ng, err := sc.UpdateGroupPayload(name, core.ReplacePayload(p)); err == nil {
		g = ng
	}
	return g
}

// AWSInterruptSpot interrupts the Spot instance id of the AWS face's
// account and region, as EC2 reclaiming its capacity would: the
// instance's group replaces it (see the package's "mixed instances
// policies and Spot instances"). The interruption proceeds in the
// background until the instance is gone.
func AWSInterruptSpot(c *core.Cloud, account, region, id string) error {
	f, _ := c.Face(AWSFaceName).(*AWSFace)
	if f == nil {
		return core.Invalidf("the cloud serves no AWS face")
	}
	h := &awsHandler{face: f, env: core.FaceEnv{Cloud: c, Log: c.Log().WithName(AWSFaceName)}}
	req := &awsRequest{service: awsapi.ServiceAutoScaling, id: NewRequestID(), account: account, region: region}
	sc := h.scope(req)
	g, in := h.instanceGroup(req, id)
	switch {
	case g == nil:
		return &core.Error{Code: core.CodeNotFound, Message: fmt.Sprintf("no instance %s in an Auto Scaling group of %s", id, AWSScope(account, region))}
	case !readAWSInstance(*in).Spot:
		return core.Invalidf("instance %s is not a Spot instance", id)
	case in.State == core.StateDeleting:
		return &core.Error{Code: core.CodeConflict, Message: fmt.Sprintf("instance %s is terminating", id)}
	}
	now := c.Clock().Now().UTC()
	g, err := sc.UpdateGroupPayload(g.Name, core.EditPayload(func(p *awsGroupPayload) error {
		if !slices.ContainsFunc(p.Interruptions, func(it awsInterruption) bool { return it.InstanceID == id }) {
			p.Interruptions = append(p.Interruptions, awsInterruption{InstanceID: id, NoticeAt: now})
		}
		return nil
	}))
	if err != nil {
		return err
	}
	h.env.Log.Info("Spot instance interrupted", "group", g.Name, "instance", id, "capacityRebalance", readAWSPayload(g).CapacityRebalance)
	g = h.progressSpot(req, g)
	go h.driveSpot(req, g.Name)
	return nil
}

// driveSpot progresses a group's interruptions until none is left (or the
// group is gone): the face has no loop of its own, and a pool at rest
// sends no request that would.
func (h *awsHandler) driveSpot(req *awsRequest, name string) {
	sc := h.scope(req)
	deadline := h.env.Cloud.Clock().Now().Add(h.face.spotNotice() + 10*time.Minute)
	for h.env.Cloud.Clock().Now().Before(deadline) {
		t := h.env.Cloud.Clock().NewTimer(awsSpotDriveTick)
		<-t.C()
		g, err := sc.GetGroup(name)
		if err != nil {
			return
		}
		if g = h.progressSpot(req, g); len(readAWSPayload(g).Interruptions) == 0 {
			return
		}
	}
}

// RegisterAdmin implements core.AdminFace: POST
// /admin/aws/spot-interruptions interrupts a Spot instance (AWSInterruptSpot).
func (f *AWSFace) RegisterAdmin(mux *http.ServeMux, c *core.Cloud) {
	admin.HandlePut(mux, "POST /admin/aws/spot-interruptions", func(_ *http.Request, in AWSSpotInterruption) (any, error) {
		if in.Account == "" {
			in.Account = AWSDefaultAccountID
		}
		if in.Region == "" {
			in.Region = AWSDefaultRegion
		}
		return in, AWSInterruptSpot(c, in.Account, in.Region, in.InstanceID)
	})
}

// AWSSpotInterruption is the body of the admin endpoint POST
// /admin/aws/spot-interruptions: the Spot instance to interrupt, in
// Account (default AWSDefaultAccountID) and Region (default
// AWSDefaultRegion).
type AWSSpotInterruption struct {
	Account    string `json:"account,omitempty"`
	Region     string `json:"region,omitempty"`
	InstanceID string `json:"instanceId"`
}
