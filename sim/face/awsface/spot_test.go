package awsface

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/mpool-dev/mpool/sim/core"
)

// createMixedGroup creates a group of lt with a mixed instances policy:
// overrides m5.large, c5.large, m6i.large; On-Demand base 1 and 0% above
// it; Spot lowest-price.
func (e *awsTestEnv) createMixedGroup(t testing.TB, name string, lt *ec2types.LaunchTemplate, desired int32, rebalance bool) {
	t.Helper()
	_, err := e.asg.CreateAutoScalingGroup(context.Background(), &autoscaling.CreateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(name),
		MinSize:              aws.Int32(0), MaxSize: aws.Int32(10), DesiredCapacity: aws.Int32(desired),
		VPCZoneIdentifier: aws.String(AWSDefaultSubnetID),
		CapacityRebalance: aws.Bool(rebalance),
		MixedInstancesPolicy: &astypes.MixedInstancesPolicy{
			LaunchTemplate: &astypes.LaunchTemplate{
				LaunchTemplateSpecification: &astypes.LaunchTemplateSpecification{LaunchTemplateId: lt.LaunchTemplateId, Version: aws.String("1")},
				Overrides: []astypes.LaunchTemplateOverrides{
					{InstanceType: aws.String("m5.large")}, {InstanceType: aws.String("c5.large"), WeightedCapacity: aws.String("1")}, {InstanceType: aws.String("m6i.large")},
				},
			},
			InstancesDistribution: &astypes.InstancesDistribution{
				OnDemandBaseCapacity: aws.Int32(1), OnDemandPercentageAboveBaseCapacity: aws.Int32(0),
				SpotAllocationStrategy: aws.String("lowest-price"), SpotMaxPrice: aws.String("0.05"),
			},
		},
	})
	if err != nil {
		t.Fatalf("CreateAutoScalingGroup %s: %v", name, err)
	}
}

// markets returns the group's instances by EC2's instance lifecycle
// ("spot", or "" for On-Demand) and their types.
func (e *awsTestEnv) markets(t testing.TB, name string) (spot, onDemand []string, types map[string]string) {
	t.Helper()
	out, err := e.ec2.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{
		Filters: []ec2types.Filter{{Name: aws.String("tag:aws:autoscaling:groupName"), Values: []string{name}},
			{Name: aws.String("instance-state-name"), Values: []string{"pending", "running"}}},
	})
	if err != nil {
		t.Fatalf("DescribeInstances: %v", err)
	}
	types = map[string]string{}
	for _, r := range out.Reservations {
		for _, in := range r.Instances {
			id := aws.ToString(in.InstanceId)
			types[id] = string(in.InstanceType)
			if in.InstanceLifecycle == ec2types.InstanceLifecycleTypeSpot {
				spot = append(spot, id)
			} else {
				onDemand = append(onDemand, id)
			}
		}
	}
	return spot, onDemand, types
}

func activityCauses(t testing.TB, e *awsTestEnv, name string) string {
	t.Helper()
	out, err := e.asg.DescribeScalingActivities(context.Background(), &autoscaling.DescribeScalingActivitiesInput{AutoScalingGroupName: aws.String(name)})
	if err != nil {
		t.Fatalf("DescribeScalingActivities: %v", err)
	}
	var b strings.Builder
	for _, a := range out.Activities {
		b.WriteString(aws.ToString(a.Cause) + "\n")
	}
	return b.String()
}

func instanceIDs(g astypes.AutoScalingGroup) []string {
	var out []string
	for _, in := range g.Instances {
		out = append(out, aws.ToString(in.InstanceId))
	}
	return out
}

