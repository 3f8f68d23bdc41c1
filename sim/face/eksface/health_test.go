package eksface

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/sim/face/awsface/awstest"
)

// TestEKSFaceHealthVCPUQuota: the AWS face's vCPU quota holds a scale-up
// back; the update fails, the node group is DEGRADED with
// AsgInstanceLaunchFailures carrying the Auto Scaling group's failed
// activity, and recovers once another node group frees the vCPUs.
func TestEKSFaceHealthVCPUQuota(t *testing.T) {
	e := newEKSEnv(t, &awsface.AWSFace{VCPUQuota: 4}, &EKSFace{NodeCreationTimeout: 500 * time.Millisecond, Interval: 20 * time.Millisecond})
	ctx := context.Background()
	e.createCluster(t, "")
	e.createNodegroup(t, "ng1", 1, nil)
	e.createNodegroup(t, "ng2", 1, nil)
	e.wait(t, "c1", "ng1", healthy)
	e.wait(t, "c1", "ng2", healthy)

	up, err := e.eks.UpdateNodegroupConfig(ctx, &eks.UpdateNodegroupConfigInput{ClusterName: aws.String("c1"), NodegroupName: aws.String("ng2"),
		ScalingConfig: &ekstypes.NodegroupScalingConfig{DesiredSize: aws.Int32(2)}})
	if err != nil {
		t.Fatal(err)
	}
	ng := e.wait(t, "c1", "ng2", func(n *ekstypes.Nodegroup) bool { return n.Status == ekstypes.NodegroupStatusDegraded })
	is := issue(t, ng, ekstypes.NodegroupIssueCodeAsgInstanceLaunchFailures)
	asgName := aws.ToString(ng.Resources.AutoScalingGroups[0].Name)
	if !strings.Contains(aws.ToString(is.Message), "vCPU limit of 4") || len(is.ResourceIds) != 1 || is.ResourceIds[0] != asgName {
		t.Fatalf("issue %s %q %v: want the vCPU limit, naming %s", is.Code, aws.ToString(is.Message), is.ResourceIds, asgName)
	}
	du, err := e.eks.DescribeUpdate(ctx, &eks.DescribeUpdateInput{Name: aws.String("c1"), NodegroupName: aws.String("ng2"), UpdateId: up.Update.Id})
	if err != nil || du.Update.Status != ekstypes.UpdateStatusFailed || len(du.Update.Errors) != 1 || du.Update.Errors[0].ErrorCode != ekstypes.ErrorCodeNodeCreationFailure {
		t.Fatalf("DescribeUpdate: %+v, %v", du, err)
	}
	acts, err := e.asg.DescribeScalingActivities(ctx, &autoscaling.DescribeScalingActivitiesInput{AutoScalingGroupName: aws.String(asgName)})
	if err != nil || len(acts.Activities) == 0 || acts.Activities[0].StatusCode != "Failed" || aws.ToString(acts.Activities[0].StatusMessage) != aws.ToString(is.Message) {
		t.Fatalf("the ASG's scaling activities: %+v, %v", acts, err)
	}
	if got := e.instances(t, "ng2"); len(got) != 1 {
		t.Fatalf("instances %v: want the 1 the quota allows", got)
	}

	// ng1's vCPUs freed: ng2 launches its second node and recovers.
	if _, err := e.eks.DeleteNodegroup(ctx, &eks.DeleteNodegroupInput{ClusterName: aws.String("c1"), NodegroupName: aws.String("ng1")}); err != nil {
		t.Fatal(err)
	}
	e.wait(t, "c1", "ng2", healthy)
	if got := e.instances(t, "ng2"); len(got) != 2 {
		t.Fatalf("instances %v after the recovery: want 2", got)
	}
}

