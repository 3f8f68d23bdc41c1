package awsface

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface/awstest"
)

// TestAWSAutoScalingGroupLifecycle drives an Auto Scaling group through the
// real SDK: template, group, boot, instance identities, scale,
// terminate, a new template version, deletion.
func TestAWSAutoScalingGroupLifecycle(t *testing.T) {
	e := newAWSEnv(t, core.Options{})
	ctx := context.Background()
	lt := e.template(t, "pool0", "v1.31.2")
	if aws.ToInt64(lt.DefaultVersionNumber) != 1 || aws.ToInt64(lt.LatestVersionNumber) != 1 || !strings.HasPrefix(aws.ToString(lt.LaunchTemplateId), "lt-") {
		t.Fatalf("launch template %+v", lt)
	}
	e.createGroup(t, "pool0", lt, "$Latest", 1, 6, 3)
	g := e.waitGroup(t, "pool0", "had 3 instances in service", inService(3))
	if aws.ToInt32(g.DesiredCapacity) != 3 || !aws.ToBool(g.CapacityRebalance) || aws.ToInt32(g.DefaultInstanceWarmup) != 120 ||
		len(g.AvailabilityZones) != 3 || !strings.Contains(aws.ToString(g.AutoScalingGroupARN), ":autoScalingGroupName/pool0") || len(g.Tags) != 2 {
		t.Fatalf("group %+v", g)
	}
	zones := map[string]bool{}
	for _, in := range g.Instances {
		zones[aws.ToString(in.AvailabilityZone)] = true
		if in.LaunchTemplate == nil || aws.ToString(in.LaunchTemplate.Version) != "1" || aws.ToString(in.LaunchTemplate.LaunchTemplateId) != aws.ToString(lt.LaunchTemplateId) ||
			aws.ToString(in.InstanceType) != "m5.large" || aws.ToString(in.HealthStatus) != "Healthy" || len(aws.ToString(in.InstanceId)) != 19 {
			t.Fatalf("instance %+v", in)
		}
	}
	if len(zones) != 3 {
		t.Fatalf("instances in zones %v, want balanced over 3", zones)
	}

	// Instance identities: providerID, host name, address, metadata.
	cg0, err := e.srv.Cloud().Scope(AWSFaceName, AWSScope(AWSDefaultAccountID, AWSDefaultRegion)).GetGroup("pool0")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range cg0.Instances {
		wantHost := "ip-" + strings.ReplaceAll(in.PrivateIP, ".", "-") + ".ec2.internal"
		switch {
		case in.ProviderID != "aws:///"+in.Zone+"/"+in.ID:
			t.Errorf("providerID %q", in.ProviderID)
		case in.Hostname != wantHost || !strings.HasPrefix(in.PrivateIP, "10.0."):
			t.Errorf("host name %q, IP %q", in.Hostname, in.PrivateIP)
		case in.Metadata[core.MetaLocalHostname] != wantHost || in.Metadata[core.MetaInstanceID] != in.ID || in.Metadata[core.MetaRegion] != AWSDefaultRegion ||
			in.Metadata[core.MetaAvailabilityZone] != in.Zone || in.Metadata["instance_type"] != "m5.large":
			t.Errorf("metadata %v", in.Metadata)
		case in.ModelHash != aws.ToString(lt.LaunchTemplateId)+":1":
			t.Errorf("model hash %q", in.ModelHash)
		}
		if in.Zone == "us-east-1a" && !strings.HasPrefix(in.PrivateIP, "10.0.") {
			t.Errorf("us-east-1a instance %s outside 10.0.0.0/20: %s", in.ID, in.PrivateIP)
		}
	}
	if cg0.Model.Extra[core.ExtraVersion] != "v1.31.2" || string(mustCustomData(t, e, "pool0")) != awsTestUserData {
		t.Fatalf("model %+v", cg0.Model)
	}

	// EC2's view: reservations, tags, states; filters and paging.
	di, err := e.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:aws:autoscaling:groupName"), Values: []string{"pool0"}},
		{Name: aws.String("instance-state-name"), Values: []string{"running"}}}})
	if err != nil || len(di.Reservations) != 3 {
		t.Fatalf("DescribeInstances: %v, %+v", err, di)
	}
	in0 := di.Reservations[0].Instances[0]
	if aws.ToString(in0.PrivateDnsName) == "" || aws.ToString(in0.SubnetId) == "" || aws.ToString(in0.VpcId) != AWSDefaultVPCID(AWSDefaultAccountID, AWSDefaultRegion) ||
		!hasEC2Tag(in0.Tags, "kubernetes.io/cluster/demo", "owned") || !hasEC2Tag(in0.Tags, "sigs.k8s.io/cluster-api-provider-aws/role", "node") || hasEC2Tag(in0.Tags, "unpropagated", "x") {
		t.Fatalf("instance %+v", in0)
	}
	var pages, seen int
	p := ec2.NewDescribeInstancesPaginator(e.ec2, &ec2.DescribeInstancesInput{MaxResults: aws.Int32(5), Filters: []ec2types.Filter{{Name: aws.String("tag-key"), Values: []string{"kubernetes.io/cluster/*"}}}})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		seen += len(page.Reservations)
	}
	if pages != 1 || seen != 3 {
		t.Fatalf("paged DescribeInstances: %d pages, %d instances", pages, seen)
	}

	// Scale out and in.
	e.scaleTo(t, "pool0", 5)

	// A new version: $Latest groups launch from it; old instances keep theirs.
	v2, err := e.ec2.CreateLaunchTemplateVersion(ctx, &ec2.CreateLaunchTemplateVersionInput{
		LaunchTemplateId: lt.LaunchTemplateId, SourceVersion: aws.String("1"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(AWSImageID(AWSDefaultRegion, AWSImageName("v1.32.1")))},
	})
	if err != nil || aws.ToInt64(v2.LaunchTemplateVersion.VersionNumber) != 2 || v2.LaunchTemplateVersion.LaunchTemplateData.InstanceType != ec2types.InstanceTypeM5Large {
		t.Fatalf("CreateLaunchTemplateVersion: %v %+v", err, v2)
	}
	// Terminate one instance without decrementing: it is replaced from v2.
	victim := aws.ToString(e.describe(t, "pool0").Instances[0].InstanceId)
	act, err := e.asg.TerminateInstanceInAutoScalingGroup(ctx, &autoscaling.TerminateInstanceInAutoScalingGroupInput{InstanceId: aws.String(victim), ShouldDecrementDesiredCapacity: aws.Bool(false)})
	if err != nil || !strings.Contains(aws.ToString(act.Activity.Description), victim) || act.Activity.StatusCode != astypes.ScalingActivityStatusCodeInProgress {
		t.Fatalf("TerminateInstanceInAutoScalingGroup: %v %+v", err, act)
	}
	g = e.waitGroup(t, "pool0", "replaced the instance from version 2", func(g astypes.AutoScalingGroup) bool {
		v2n := 0
		for _, in := range g.Instances {
			if aws.ToString(in.LaunchTemplate.Version) == "2" && in.LifecycleState == astypes.LifecycleStateInService {
				v2n++
			}
		}
		return v2n == 1 && inService(5)(g)
	})
	// Terminate with decrement.
	if _, err := e.asg.TerminateInstanceInAutoScalingGroup(ctx, &autoscaling.TerminateInstanceInAutoScalingGroupInput{InstanceId: g.Instances[0].InstanceId, ShouldDecrementDesiredCapacity: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	if g := e.waitGroup(t, "pool0", "had 4 instances", inService(4)); aws.ToInt32(g.DesiredCapacity) != 4 {
		t.Fatalf("desired %d after a decrementing terminate", aws.ToInt32(g.DesiredCapacity))
	}
	acts, err := e.asg.DescribeScalingActivities(ctx, &autoscaling.DescribeScalingActivitiesInput{AutoScalingGroupName: aws.String("pool0")})
	if err != nil || len(acts.Activities) < 7 {
		t.Fatalf("DescribeScalingActivities: %v, %d activities", err, len(acts.Activities))
	}

	// Template versions: describe, default, delete.
	dv, err := e.ec2.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateId: lt.LaunchTemplateId, Versions: []string{"$Latest", "$Default"}})
	if err != nil || len(dv.LaunchTemplateVersions) != 2 || aws.ToInt64(dv.LaunchTemplateVersions[0].VersionNumber) != 2 || !aws.ToBool(dv.LaunchTemplateVersions[1].DefaultVersion) ||
		aws.ToString(dv.LaunchTemplateVersions[1].LaunchTemplateData.UserData) == "" {
		t.Fatalf("DescribeLaunchTemplateVersions: %v %+v", err, dv)
	}
	if _, err := e.ec2.ModifyLaunchTemplate(ctx, &ec2.ModifyLaunchTemplateInput{LaunchTemplateId: lt.LaunchTemplateId, DefaultVersion: aws.String("2")}); err != nil {
		t.Fatal(err)
	}
	del, err := e.ec2.DeleteLaunchTemplateVersions(ctx, &ec2.DeleteLaunchTemplateVersionsInput{LaunchTemplateId: lt.LaunchTemplateId, Versions: []string{"1", "2"}})
	if err != nil || len(del.SuccessfullyDeletedLaunchTemplateVersions) != 1 || len(del.UnsuccessfullyDeletedLaunchTemplateVersions) != 1 {
		t.Fatalf("DeleteLaunchTemplateVersions: %v %+v", err, del)
	}
	dl, err := e.ec2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{"pool0"}})
	if err != nil || len(dl.LaunchTemplates) != 1 || aws.ToInt64(dl.LaunchTemplates[0].DefaultVersionNumber) != 2 || !hasEC2Tag(dl.LaunchTemplates[0].Tags, "owner", "mpool") {
		t.Fatalf("DescribeLaunchTemplates: %v %+v", err, dl)
	}

	// Deletion: refused with instances, forced, "Delete in progress", gone.
	_, err = e.asg.DeleteAutoScalingGroup(ctx, &autoscaling.DeleteAutoScalingGroupInput{AutoScalingGroupName: aws.String("pool0")})
	awstest.APIError(t, err, "ResourceInUse")
	slow := 300 * time.Millisecond
	if _, err := e.srv.Cloud().Scope(AWSFaceName, AWSScope(AWSDefaultAccountID, AWSDefaultRegion)).SetSimulation("pool0", core.SimulationPatch{DeleteDelay: &slow}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.asg.DeleteAutoScalingGroup(ctx, &autoscaling.DeleteAutoScalingGroupInput{AutoScalingGroupName: aws.String("pool0"), ForceDelete: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	if g := e.describe(t, "pool0"); aws.ToString(g.Status) != "Delete in progress" || g.Instances[0].LifecycleState != astypes.LifecycleStateTerminating {
		t.Fatalf("deleting group %+v", g)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, err := e.asg.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{"pool0"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.AutoScalingGroups) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the group was never deleted")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAWSHealthChecks: an instance failing its EC2 status check is
// Unhealthy once the group's grace period has passed since its launch and
// is replaced (terminated, then a new one launched, desired capacity
// unchanged, with activities); suspended HealthCheck hides the failure,
// suspended ReplaceUnhealthy keeps the instance; SetInstanceHealth marks
// one Unhealthy by hand.
func TestAWSHealthChecks(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	e := newAWSEnv(t, core.Options{Clock: clk, Faces: []core.Face{&AWSFace{ClockSkew: 24 * time.Hour}}})
	ctx := context.Background()
	lt := e.template(t, "health", "v1.31.2")
	e.createGroup(t, "health", lt, "$Latest", 0, 4, 2)
	if g := e.describe(t, "health"); aws.ToString(g.HealthCheckType) != "EC2" || aws.ToInt32(g.HealthCheckGracePeriod) != 0 {
		t.Fatalf("defaults: HealthCheckType %q, grace %d; want EC2 and 0 (the API's default)", aws.ToString(g.HealthCheckType), aws.ToInt32(g.HealthCheckGracePeriod))
	}
	if _, err := e.asg.UpdateAutoScalingGroup(ctx, &autoscaling.UpdateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String("health"), HealthCheckType: aws.String("ELB"), HealthCheckGracePeriod: aws.Int32(300),
	}); err != nil {
		t.Fatal(err)
	}
	g := e.waitGroup(t, "health", "booted", inService(2))
	if aws.ToString(g.HealthCheckType) != "ELB" || aws.ToInt32(g.HealthCheckGracePeriod) != 300 {
		t.Fatalf("after the update: HealthCheckType %q, grace %d", aws.ToString(g.HealthCheckType), aws.ToInt32(g.HealthCheckGracePeriod))
	}
	sick, other := aws.ToString(g.Instances[0].InstanceId), aws.ToString(g.Instances[1].InstanceId)
	if err := e.srv.Cloud().SetInstanceFault(sick, core.FaultCloudCheckFailing); err != nil {
		t.Fatal(err)
	}

	// Within the grace period the failing check is not acted on.
	if h := healthOf(e.describe(t, "health"), sick); h != "Healthy" {
		t.Fatalf("within the grace period: %s is %s, want Healthy", sick, h)
	}
	// Suspended HealthCheck: nothing is marked Unhealthy.
	if _, err := e.asg.SuspendProcesses(ctx, &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String("health"), ScalingProcesses: []string{"HealthCheck"}}); err != nil {
		t.Fatal(err)
	}
	clk.Step(301 * time.Second)
	if h := healthOf(e.describe(t, "health"), sick); h != "Healthy" {
		t.Fatalf("HealthCheck suspended: %s is %s, want Healthy", sick, h)
	}
	// Suspended ReplaceUnhealthy: marked Unhealthy, kept.
	if _, err := e.asg.SuspendProcesses(ctx, &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String("health"), ScalingProcesses: []string{"ReplaceUnhealthy"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.asg.ResumeProcesses(ctx, &autoscaling.ResumeProcessesInput{AutoScalingGroupName: aws.String("health"), ScalingProcesses: []string{"HealthCheck"}}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if h := healthOf(e.describe(t, "health"), sick); h != "Unhealthy" {
			t.Fatalf("ReplaceUnhealthy suspended: %s is %s, want Unhealthy and kept", sick, h)
		}
	}
	// Resumed: replaced, desired unchanged.
	if _, err := e.asg.ResumeProcesses(ctx, &autoscaling.ResumeProcessesInput{AutoScalingGroupName: aws.String("health"), ScalingProcesses: []string{"ReplaceUnhealthy"}}); err != nil {
		t.Fatal(err)
	}
	g = e.waitGroup(t, "health", "replaced the impaired instance", func(g astypes.AutoScalingGroup) bool {
		return healthOf(g, sick) == "gone" && inService(2)(g)
	})
	if aws.ToInt32(g.DesiredCapacity) != 2 || !slices.Contains(instanceIDs(g), other) {
		t.Fatalf("after the replacement: desired %d, instances %v; want 2 with %s kept", aws.ToInt32(g.DesiredCapacity), instanceIDs(g), other)
	}
	waitCauses(t, e, "health", "taken out of service in response to an EC2 instance status checks failure",
		"an instance was started in response to a difference between desired and actual capacity")

	// SetInstanceHealth: respecting the grace period, a new instance is
	// marked but kept until it ends; without, replaced at once.
	fresh := ""
	for _, id := range instanceIDs(g) {
		if id != other {
			fresh = id
		}
	}
	if _, err := e.asg.SetInstanceHealth(ctx, &autoscaling.SetInstanceHealthInput{InstanceId: aws.String(fresh), HealthStatus: aws.String("Unhealthy")}); err != nil {
		t.Fatalf("SetInstanceHealth: %v", err)
	}
	if h := healthOf(e.describe(t, "health"), fresh); h != "Unhealthy" {
		t.Fatalf("set Unhealthy within the grace period: %s is %s, want Unhealthy and kept", fresh, h)
	}
	if _, err := e.asg.SetInstanceHealth(ctx, &autoscaling.SetInstanceHealthInput{InstanceId: aws.String(other), HealthStatus: aws.String("Unhealthy"), ShouldRespectGracePeriod: aws.Bool(false)}); err != nil {
		t.Fatal(err)
	}
	e.waitGroup(t, "health", "replaced the instance set Unhealthy", func(g astypes.AutoScalingGroup) bool {
		return healthOf(g, other) == "gone" && healthOf(g, fresh) == "Unhealthy" && len(g.Instances) == 2
	})
	waitCauses(t, e, "health", "taken out of service in response to a user health-check")
	if _, err := e.asg.SetInstanceHealth(ctx, &autoscaling.SetInstanceHealthInput{InstanceId: aws.String(fresh), HealthStatus: aws.String("Healthy")}); err != nil {
		t.Fatal(err)
	}
	clk.Step(301 * time.Second)
	if h := healthOf(e.describe(t, "health"), fresh); h != "Healthy" {
		t.Fatalf("set Healthy again: %s is %s", fresh, h)
	}

	// Errors.
	_, err := e.asg.SetInstanceHealth(ctx, &autoscaling.SetInstanceHealthInput{InstanceId: aws.String("i-0123456789abcdef0"), HealthStatus: aws.String("Unhealthy")})
	awstest.APIError(t, err, "ValidationError")
	_, err = e.asg.SetInstanceHealth(ctx, &autoscaling.SetInstanceHealthInput{InstanceId: aws.String(fresh), HealthStatus: aws.String("Sick")})
	awstest.APIError(t, err, "ValidationError")
	if !strings.Contains(activityCauses(t, e, "health"), "user health-check") {
		t.Fatal("no activity for the user health-check")
	}
}

// TestAWSLifecycleHooks drives lifecycle hooks through the real SDK, on a
// fake clock: a launch hook holds new instances in Pending:Wait, not
// booted, until CompleteLifecycleAction (CONTINUE boots, a timed-out
// ABANDON terminates and replaces); a terminate hook holds a terminated
// instance in Terminating:Wait until its heartbeat times out; AWS's
// errors for unknown hooks, groups and actions.
func TestAWSLifecycleHooks(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	e := newAWSEnv(t, core.Options{Clock: clk, Faces: []core.Face{&AWSFace{ClockSkew: 24 * time.Hour}}})
	ctx := context.Background()
	lt := e.template(t, "hooks", "v1.31.2")
	subnet := AWSDefaultSubnetIDs(AWSDefaultAccountID, AWSDefaultRegion)[AWSDefaultRegion+"a"]
	_, err := e.asg.CreateAutoScalingGroup(ctx, &autoscaling.CreateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String("hooks"),
		LaunchTemplate:       &astypes.LaunchTemplateSpecification{LaunchTemplateId: lt.LaunchTemplateId, Version: aws.String("$Latest")},
		MinSize:              aws.Int32(0), MaxSize: aws.Int32(5), DesiredCapacity: aws.Int32(1),
		VPCZoneIdentifier: aws.String(subnet),
		LifecycleHookSpecificationList: []astypes.LifecycleHookSpecification{{
			LifecycleHookName: aws.String("launch"), LifecycleTransition: aws.String("autoscaling:EC2_INSTANCE_LAUNCHING"),
			HeartbeatTimeout: aws.Int32(60), NotificationMetadata: aws.String("meta"),
		}},
	})
	if err != nil {
		t.Fatalf("CreateAutoScalingGroup: %v", err)
	}
	cs := e.srv.Cloud().Scope(AWSFaceName, AWSScope(AWSDefaultAccountID, AWSDefaultRegion))

	// The first instance waits, not booted, however often the group is read.
	first := onlyInstance(t, e.describe(t, "hooks"), "Pending:Wait")
	clk.Step(59 * time.Second)
	onlyInstance(t, e.describe(t, "hooks"), "Pending:Wait")
	cg, err := cs.GetGroup("hooks")
	if err != nil || len(cg.Instances) != 1 || cg.Instances[0].State != core.StateCreating || !cg.Instances[0].Held {
		t.Fatalf("core group %+v, %v: want one instance held Creating", cg, err)
	}

	hooks, err := e.asg.DescribeLifecycleHooks(ctx, &autoscaling.DescribeLifecycleHooksInput{AutoScalingGroupName: aws.String("hooks")})
	if err != nil || len(hooks.LifecycleHooks) != 1 {
		t.Fatalf("DescribeLifecycleHooks: %+v, %v", hooks, err)
	}
	if hk := hooks.LifecycleHooks[0]; aws.ToString(hk.LifecycleHookName) != "launch" || aws.ToString(hk.DefaultResult) != "ABANDON" ||
		aws.ToInt32(hk.HeartbeatTimeout) != 60 || aws.ToString(hk.NotificationMetadata) != "meta" || aws.ToInt32(hk.GlobalTimeout) != 6000 {
		t.Fatalf("hook %+v", hk)
	}

	// CONTINUE: the instance boots (no delays) and is in service.
	if err := continueLaunch(e, "hooks", first); err != nil {
		t.Fatalf("CompleteLifecycleAction: %v", err)
	}
	e.waitGroup(t, "hooks", "had its instance in service", inService(1))
	err = continueLaunch(e, "hooks", first)
	awstest.APIError(t, err, "ValidationError")

	// A timed-out ABANDON terminates the new instance; a replacement waits.
	e.setDesired(t, "hooks", 2)
	second := onlyInstance(t, e.describe(t, "hooks"), "Pending:Wait")
	if _, err := e.asg.RecordLifecycleActionHeartbeat(ctx, &autoscaling.RecordLifecycleActionHeartbeatInput{
		AutoScalingGroupName: aws.String("hooks"), LifecycleHookName: aws.String("launch"), InstanceId: aws.String(second),
	}); err != nil {
		t.Fatalf("RecordLifecycleActionHeartbeat: %v", err)
	}
	clk.Step(61 * time.Second)
	g := e.describe(t, "hooks")
	third := onlyInstance(t, g, "Pending:Wait")
	if st := lifecycleStates(g)[second]; third == second || st != "" && st != "Terminating" || aws.ToInt32(g.DesiredCapacity) != 2 {
		t.Fatalf("after the timeout: %v (second %s), desired %d: want %s terminated and a replacement waiting", lifecycleStates(g), second, aws.ToInt32(g.DesiredCapacity), second)
	}
	if err := continueLaunch(e, "hooks", third); err != nil {
		t.Fatalf("CompleteLifecycleAction: %v", err)
	}
	e.waitGroup(t, "hooks", "had 2 instances in service", inService(2))

	// A terminate hook: the instance waits in Terminating:Wait, running,
	// until the heartbeat times out; no replacement with a decrement.
	if _, err := e.asg.PutLifecycleHook(ctx, &autoscaling.PutLifecycleHookInput{
		AutoScalingGroupName: aws.String("hooks"), LifecycleHookName: aws.String("drain"),
		LifecycleTransition: aws.String("autoscaling:EC2_INSTANCE_TERMINATING"), HeartbeatTimeout: aws.Int32(30), DefaultResult: aws.String("CONTINUE"),
	}); err != nil {
		t.Fatalf("PutLifecycleHook: %v", err)
	}
	if _, err := e.asg.TerminateInstanceInAutoScalingGroup(ctx, &autoscaling.TerminateInstanceInAutoScalingGroupInput{
		InstanceId: aws.String(first), ShouldDecrementDesiredCapacity: aws.Bool(true),
	}); err != nil {
		t.Fatalf("TerminateInstanceInAutoScalingGroup: %v", err)
	}
	g = e.describe(t, "hooks")
	if s := lifecycleStates(g); len(s) != 2 || s[first] != "Terminating:Wait" || s[third] != "InService" || aws.ToInt32(g.DesiredCapacity) != 1 {
		t.Fatalf("after terminating %s: %v, desired %d", first, s, aws.ToInt32(g.DesiredCapacity))
	}
	if cg, _ := cs.GetGroup("hooks"); cg.Instances[0].State != core.StateRunning {
		t.Fatalf("instance in Terminating:Wait is %s in the core, want still Running", cg.Instances[0].State)
	}
	clk.Step(31 * time.Second)
	e.waitGroup(t, "hooks", "was down to 1 instance", inService(1))

	// AWS's errors.
	_, err = e.asg.PutLifecycleHook(ctx, &autoscaling.PutLifecycleHookInput{
		AutoScalingGroupName: aws.String("hooks"), LifecycleHookName: aws.String("short"),
		LifecycleTransition: aws.String("autoscaling:EC2_INSTANCE_LAUNCHING"), HeartbeatTimeout: aws.Int32(10),
	})
	awstest.APIError(t, err, "ValidationError")
	_, err = e.asg.PutLifecycleHook(ctx, &autoscaling.PutLifecycleHookInput{
		AutoScalingGroupName: aws.String("nope"), LifecycleHookName: aws.String("x"), LifecycleTransition: aws.String("autoscaling:EC2_INSTANCE_LAUNCHING"),
	})
	awstest.APIError(t, err, "ValidationError")
	_, err = e.asg.DeleteLifecycleHook(ctx, &autoscaling.DeleteLifecycleHookInput{AutoScalingGroupName: aws.String("hooks"), LifecycleHookName: aws.String("nope")})
	awstest.APIError(t, err, "ValidationError")
	_, err = e.asg.CompleteLifecycleAction(ctx, &autoscaling.CompleteLifecycleActionInput{
		AutoScalingGroupName: aws.String("hooks"), LifecycleHookName: aws.String("launch"),
		LifecycleActionToken: aws.String("00000000-0000-4000-8000-000000000000"), LifecycleActionResult: aws.String("CONTINUE"),
	})
	awstest.APIError(t, err, "ValidationError")

	// Without hooks instances launch straight away.
	for _, n := range []string{"launch", "drain"} {
		if _, err := e.asg.DeleteLifecycleHook(ctx, &autoscaling.DeleteLifecycleHookInput{AutoScalingGroupName: aws.String("hooks"), LifecycleHookName: aws.String(n)}); err != nil {
			t.Fatalf("DeleteLifecycleHook %s: %v", n, err)
		}
	}
	e.scaleTo(t, "hooks", 2)
}

// TestAWSSuspendResumeProcesses drives Suspend/ResumeProcesses through the
// real SDK: suspended processes are reported with AWS's reason; Launch
// suspended holds a capacity increase (no instance, no activity) until
// resumed; Terminate suspended holds a scale-in; no names is every
// process; an unknown process is ValidationError.
func TestAWSSuspendResumeProcesses(t *testing.T) {
	e := newAWSEnv(t, core.Options{})
	ctx := context.Background()
	e.startGroup(t, "procs", 0, 6, 2)

	if _, err := e.asg.SuspendProcesses(ctx, &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String("procs"),
		ScalingProcesses: []string{"Launch", "AZRebalance"}}); err != nil {
		t.Fatalf("SuspendProcesses: %v", err)
	}
	g := e.describe(t, "procs")
	if got := strings.Join(suspendedNames(g), ","); got != "AZRebalance,Launch" {
		t.Fatalf("suspended processes %q, want AZRebalance,Launch", got)
	}
	for _, p := range g.SuspendedProcesses {
		if r := aws.ToString(p.SuspensionReason); !strings.HasPrefix(r, "User suspended at ") {
			t.Fatalf("suspension reason %q", r)
		}
	}

	// Launch suspended: the desired capacity changes, nothing launches.
	acts := func() int {
		out, err := e.asg.DescribeScalingActivities(ctx, &autoscaling.DescribeScalingActivitiesInput{AutoScalingGroupName: aws.String("procs")})
		if err != nil {
			t.Fatal(err)
		}
		return len(out.Activities)
	}
	before := acts()
	e.setDesired(t, "procs", 4)
	for range 3 {
		if g := e.describe(t, "procs"); len(g.Instances) != 2 || aws.ToInt32(g.DesiredCapacity) != 4 {
			t.Fatalf("Launch suspended: %d instances, desired %d: want 2 and 4", len(g.Instances), aws.ToInt32(g.DesiredCapacity))
		}
	}
	if n := acts(); n != before {
		t.Fatalf("Launch suspended: %d activities, want %d (none started)", n, before)
	}
	if _, err := e.asg.ResumeProcesses(ctx, &autoscaling.ResumeProcessesInput{AutoScalingGroupName: aws.String("procs"), ScalingProcesses: []string{"Launch"}}); err != nil {
		t.Fatalf("ResumeProcesses: %v", err)
	}
	g = e.waitGroup(t, "procs", "launched what Launch held back", inService(4))
	if got := strings.Join(suspendedNames(g), ","); got != "AZRebalance" {
		t.Fatalf("suspended processes %q after resuming Launch", got)
	}

	// Terminate suspended: a scale-in terminates nothing until resumed.
	if _, err := e.asg.SuspendProcesses(ctx, &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String("procs"), ScalingProcesses: []string{"Terminate"}}); err != nil {
		t.Fatal(err)
	}
	e.setDesired(t, "procs", 1)
	if g := e.describe(t, "procs"); !inService(4)(g) || aws.ToInt32(g.DesiredCapacity) != 1 {
		t.Fatalf("Terminate suspended: %v, desired %d: want 4 in service, desired 1", lifecycleStates(g), aws.ToInt32(g.DesiredCapacity))
	}
	// No names: every process.
	if _, err := e.asg.ResumeProcesses(ctx, &autoscaling.ResumeProcessesInput{AutoScalingGroupName: aws.String("procs")}); err != nil {
		t.Fatal(err)
	}
	g = e.waitGroup(t, "procs", "scaled in once Terminate resumed", inService(1))
	if len(g.SuspendedProcesses) != 0 {
		t.Fatalf("suspended processes %v after resuming all", suspendedNames(g))
	}
	if _, err := e.asg.SuspendProcesses(ctx, &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String("procs")}); err != nil {
		t.Fatal(err)
	}
	if got := suspendedNames(e.describe(t, "procs")); len(got) != 9 {
		t.Fatalf("suspend all: %v, want the 9 processes", got)
	}

	// Errors.
	_, err := e.asg.SuspendProcesses(ctx, &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String("procs"), ScalingProcesses: []string{"Reboot"}})
	awstest.APIError(t, err, "ValidationError")
	_, err = e.asg.ResumeProcesses(ctx, &autoscaling.ResumeProcessesInput{AutoScalingGroupName: aws.String("nope")})
	awstest.APIError(t, err, "ValidationError")
}

