package aws

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"k8s.io/utils/ptr"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
)

// MixedInstances is an ASG's mixed instances policy
// (GroupSettings.MixedInstances): the instance types it may launch and how
// its capacity splits between On-Demand and Spot instances.
//
// It is an in-place setting, not part of the model hash: AWS applies a
// changed distribution or changed overrides to the instances it launches
// from then on and replaces none of those running, so neither rolls the
// pool (an instance refresh would; mpool does not start one). The launch
// template the policy names is the model's, as for a plain ASG: a model
// change is a new launch-template version and rolls.
type MixedInstances struct {
	// Overrides are the instance types, in priority order; empty launches
	// the launch template's instance type.
	Overrides []InstanceOverride `json:"overrides,omitempty"`
	// OnDemandAllocationStrategy is prioritized or lowest-price.
	OnDemandAllocationStrategy string `json:"onDemandAllocationStrategy"`
	// SpotAllocationStrategy is lowest-price, capacity-optimized,
	// capacity-optimized-prioritized or price-capacity-optimized.
	SpotAllocationStrategy string `json:"spotAllocationStrategy"`
	// OnDemandBaseCapacity is how many instances are On-Demand first.
	OnDemandBaseCapacity int32 `json:"onDemandBaseCapacity"`
	// OnDemandPercentageAboveBaseCapacity is the On-Demand share of the
	// capacity above the base; the rest is Spot.
	OnDemandPercentageAboveBaseCapacity int32 `json:"onDemandPercentageAboveBaseCapacity"`
}

// InstanceOverride is an instance type of a mixed instances policy.
type InstanceOverride struct {
	// InstanceType is the EC2 instance type.
	InstanceType string `json:"instanceType"`
	// WeightedCapacity is the capacity units the type counts for, "" for
	// one.
	WeightedCapacity string `json:"weightedCapacity,omitempty"`
}

// AWS's defaults of a mixed instances policy's distribution.
const (
	defaultOnDemandAllocation = "prioritized"
	defaultSpotAllocation     = "lowest-price"
	defaultOnDemandPercentage = 100
)

// mixedInstancesOf maps an AWSMachinePool's mixedInstancesPolicy, AWS's
// defaults filled in; nil for none.
func mixedInstancesOf(p *infrav1.MixedInstancesPolicy) *MixedInstances {
	if p == nil {
		return nil
	}
	m := &MixedInstances{OnDemandAllocationStrategy: defaultOnDemandAllocation, SpotAllocationStrategy: defaultSpotAllocation,
		OnDemandPercentageAboveBaseCapacity: defaultOnDemandPercentage}
	if d := p.InstancesDistribution; d != nil {
		if d.OnDemandAllocationStrategy != "" {
			m.OnDemandAllocationStrategy = d.OnDemandAllocationStrategy
		}
		if d.SpotAllocationStrategy != "" {
			m.SpotAllocationStrategy = d.SpotAllocationStrategy
		}
		m.OnDemandBaseCapacity = int32(min(max(ptr.Deref(d.OnDemandBaseCapacity, 0), 0), 1<<30))
		m.OnDemandPercentageAboveBaseCapacity = int32(min(max(ptr.Deref(d.OnDemandPercentageAboveBaseCapacity, defaultOnDemandPercentage), 0), 100))
	}
	for _, o := range p.Overrides {
		m.Overrides = append(m.Overrides, InstanceOverride{InstanceType: o.InstanceType, WeightedCapacity: ptr.Deref(o.WeightedCapacity, "")})
	}
	return m
}

// groupTemplate is the launch template an ASG launches from: its own, or
// its mixed instances policy's.
func groupTemplate(asg *asgtypes.AutoScalingGroup) *asgtypes.LaunchTemplateSpecification {
	if asg.LaunchTemplate != nil {
		return asg.LaunchTemplate
	}
	if mp := asg.MixedInstancesPolicy; mp != nil && mp.LaunchTemplate != nil {
		return mp.LaunchTemplate.LaunchTemplateSpecification
	}
	return nil
}

// mixedPolicy is the ASG's mixed instances policy for m at launch-template
// version lt.
func mixedPolicy(m *MixedInstances, lt templateVersion) *asgtypes.MixedInstancesPolicy {
	out := &asgtypes.MixedInstancesPolicy{
		LaunchTemplate: &asgtypes.LaunchTemplate{LaunchTemplateSpecification: &asgtypes.LaunchTemplateSpecification{
			LaunchTemplateId: aws.String(lt.id), Version: aws.String(strconv.FormatInt(lt.version, 10)),
		}},
		InstancesDistribution: &asgtypes.InstancesDistribution{
			OnDemandAllocationStrategy:          aws.String(m.OnDemandAllocationStrategy),
			SpotAllocationStrategy:              aws.String(m.SpotAllocationStrategy),
			OnDemandBaseCapacity:                aws.Int32(m.OnDemandBaseCapacity),
			OnDemandPercentageAboveBaseCapacity: aws.Int32(m.OnDemandPercentageAboveBaseCapacity),
		},
	}
	for _, o := range m.Overrides {
		ov := asgtypes.LaunchTemplateOverrides{InstanceType: aws.String(o.InstanceType)}
		if o.WeightedCapacity != "" {
			ov.WeightedCapacity = aws.String(o.WeightedCapacity)
		}
		out.LaunchTemplate.Overrides = append(out.LaunchTemplate.Overrides, ov)
	}
	return out
}