// TestAWSMixedInstancesPolicy: a mixed instances policy launches its base
// On-Demand and the rest Spot, of the overrides' types, reports the policy
// as AWS does, and its Spot instances do not count against the On-Demand
// vCPU quota; changing the distribution replaces nothing and applies to
// new instances.
func TestAWSMixedInstancesPolicy(t *testing.T) {
	e := newAWSEnv(t, core.Options{Faces: []core.Face{&AWSFace{VCPUQuota: 2}}})
	lt := e.template(t, "mixed", "v1.31.2")
	e.createMixedGroup(t, "mixed", lt, 3, true)
	g := e.waitGroup(t, "mixed", "had 3 instances in service", inService(3))
	if g.LaunchTemplate != nil {
		t.Errorf("a group with a mixed instances policy reports a LaunchTemplate: %+v", g.LaunchTemplate)
	}
	mp := g.MixedInstancesPolicy
	if mp == nil || mp.LaunchTemplate == nil || aws.ToString(mp.LaunchTemplate.LaunchTemplateSpecification.LaunchTemplateId) != aws.ToString(lt.LaunchTemplateId) ||
		len(mp.LaunchTemplate.Overrides) != 3 || aws.ToString(mp.LaunchTemplate.Overrides[1].WeightedCapacity) != "1" {
		t.Fatalf("MixedInstancesPolicy = %+v", mp)
	}
	d := mp.InstancesDistribution
	if aws.ToInt32(d.OnDemandBaseCapacity) != 1 || aws.ToInt32(d.OnDemandPercentageAboveBaseCapacity) != 0 || aws.ToString(d.SpotAllocationStrategy) != "lowest-price" ||
		aws.ToString(d.OnDemandAllocationStrategy) != "prioritized" || aws.ToString(d.SpotMaxPrice) != "0.05" || !aws.ToBool(g.CapacityRebalance) {
		t.Errorf("InstancesDistribution = %+v, CapacityRebalance %v", d, aws.ToBool(g.CapacityRebalance))
	}
	spot, od, types := e.markets(t, "mixed")
	if len(od) != 1 || len(spot) != 2 {
		t.Fatalf("%d On-Demand and %d Spot instances, want 1 and 2 (base 1, 0%% above)", len(od), len(spot))
	}
	if types[od[0]] != "m5.large" {
		t.Errorf("the On-Demand instance is a %s, want the first override m5.large (prioritized)", types[od[0]])
	}
	for _, id := range spot {
		if types[id] != "c5.large" {
			t.Errorf("Spot instance %s is a %s, want the cheapest override c5.large (lowest-price)", id, types[id])
		}
	}
	for _, in := range g.Instances {
		if want := types[aws.ToString(in.InstanceId)]; aws.ToString(in.InstanceType) != want {
			t.Errorf("Auto Scaling reports instance %s as %s, EC2 as %s", aws.ToString(in.InstanceId), aws.ToString(in.InstanceType), want)
		}
	}

	t.Log("the distribution changes in place: 100% On-Demand above the base applies to new instances")
	before := instanceIDs(g)
	if _, err := e.asg.UpdateAutoScalingGroup(context.Background(), &autoscaling.UpdateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String("mixed"),
		MixedInstancesPolicy: &astypes.MixedInstancesPolicy{InstancesDistribution: &astypes.InstancesDistribution{OnDemandPercentageAboveBaseCapacity: aws.Int32(100)}},
	}); err != nil {
		t.Fatal(err)
	}
	g = e.describe(t, "mixed")
	if got := instanceIDs(g); !slices.Equal(got, before) {
		t.Errorf("changing the distribution changed the instances %v → %v", before, got)
	}
	if len(g.MixedInstancesPolicy.LaunchTemplate.Overrides) != 3 || aws.ToInt32(g.MixedInstancesPolicy.InstancesDistribution.OnDemandBaseCapacity) != 1 {
		t.Errorf("an update of the distribution only lost the rest of the policy: %+v", g.MixedInstancesPolicy)
	}
	// The vCPU quota (2) holds the next On-Demand m5.large back.
	if _, err := e.asg.SetDesiredCapacity(context.Background(), &autoscaling.SetDesiredCapacityInput{AutoScalingGroupName: aws.String("mixed"), DesiredCapacity: aws.Int32(4)}); err != nil {
		t.Fatal(err)
	}
	if g = e.describe(t, "mixed"); len(g.Instances) != 3 {
		t.Errorf("a 2nd On-Demand instance launched beyond the vCPU quota: %d instances", len(g.Instances))
	}
	if !strings.Contains(activityCauses(t, e, "mixed"), "increasing the capacity from 3 to 4") {
		t.Errorf("no failed launch recorded for the quota")
	}
}