// TestEKSFaceHealthCreateFailed: a node group none of whose nodes the
// quota lets launch is CREATE_FAILED with AsgInstanceLaunchFailures.
func TestEKSFaceHealthCreateFailed(t *testing.T) {
	e := newEKSEnv(t, &awsface.AWSFace{VCPUQuota: 1}, &EKSFace{NodeCreationTimeout: 300 * time.Millisecond, Interval: 20 * time.Millisecond})
	e.createCluster(t, "")
	e.createNodegroup(t, "ng1", 2, nil)
	ng := e.wait(t, "c1", "ng1", func(n *ekstypes.Nodegroup) bool { return n.Status != ekstypes.NodegroupStatusCreating })
	if ng.Status != ekstypes.NodegroupStatusCreateFailed {
		t.Fatalf("status %s: want CREATE_FAILED", ng.Status)
	}
	issue(t, ng, ekstypes.NodegroupIssueCodeAsgInstanceLaunchFailures)
}

// TestEKSFaceHealthASGDeleted: the Auto Scaling group deleted behind EKS's
// back is AutoScalingGroupNotFound; one recreated with the name is taken
// over again, and the node group recovers.
func TestEKSFaceHealthASGDeleted(t *testing.T) {
	e := newEKSEnv(t, &EKSFace{Interval: 20 * time.Millisecond})
	ctx := context.Background()
	e.createCluster(t, "")
	ng, asgName := e.healthyNodegroup(t, "ng1", 2, nil)
	if _, err := e.asg.DeleteAutoScalingGroup(ctx, &autoscaling.DeleteAutoScalingGroupInput{AutoScalingGroupName: aws.String(asgName), ForceDelete: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	ng = e.wait(t, "c1", "ng1", func(n *ekstypes.Nodegroup) bool { return n.Status == ekstypes.NodegroupStatusDegraded })
	if is := issue(t, ng, ekstypes.NodegroupIssueCodeAutoScalingGroupNotFound); len(is.ResourceIds) != 1 || is.ResourceIds[0] != asgName {
		t.Fatalf("issue resources %v: want %s", is.ResourceIds, asgName)
	}
	// Wait for the group to be gone, then recreate it, as the issue's
	// remedy says.
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := e.asg.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{asgName}})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.AutoScalingGroups) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Auto Scaling group %s was not deleted", asgName)
		}
		time.Sleep(20 * time.Millisecond)
	}
	lt, err := e.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("recreated"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(awsface.AWSImageID(awsface.AWSDefaultRegion, awsface.AWSImageName("v1.31.2"))), InstanceType: ec2types.InstanceTypeT3Medium}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.asg.CreateAutoScalingGroup(ctx, &autoscaling.CreateAutoScalingGroupInput{AutoScalingGroupName: aws.String(asgName),
		MinSize: aws.Int32(0), MaxSize: aws.Int32(5), DesiredCapacity: aws.Int32(0), VPCZoneIdentifier: aws.String(awsface.AWSDefaultSubnetID),
		LaunchTemplate: &asgtypes.LaunchTemplateSpecification{LaunchTemplateId: lt.LaunchTemplate.LaunchTemplateId}}); err != nil {
		t.Fatal(err)
	}
	e.wait(t, "c1", "ng1", healthy)
	e.wantReleases(t, "ng1", 2, "1.31/") // EKS's release, after the recovery
}