// sameMixed reports whether the ASG's policy has m's overrides and
// distribution (AWS reports the defaults it filled in).
func sameMixed(have *asgtypes.MixedInstancesPolicy, m *MixedInstances) bool {
	if have == nil || have.LaunchTemplate == nil {
		return false
	}
	var ov []InstanceOverride
	for _, o := range have.LaunchTemplate.Overrides {
		ov = append(ov, InstanceOverride{InstanceType: aws.ToString(o.InstanceType), WeightedCapacity: aws.ToString(o.WeightedCapacity)})
	}
	if !slices.Equal(ov, m.Overrides) {
		return false
	}
	d := have.InstancesDistribution
	if d == nil {
		d = &asgtypes.InstancesDistribution{}
	}
	or := func(s *string, def string) string {
		if v := aws.ToString(s); v != "" {
			return v
		}
		return def
	}
	return or(d.OnDemandAllocationStrategy, defaultOnDemandAllocation) == m.OnDemandAllocationStrategy &&
		or(d.SpotAllocationStrategy, defaultSpotAllocation) == m.SpotAllocationStrategy &&
		aws.ToInt32(d.OnDemandBaseCapacity) == m.OnDemandBaseCapacity &&
		ptr.Deref(d.OnDemandPercentageAboveBaseCapacity, defaultOnDemandPercentage) == m.OnDemandPercentageAboveBaseCapacity
}

// withMixed makes a new ASG launch through want's mixed instances policy
// (its launch template inside the policy), when it has one.
func withMixed(in *autoscaling.CreateAutoScalingGroupInput, want desired, lt templateVersion) {
	if m := want.settings.MixedInstances; m != nil {
		in.LaunchTemplate, in.MixedInstancesPolicy = nil, mixedPolicy(m, lt)
	}
}

// updateMixed sets the ASG update's mixed instances policy: the whole
// policy when the launch-template version, the overrides or the
// distribution change, or the ASG moves onto a policy; the launch template
// alone when the pool drops its policy. It reports whether it changed in.
func updateMixed(in *autoscaling.UpdateAutoScalingGroupInput, asg *asgtypes.AutoScalingGroup, want desired, target templateVersion) bool {
	m := want.settings.MixedInstances
	if m == nil {
		if asg.MixedInstancesPolicy != nil && in.LaunchTemplate == nil {
			in.LaunchTemplate = &asgtypes.LaunchTemplateSpecification{LaunchTemplateId: aws.String(target.id), Version: aws.String(strconv.FormatInt(target.version, 10))}
			return true
		}
		return false
	}
	if in.LaunchTemplate == nil && asg.MixedInstancesPolicy != nil && sameMixed(asg.MixedInstancesPolicy, m) {
		return false
	}
	in.LaunchTemplate, in.MixedInstancesPolicy = nil, mixedPolicy(m, target)
	return true
}

// rebalanceReplacements are the instances an ASG with capacity rebalance
// launched above its desired capacity to replace Spot instances at risk of
// interruption: the newest ones beyond the desired capacity (by when they
// were first seen, instances not yet in service first). They are AWS's
// until it terminates the instances they replace, so the engine does not
// see them meanwhile: it would take them for excess and remove them. Once
// AWS terminates an at-risk instance, that instance shows as deleting
// and its replacement as the pool's.
func rebalanceReplacements(asg *asgtypes.AutoScalingGroup, seen map[string]time.Time) map[string]bool {
	if !aws.ToBool(asg.CapacityRebalance) || isDeleting(asg) {
		return nil
	}
	var live []asgtypes.Instance
	for _, in := range asg.Instances {
		if !leaving(in.LifecycleState) {
			live = append(live, in)
		}
	}
	extra := len(live) - int(aws.ToInt32(asg.DesiredCapacity))
	if extra <= 0 {
		return nil
	}
	slices.SortFunc(live, func(a, b asgtypes.Instance) int {
		ia, ib := aws.ToString(a.InstanceId), aws.ToString(b.InstanceId)
		if c := seen[ib].Compare(seen[ia]); c != 0 {
			return c
		}
		if sa, sb := a.LifecycleState == asgtypes.LifecycleStateInService, b.LifecycleState == asgtypes.LifecycleStateInService; sa != sb {
			if sb {
				return -1
			}
			return 1
		}
		return strings.Compare(ib, ia)
	})
	out := map[string]bool{}
	for _, in := range live[:extra] {
		out[aws.ToString(in.InstanceId)] = true
	}
	return out
}