// TestAWSSpotInterruptionCapacityRebalance: with capacity rebalance an
// interrupted Spot instance stays in service until its replacement is, the
// group above its desired capacity meanwhile; then it terminates.
func TestAWSSpotInterruptionCapacityRebalance(t *testing.T) {
	e := newAWSEnv(t, core.Options{Faces: []core.Face{&AWSFace{SpotInterruptionNotice: time.Hour}}, DefaultSimulation: &core.Simulation{BootDelay: 300 * time.Millisecond}})
	lt := e.template(t, "rebalance", "v1.31.2")
	e.createMixedGroup(t, "rebalance", lt, 2, true)
	e.waitGroup(t, "rebalance", "had 2 instances in service", inService(2))
	spot, od, _ := e.markets(t, "rebalance")
	if len(spot) != 1 {
		t.Fatalf("Spot instances %v, want 1", spot)
	}
	if err := AWSInterruptSpot(e.srv.Cloud(), AWSDefaultAccountID, AWSDefaultRegion, od[0]); err == nil {
		t.Errorf("interrupting an On-Demand instance succeeded")
	}
	victim := spot[0]
	if err := AWSInterruptSpot(e.srv.Cloud(), AWSDefaultAccountID, AWSDefaultRegion, victim); err != nil {
		t.Fatal(err)
	}
	g := e.describe(t, "rebalance")
	if len(g.Instances) != 3 || aws.ToInt32(g.DesiredCapacity) != 2 {
		t.Fatalf("after the rebalance recommendation: %d instances at desired %d, want the replacement launched first (3 at 2)", len(g.Instances), aws.ToInt32(g.DesiredCapacity))
	}
	for _, in := range g.Instances {
		if aws.ToString(in.InstanceId) == victim && in.LifecycleState != astypes.LifecycleStateInService {
			t.Errorf("the at-risk instance is %s before its replacement is in service", in.LifecycleState)
		}
	}
	// Every state seen until the at-risk instance is gone keeps two in service.
	deadline := time.Now().Add(5 * time.Second)
	for {
		g = e.describe(t, "rebalance")
		n := 0
		for _, in := range g.Instances {
			if in.LifecycleState == astypes.LifecycleStateInService {
				n++
			}
		}
		if n < 2 {
			t.Fatalf("%d instances in service during the rebalance, want at least 2: %v", n, g.Instances)
		}
		if !slices.Contains(instanceIDs(g), victim) && len(g.Instances) == 2 && n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the at-risk instance was never replaced: %+v", g.Instances)
		}
		time.Sleep(10 * time.Millisecond)
	}
	spot, od, _ = e.markets(t, "rebalance")
	if len(spot) != 1 || len(od) != 1 || spot[0] == victim {
		t.Errorf("after the rebalance: Spot %v, On-Demand %v", spot, od)
	}
	waitCauses(t, e, "rebalance", "launched in response to an EC2 instance rebalance recommendation for instance "+victim,
		"instance "+victim+" was taken out of service in response to an EC2 instance rebalance recommendation")
}

// TestAWSSpotInterruptionWithoutRebalance: without capacity rebalance an
// interrupted Spot instance serves out its notice, then terminates, and
// the group launches a replacement.
func TestAWSSpotInterruptionWithoutRebalance(t *testing.T) {
	e := newAWSEnv(t, core.Options{Faces: []core.Face{&AWSFace{SpotInterruptionNotice: 300 * time.Millisecond}}})
	lt := e.template(t, "plain", "v1.31.2")
	e.createMixedGroup(t, "plain", lt, 2, false)
	e.waitGroup(t, "plain", "had 2 instances in service", inService(2))
	spot, _, _ := e.markets(t, "plain")
	victim := spot[0]
	// Through the admin endpoint.
	body, _ := json.Marshal(AWSSpotInterruption{InstanceID: victim})
	resp, err := http.Post(e.srv.URL()+"/admin/aws/spot-interruptions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /admin/aws/spot-interruptions: %s", resp.Status)
	}
	if g := e.describe(t, "plain"); len(g.Instances) != 2 || !slices.Contains(instanceIDs(g), victim) {
		t.Errorf("during the notice: instances %v, want the 2 with %s", instanceIDs(g), victim)
	}
	e.waitGroup(t, "plain", "replaced the interrupted instance", func(g astypes.AutoScalingGroup) bool {
		return inService(2)(g) && !slices.Contains(instanceIDs(g), victim)
	})
	// The activity log trails the group's state (a replacement can be in
	// service before the interruption's activity is written), as in EC2
	// Auto Scaling: wait for both entries.
	waitCauses(t, e, "plain", "instance "+victim+" was taken out of service in response to an EC2 Spot Instance interruption notice",
		"difference between desired and actual capacity")
}

// waitCauses waits (bounded) until the group's scaling activities include
// every one of wants.
func waitCauses(t testing.TB, e *awsTestEnv, name string, wants ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		causes := activityCauses(t, e, name)
		missing := ""
		for _, w := range wants {
			if !strings.Contains(causes, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no scaling activity %q in\n%s", missing, causes)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