// TestEKSFaceHealthLaunchTemplateDeleted: the node group's launch template
// deleted is Ec2LaunchTemplateNotFound, and nothing more launches.
func TestEKSFaceHealthLaunchTemplateDeleted(t *testing.T) {
	e := newEKSEnv(t, &EKSFace{Interval: 20 * time.Millisecond})
	ctx := context.Background()
	e.createCluster(t, "")
	lt, err := e.ec2.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{LaunchTemplateName: aws.String("nodes"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(awsface.AWSImageID(awsface.AWSDefaultRegion, awsface.AWSImageName("v1.31.2")))}})
	if err != nil {
		t.Fatal(err)
	}
	id := aws.ToString(lt.LaunchTemplate.LaunchTemplateId)
	// Named by name: EKS answers the template's ID.
	ng, _ := e.healthyNodegroup(t, "ng1", 1, &ekstypes.LaunchTemplateSpecification{Name: aws.String("nodes"), Version: aws.String("1")})
	if aws.ToString(ng.LaunchTemplate.Id) != id {
		t.Fatalf("launch template %+v: want ID %s", ng.LaunchTemplate, id)
	}
	if _, err := e.ec2.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateId: aws.String(id)}); err != nil {
		t.Fatal(err)
	}
	ng = e.wait(t, "c1", "ng1", func(n *ekstypes.Nodegroup) bool { return n.Status == ekstypes.NodegroupStatusDegraded })
	if is := issue(t, ng, ekstypes.NodegroupIssueCodeEc2LaunchTemplateNotFound); len(is.ResourceIds) != 1 || is.ResourceIds[0] != id {
		t.Fatalf("issue resources %v: want %s", is.ResourceIds, id)
	}
	// A DEGRADED node group can be updated; its scale-up launches nothing.
	if _, err := e.eks.UpdateNodegroupConfig(ctx, &eks.UpdateNodegroupConfigInput{ClusterName: aws.String("c1"), NodegroupName: aws.String("ng1"),
		ScalingConfig: &ekstypes.NodegroupScalingConfig{DesiredSize: aws.Int32(2)}}); err != nil {
		t.Fatal(err)
	}
	ng = e.wait(t, "c1", "ng1", func(n *ekstypes.Nodegroup) bool { return n.Health != nil && len(n.Health.Issues) > 0 })
	issue(t, ng, ekstypes.NodegroupIssueCodeEc2LaunchTemplateNotFound)
	if got := e.instances(t, "ng1"); len(got) != 1 {
		t.Fatalf("instances %v: want only the one launched before the template was deleted", got)
	}
}