// TestAWSReplaceUnhealthy: an instance that failed to boot is replaced
// when the group is next read, unless ReplaceUnhealthy is suspended.
func TestAWSReplaceUnhealthy(t *testing.T) {
	e := newAWSEnv(t, core.Options{})
	ctx := context.Background()
	lt := e.template(t, "unhealthy", "v1.31.2")
	e.createGroup(t, "unhealthy", lt, "$Latest", 0, 3, 0)
	if _, err := e.asg.SuspendProcesses(ctx, &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String("unhealthy"), ScalingProcesses: []string{"ReplaceUnhealthy"}}); err != nil {
		t.Fatal(err)
	}
	cs := e.srv.Cloud().Scope(AWSFaceName, AWSScope(AWSDefaultAccountID, AWSDefaultRegion))
	fail := func(rate float64) {
		if _, err := cs.SetSimulation("unhealthy", core.SimulationPatch{FailureRate: &rate}); err != nil {
			t.Fatal(err)
		}
	}
	fail(1)
	e.setDesired(t, "unhealthy", 1)
	g := e.waitGroup(t, "unhealthy", "had an unhealthy instance", func(g astypes.AutoScalingGroup) bool {
		return len(g.Instances) == 1 && aws.ToString(g.Instances[0].HealthStatus) == "Unhealthy"
	})
	failed := aws.ToString(g.Instances[0].InstanceId)
	for range 3 {
		if g := e.describe(t, "unhealthy"); len(g.Instances) != 1 || aws.ToString(g.Instances[0].InstanceId) != failed {
			t.Fatalf("ReplaceUnhealthy suspended: %v, want %s kept", lifecycleStates(g), failed)
		}
	}
	fail(0)
	if _, err := e.asg.ResumeProcesses(ctx, &autoscaling.ResumeProcessesInput{AutoScalingGroupName: aws.String("unhealthy"), ScalingProcesses: []string{"ReplaceUnhealthy"}}); err != nil {
		t.Fatal(err)
	}
	g = e.waitGroup(t, "unhealthy", "replaced its unhealthy instance", inService(1))
	if aws.ToString(g.Instances[0].InstanceId) == failed || aws.ToString(g.Instances[0].HealthStatus) != "Healthy" {
		t.Fatalf("after resuming ReplaceUnhealthy: %+v", g.Instances[0])
	}
}

