package aws

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"k8s.io/utils/ptr"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// TestMixedInstancesPolicy: the pool's mixedInstancesPolicy is an in-place
// setting (no model hash change), sent inside the ASG's mixed instances
// policy with the launch template version; an ASG that has it gets no
// write, a changed distribution or template version one.
func TestMixedInstancesPolicy(t *testing.T) {
	plain, err := Adapter{}.Desired(testPool(), testOwner("v1.16.8", 2))
	if err != nil {
		t.Fatal(err)
	}
	p := testPool()
	p.Spec.CapacityRebalance = true
	p.Spec.MixedInstancesPolicy = &infrav1.MixedInstancesPolicy{
		InstancesDistribution: &infrav1.InstancesDistribution{OnDemandBaseCapacity: ptr.To[int64](1), OnDemandPercentageAboveBaseCapacity: ptr.To[int64](0)},
		Overrides:             []infrav1.Overrides{{InstanceType: "m5.large"}, {InstanceType: "c5.large", WeightedCapacity: ptr.To("2")}},
	}
	mixed, err := Adapter{}.Desired(p, testOwner("v1.16.8", 2))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := contract.ModelHash(plain.Model)
	b, _ := contract.ModelHash(mixed.Model)
	if a == "" || a != b {
		t.Errorf("a mixed instances policy changed the model hash %s → %s: AWS replaces no instance for it", a, b)
	}
	spec := scalegroup.GroupSpec{Capacity: 2, ModelHash: "h", Model: mixed.Model}
	want, err := desiredOf(spec)
	if err != nil {
		t.Fatal(err)
	}
	m := want.settings.MixedInstances
	if m == nil || m.OnDemandBaseCapacity != 1 || m.OnDemandPercentageAboveBaseCapacity != 0 || m.SpotAllocationStrategy != "lowest-price" ||
		m.OnDemandAllocationStrategy != "prioritized" || len(m.Overrides) != 2 || m.Overrides[1].WeightedCapacity != "2" {
		t.Fatalf("mixed instances %+v", m)
	}
	lt := templateVersion{id: "lt-1", version: 3}
	in := createGroupInput(scalegroup.Ref{Name: "g"}, spec, want, lt)
	withMixed(in, want, lt)
	if in.LaunchTemplate != nil || in.MixedInstancesPolicy == nil ||
		aws.ToString(in.MixedInstancesPolicy.LaunchTemplate.LaunchTemplateSpecification.Version) != "3" || !aws.ToBool(in.CapacityRebalance) {
		t.Fatalf("create input: launch template %+v, policy %+v", in.LaunchTemplate, in.MixedInstancesPolicy)
	}

	// The ASG as AWS reports it: no write.
	asg := &asgtypes.AutoScalingGroup{
		AutoScalingGroupName: aws.String("g"), MixedInstancesPolicy: in.MixedInstancesPolicy, MinSize: in.MinSize, MaxSize: in.MaxSize,
		DesiredCapacity: in.DesiredCapacity, VPCZoneIdentifier: in.VPCZoneIdentifier, CapacityRebalance: aws.Bool(true),
		DefaultCooldown: in.DefaultCooldown, DefaultInstanceWarmup: in.DefaultInstanceWarmup,
	}
	if tpl := groupTemplate(asg); aws.ToString(tpl.LaunchTemplateId) != "lt-1" {
		t.Errorf("the template of a mixed ASG: %+v", tpl)
	}
	if u := updateGroupInput(scalegroup.Ref{Name: "g"}, asg, spec, want, lt); u != nil {
		t.Errorf("same policy, update %+v", u)
	}
	// A new template version goes inside the policy.
	if u := updateGroupInput(scalegroup.Ref{Name: "g"}, asg, spec, want, templateVersion{id: "lt-1", version: 4}); u == nil || u.LaunchTemplate != nil ||
		aws.ToString(u.MixedInstancesPolicy.LaunchTemplate.LaunchTemplateSpecification.Version) != "4" {
		t.Errorf("new version: update %+v", u)
	}
	// A changed distribution is written in place.
	m2 := *m
	m2.OnDemandPercentageAboveBaseCapacity = 50
	want2 := want
	want2.settings.MixedInstances = &m2
	if u := updateGroupInput(scalegroup.Ref{Name: "g"}, asg, spec, want2, lt); u == nil || aws.ToInt32(u.MixedInstancesPolicy.InstancesDistribution.OnDemandPercentageAboveBaseCapacity) != 50 {
		t.Errorf("changed distribution: update %+v", u)
	}
	// Dropping the policy goes back to the launch template.
	want3 := want
	want3.settings.MixedInstances = nil
	if u := updateGroupInput(scalegroup.Ref{Name: "g"}, asg, spec, want3, lt); u == nil || u.MixedInstancesPolicy != nil || aws.ToString(u.LaunchTemplate.Version) != "3" {
		t.Errorf("dropped policy: update %+v", u)
	}
}

// TestRebalanceReplacements: the instances a capacity-rebalancing ASG has
// above its desired capacity are the newest, hidden from the engine until
// AWS terminates what they replace.
func TestRebalanceReplacements(t *testing.T) {
	t0 := time.Unix(1000, 0)
	asg := &asgtypes.AutoScalingGroup{
		DesiredCapacity: aws.Int32(2), CapacityRebalance: aws.Bool(true),
		Instances: []asgtypes.Instance{
			{InstanceId: aws.String("i-a"), LifecycleState: asgtypes.LifecycleStateInService},
			{InstanceId: aws.String("i-b"), LifecycleState: asgtypes.LifecycleStateInService},
			{InstanceId: aws.String("i-c"), LifecycleState: asgtypes.LifecycleStatePending},
		},
	}
	seen := map[string]time.Time{"i-a": t0, "i-b": t0, "i-c": t0.Add(time.Minute)}
	if got := rebalanceReplacements(asg, seen); len(got) != 1 || !got["i-c"] {
		t.Errorf("hidden %v, want i-c", got)
	}
	asg.Instances[0].LifecycleState = asgtypes.LifecycleStateTerminating
	if got := rebalanceReplacements(asg, seen); len(got) != 0 {
		t.Errorf("once the at-risk instance terminates, hidden %v", got)
	}
	asg.Instances[0].LifecycleState = asgtypes.LifecycleStateInService
	asg.CapacityRebalance = aws.Bool(false)
	if got := rebalanceReplacements(asg, seen); len(got) != 0 {
		t.Errorf("without capacity rebalance, hidden %v", got)
	}
}