// TestEKSFaceThrottling: an exhausted request budget answers EKS's
// ThrottlingException (429, X-Amzn-ErrorType), which the SDK's standard
// retryer retries until the bucket refills.
func TestEKSFaceThrottling(t *testing.T) {
	e := newEKSEnv(t, &EKSFace{Budget: core.Budget{Burst: 2, PerSecond: 20}})
	ctx := context.Background()
	var err error
	for range 3 {
		_, err = e.eks.ListClusters(ctx, &eks.ListClustersInput{})
	}
	// The code comes from the X-Amzn-ErrorType header: the body has only
	// the message.
	if awstest.APIError(t, err, EKSCodeThrottling); awstest.HTTPStatus(err) != http.StatusTooManyRequests {
		t.Fatalf("throttled with %d", awstest.HTTPStatus(err))
	}

	// The SDK's default retryer (standard: 3 attempts, backoff with
	// jitter, ThrottlingException retryable).
	cfg := awsConfig(e.srv.FaceURL(EKSFaceName))
	cfg.Retryer, cfg.RetryMaxAttempts = nil, 0
	retrying := eks.NewFromConfig(cfg)
	e.srv.ResetStats()
	for i := range 6 {
		if _, err := retrying.ListClusters(ctx, &eks.ListClustersInput{}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if n := e.srv.Stats().CountStatus(OpEKSListClusters, http.StatusTooManyRequests); n == 0 {
		t.Fatal("no request was throttled: the retryer was not exercised")
	}
}

// TestEKSNodeRepair: nodeRepairConfig is validated, kept and reported;
// with repair on, a node not Ready for the repair wait is replaced, the
// desired size unchanged; with it off, or beyond the unhealthy threshold,
// nothing is.
func TestEKSNodeRepair(t *testing.T) {
	e := newEKSEnv(t, &EKSFace{Interval: 20 * time.Millisecond, NodeRepairWait: 300 * time.Millisecond})
	ctx := context.Background()
	e.createCluster(t, "")
	create := func(name string, desired int32, rc *ekstypes.NodeRepairConfig) error {
		_, err := e.eks.CreateNodegroup(ctx, &eks.CreateNodegroupInput{
			ClusterName: aws.String("c1"), NodegroupName: aws.String(name), NodeRole: aws.String("role"), Subnets: []string{awsface.AWSDefaultSubnetID},
			ScalingConfig:    &ekstypes.NodegroupScalingConfig{MinSize: aws.Int32(0), MaxSize: aws.Int32(10), DesiredSize: aws.Int32(desired)},
			NodeRepairConfig: rc,
		})
		return err
	}
	err := create("invalid", 1, &ekstypes.NodeRepairConfig{Enabled: aws.Bool(true), MaxUnhealthyNodeThresholdCount: aws.Int32(1), MaxUnhealthyNodeThresholdPercentage: aws.Int32(10)})
	awstest.APIError(t, err, EKSCodeInvalidParameter)
	err = create("invalid", 1, &ekstypes.NodeRepairConfig{Enabled: aws.Bool(true), MaxParallelNodesRepairedPercentage: aws.Int32(101)})
	awstest.APIError(t, err, EKSCodeInvalidParameter)

	if err := create("repaired", 2, &ekstypes.NodeRepairConfig{Enabled: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	if err := create("unrepaired", 1, nil); err != nil {
		t.Fatal(err)
	}
	ng := e.wait(t, "c1", "repaired", healthy)
	if ng.NodeRepairConfig == nil || !aws.ToBool(ng.NodeRepairConfig.Enabled) {
		t.Fatalf("DescribeNodegroup: nodeRepairConfig %+v, want enabled", ng.NodeRepairConfig)
	}
	e.wait(t, "c1", "unrepaired", healthy)
	ids := e.waitInstances(t, "repaired", "ran 2 nodes", func(ids []string) bool { return len(ids) == 2 })
	other := e.waitInstances(t, "unrepaired", "ran 1 node", func(ids []string) bool { return len(ids) == 1 })

	for _, id := range []string{ids[0], other[0]} {
		if err := e.srv.Cloud().SetInstanceFault(id, core.FaultNodeNotReady); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.srv.Cloud().SetInstanceFault(ids[1], core.FaultCloudCheckFailing); err != nil {
		t.Fatal(err)
	}
	// The NotReady node is replaced; a failing cloud check is not EKS's
	// concern (its Auto Scaling group's health check is).
	e.waitInstances(t, "repaired", "replaced the NotReady node", func(now []string) bool {
		return len(now) == 2 && !slices.Contains(now, ids[0]) && slices.Contains(now, ids[1])
	})
	if ng := e.wait(t, "c1", "repaired", healthy); aws.ToInt32(ng.ScalingConfig.DesiredSize) != 2 {
		t.Fatalf("desired size after the repair: %d, want 2", aws.ToInt32(ng.ScalingConfig.DesiredSize))
	}
	// Without repair the NotReady node stays (its repair wait passed
	// while the other was replaced).
	if now := e.instances(t, "unrepaired"); len(now) != 1 || now[other[0]] == "" {
		t.Fatalf("the node group without repair replaced its node: %v", now)
	}

	// Turning repair off through UpdateNodegroupConfig.
	up, err := e.eks.UpdateNodegroupConfig(ctx, &eks.UpdateNodegroupConfigInput{ClusterName: aws.String("c1"), NodegroupName: aws.String("repaired"),
		NodeRepairConfig: &ekstypes.NodeRepairConfig{Enabled: aws.Bool(false)}})
	if err != nil {
		t.Fatal(err)
	}
	var types []ekstypes.UpdateParamType
	for _, p := range up.Update.Params {
		types = append(types, p.Type)
	}
	if !slices.Contains(types, ekstypes.UpdateParamTypeNodeRepairEnabled) {
		t.Fatalf("update params %v, want NodeRepairEnabled", types)
	}
	ng = e.wait(t, "c1", "repaired", healthy)
	if aws.ToBool(ng.NodeRepairConfig.Enabled) {
		t.Fatal("node repair still enabled after the update")
	}
}

func TestEKSRepairThresholds(t *testing.T) {
	i32 := func(v int32) *int32 { return &v }
	tests := []struct {
		name               string
		cfg                eksRepairConfig
		live, unhealthy    int
		wantGo             bool
		wantParallelOfFour int
	}{
		{name: "a small node group is always repaired", live: 5, unhealthy: 5, wantGo: true, wantParallelOfFour: 4},
		{name: "by default more than 20% of more than five stops repairs", live: 10, unhealthy: 3, wantGo: false, wantParallelOfFour: 4},
		{name: "20% of ten is repaired", live: 10, unhealthy: 2, wantGo: true, wantParallelOfFour: 4},
		{name: "a count threshold", cfg: eksRepairConfig{MaxUnhealthyNodeThresholdCount: i32(3), MaxParallelNodesRepairedCount: i32(1)}, live: 10, unhealthy: 3, wantGo: true, wantParallelOfFour: 1},
		{name: "a percentage threshold", cfg: eksRepairConfig{MaxUnhealthyNodeThresholdPercentage: i32(50), MaxParallelNodesRepairedPercentage: i32(50)}, live: 4, unhealthy: 3, wantGo: false, wantParallelOfFour: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.cfg.withinThreshold(tt.live, tt.unhealthy); got != tt.wantGo {
				t.Errorf("withinThreshold(%d, %d) = %v, want %v", tt.live, tt.unhealthy, got, tt.wantGo)
			}
			if got := tt.cfg.parallel(4); got != tt.wantParallelOfFour {
				t.Errorf("parallel(4) = %d, want %d", got, tt.wantParallelOfFour)
			}
		})
	}
}

// TestEKSNodegroupInstanceTerminatedInItsASG: a node group's instance
// terminated in its Auto Scaling group without a decrement
// (TerminateInstanceInAutoScalingGroup, as mpool remediates and
// cluster-autoscaler's peers do) is replaced by the group from the node
// group's release, and the node group's desired size stays; so is one
// that fails its EC2 status checks (the group's EC2 health check).
func TestEKSNodegroupInstanceTerminatedInItsASG(t *testing.T) {
	e := newEKSEnv(t, &EKSFace{Interval: 20 * time.Millisecond})
	ctx := context.Background()
	e.createCluster(t, "")
	_, asgName := e.healthyNodegroup(t, "ng1", 2, nil)
	ids := e.waitInstances(t, "ng1", "ran 2 nodes", func(ids []string) bool { return len(ids) == 2 })
	release := e.instances(t, "ng1")[ids[0]]

	out, err := e.asg.TerminateInstanceInAutoScalingGroup(ctx, &autoscaling.TerminateInstanceInAutoScalingGroupInput{
		InstanceId: aws.String(ids[0]), ShouldDecrementDesiredCapacity: aws.Bool(false)})
	if err != nil {
		t.Fatalf("TerminateInstanceInAutoScalingGroup: %v", err)
	}
	if !strings.Contains(aws.ToString(out.Activity.Cause), "taken out of service in response to a user request") {
		t.Errorf("activity cause %q", aws.ToString(out.Activity.Cause))
	}
	now := e.waitInstances(t, "ng1", "replaced the terminated node", func(now []string) bool {
		return len(now) == 2 && !slices.Contains(now, ids[0]) && slices.Contains(now, ids[1])
	})
	if got := e.instances(t, "ng1"); got[now[0]] != release || got[now[1]] != release {
		t.Errorf("instances after the replacement %v: want all of release %s", got, release)
	}
	asgs, err := e.asg.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{asgName}})
	if err != nil || aws.ToInt32(asgs.AutoScalingGroups[0].DesiredCapacity) != 2 {
		t.Fatalf("the ASG after the replacement: %+v, %v", asgs, err)
	}
	d, err := e.eks.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String("c1"), NodegroupName: aws.String("ng1")})
	if err != nil || aws.ToInt32(d.Nodegroup.ScalingConfig.DesiredSize) != 2 {
		t.Fatalf("the node group after the replacement: %+v, %v", d, err)
	}

	// The group's EC2 health check replaces an impaired instance.
	sick := now[0]
	if err := e.srv.Cloud().SetInstanceFault(sick, core.FaultCloudCheckFailing); err != nil {
		t.Fatal(err)
	}
	e.waitInstances(t, "ng1", "replaced the impaired node", func(ids []string) bool {
		// The group acts when it is read, as the face's background work does.
		_, _ = e.asg.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{asgName}})
		return len(ids) == 2 && !slices.Contains(ids, sick)
	})
}