// refreshEnv is a group of 4 instances at $Latest on a fake clock.
type refreshEnv struct {
	*awsTestEnv
	clk *clocktesting.FakeClock
	lt  *ec2types.LaunchTemplate
}

func newRefreshEnv(t *testing.T) *refreshEnv {
	clk := clocktesting.NewFakeClock(time.Now())
	e := newAWSEnv(t, core.Options{Clock: clk, Faces: []core.Face{&AWSFace{ClockSkew: 24 * time.Hour}}})
	lt, _ := e.startGroup(t, "refresh", 0, 10, 4)
	return &refreshEnv{awsTestEnv: e, clk: clk, lt: lt}
}

// newVersion creates the template's next version, of instance type typ.
func (e *refreshEnv) newVersion(t *testing.T, typ ec2types.InstanceType) string {
	t.Helper()
	v, err := e.ec2.CreateLaunchTemplateVersion(context.Background(), &ec2.CreateLaunchTemplateVersionInput{
		LaunchTemplateId: e.lt.LaunchTemplateId, SourceVersion: aws.String("1"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{InstanceType: typ},
	})
	if err != nil {
		t.Fatalf("CreateLaunchTemplateVersion: %v", err)
	}
	return strconv.FormatInt(aws.ToInt64(v.LaunchTemplateVersion.VersionNumber), 10)
}

func (e *refreshEnv) refresh(t *testing.T, id string) astypes.InstanceRefresh {
	t.Helper()
	out, err := e.asg.DescribeInstanceRefreshes(context.Background(), &autoscaling.DescribeInstanceRefreshesInput{
		AutoScalingGroupName: aws.String("refresh"), InstanceRefreshIds: []string{id}})
	if err != nil || len(out.InstanceRefreshes) != 1 {
		t.Fatalf("DescribeInstanceRefreshes %s: %+v, %v", id, out, err)
	}
	return out.InstanceRefreshes[0]
}

// counts are the group's instances in service and not terminating, and
// those in service from version.
func counts(g astypes.AutoScalingGroup, version string) (inSvc, live, current int) {
	for _, in := range g.Instances {
		if in.LifecycleState == astypes.LifecycleStateInService && aws.ToString(in.HealthStatus) == "Healthy" {
			inSvc++
			if in.LaunchTemplate != nil && aws.ToString(in.LaunchTemplate.Version) == version {
				current++
			}
		}
		if in.LifecycleState != astypes.LifecycleStateTerminating {
			live++
		}
	}
	return
}

// runRefresh steps the clock past each warmup until the refresh ends,
// checking the healthy bounds on every observed state.
func (e *refreshEnv) runRefresh(t *testing.T, id, version string, minInService, maxLive int) astypes.InstanceRefresh {
	t.Helper()
	for range 60 {
		g := e.describe(t, "refresh")
		inSvc, live, _ := counts(g, version)
		if inSvc < minInService || live > maxLive {
			t.Fatalf("during the refresh: %d in service (want ≥ %d), %d instances (want ≤ %d): %v", inSvc, minInService, live, maxLive, lifecycleStates(g))
		}
		r := e.refresh(t, id)
		if r.Status == astypes.InstanceRefreshStatusSuccessful {
			return r
		}
		if r.Status != astypes.InstanceRefreshStatusInProgress {
			t.Fatalf("refresh %+v", r)
		}
		e.clk.Step(31 * time.Second)
	}
	t.Fatalf("refresh %s never ended: %+v", id, e.refresh(t, id))
	return astypes.InstanceRefresh{}
}

// TestAWSInstanceRefresh drives instance refreshes through the real SDK on
// a fake clock: instances not on the group's launch template version are
// replaced within MinHealthyPercentage/MaxHealthyPercentage, after each
// new instance's warmup; one refresh at a time; a suspended InstanceRefresh
// process holds it; CancelInstanceRefresh stops it.
func TestAWSInstanceRefresh(t *testing.T) {
	e := newRefreshEnv(t)
	ctx := context.Background()
	start := func(minH, maxH *int32) (string, error) {
		out, err := e.asg.StartInstanceRefresh(ctx, &autoscaling.StartInstanceRefreshInput{AutoScalingGroupName: aws.String("refresh"),
			Preferences: &astypes.RefreshPreferences{MinHealthyPercentage: minH, MaxHealthyPercentage: maxH, InstanceWarmup: aws.Int32(60), SkipMatching: aws.Bool(true)}})
		if err != nil {
			return "", err
		}
		return aws.ToString(out.InstanceRefreshId), nil
	}

	// Nothing to replace: Successful at once.
	id, err := start(nil, nil)
	if err != nil {
		t.Fatalf("StartInstanceRefresh: %v", err)
	}
	if r := e.refresh(t, id); r.Status != astypes.InstanceRefreshStatusSuccessful || aws.ToInt32(r.PercentageComplete) != 100 {
		t.Fatalf("empty refresh %+v", r)
	}

	// minHealthy 50%: two at a time, never fewer than 2 in service, never
	// more than 4 instances.
	v2 := e.newVersion(t, ec2types.InstanceTypeM5Xlarge)
	if id, err = start(aws.Int32(50), nil); err != nil {
		t.Fatalf("StartInstanceRefresh: %v", err)
	}
	if r := e.refresh(t, id); r.Status != astypes.InstanceRefreshStatusInProgress || aws.ToInt32(r.Preferences.MinHealthyPercentage) != 50 || aws.ToInt32(r.Preferences.InstanceWarmup) != 60 {
		t.Fatalf("refresh %+v", r)
	}
	_, err = start(nil, nil)
	if ae := awstest.APIError(t, err, "InstanceRefreshInProgress"); ae.ErrorMessage() != "An Instance Refresh is already in progress and blocks the execution of this Instance Refresh." {
		t.Fatalf("message %q", ae.ErrorMessage())
	}
	e.runRefresh(t, id, v2, 2, 4)
	g := e.describe(t, "refresh")
	if inSvc, live, cur := counts(g, v2); inSvc != 4 || live != 4 || cur != 4 {
		t.Fatalf("after the refresh: %d in service, %d live, %d on version %s: %+v", inSvc, live, cur, v2, g.Instances)
	}
	for _, in := range g.Instances {
		if aws.ToString(in.InstanceType) != "m5.xlarge" {
			t.Fatalf("instance %+v after the refresh", in)
		}
	}

	// minHealthy 100%, maxHealthy 150%: launch first, never fewer than 4 in
	// service, never more than 6 instances.
	v3 := e.newVersion(t, ec2types.InstanceTypeM5Large)
	if id, err = start(aws.Int32(100), aws.Int32(150)); err != nil {
		t.Fatalf("StartInstanceRefresh: %v", err)
	}
	e.runRefresh(t, id, v3, 4, 6)
	if inSvc, live, cur := counts(e.describe(t, "refresh"), v3); inSvc != 4 || live != 4 || cur != 4 {
		t.Fatalf("after the refresh: %d in service, %d live, %d on version %s", inSvc, live, cur, v3)
	}

	// InstanceRefresh suspended: the refresh does not progress; cancelled.
	v4 := e.newVersion(t, ec2types.InstanceTypeM5Xlarge)
	if _, err := e.asg.SuspendProcesses(ctx, &autoscaling.SuspendProcessesInput{AutoScalingGroupName: aws.String("refresh"), ScalingProcesses: []string{"InstanceRefresh"}}); err != nil {
		t.Fatal(err)
	}
	if id, err = start(aws.Int32(0), nil); err != nil {
		t.Fatalf("StartInstanceRefresh: %v", err)
	}
	for range 3 {
		e.clk.Step(time.Minute)
		if _, _, cur := counts(e.describe(t, "refresh"), v4); cur != 0 {
			t.Fatalf("InstanceRefresh suspended: %d instances replaced", cur)
		}
		if r := e.refresh(t, id); r.Status != astypes.InstanceRefreshStatusPending || aws.ToInt32(r.InstancesToUpdate) != 4 {
			t.Fatalf("InstanceRefresh suspended: %+v", r)
		}
	}
	if _, err := e.asg.CancelInstanceRefresh(ctx, &autoscaling.CancelInstanceRefreshInput{AutoScalingGroupName: aws.String("refresh")}); err != nil {
		t.Fatalf("CancelInstanceRefresh: %v", err)
	}
	if r := e.refresh(t, id); r.Status != astypes.InstanceRefreshStatusCancelled || r.EndTime == nil {
		t.Fatalf("cancelled refresh %+v", r)
	}
	_, err = e.asg.CancelInstanceRefresh(ctx, &autoscaling.CancelInstanceRefreshInput{AutoScalingGroupName: aws.String("refresh")})
	awstest.APIError(t, err, "ActiveInstanceRefreshNotFound")
	if _, _, cur := counts(e.describe(t, "refresh"), v4); cur != 0 {
		t.Fatalf("after the cancel: %d instances replaced", cur)
	}

	// AWS's validation of the preferences; all refreshes are listed.
	_, err = start(nil, aws.Int32(150))
	awstest.APIError(t, err, "ValidationError")
	_, err = start(aws.Int32(101), nil)
	awstest.APIError(t, err, "ValidationError")
	all, err := e.asg.DescribeInstanceRefreshes(ctx, &autoscaling.DescribeInstanceRefreshesInput{AutoScalingGroupName: aws.String("refresh")})
	if err != nil || len(all.InstanceRefreshes) != 4 || aws.ToString(all.InstanceRefreshes[0].InstanceRefreshId) != id {
		t.Fatalf("DescribeInstanceRefreshes: %+v, %v", all, err)
	}
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
	e.setDesired(t, "mixed", 4)
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
