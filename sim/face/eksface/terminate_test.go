package eksface

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/eks"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
)

// TestEKSNodegroupInstanceTerminatedInItsASG: a node group's instance
// terminated in its Auto Scaling group without a decrement
// (TerminateInstanceInAutoScalingGroup, as mpool remediates and
// cluster-autoscaler's peers do) is replaced by the group from the node
// group's release, and the node group's desired size stays; so is one
// that fails its EC2 status checks (the group's EC2 health check).
func TestEKSNodegroupInstanceTerminatedInItsASG(t *testing.T) {
	e := newEKSEnv(t, &EKSFace{Interval: 20 * time.Millisecond})
	ctx := context.Background()
	if err := EKSCreateCluster(e.srv.Cloud(), awsface.AWSDefaultAccountID, awsface.AWSDefaultRegion, "c1", ""); err != nil {
		t.Fatal(err)
	}
	e.createNodegroup(t, "ng1", 2, nil)
	ng := e.wait(t, "c1", "ng1", healthy)
	asgName := aws.ToString(ng.Resources.AutoScalingGroups[0].Name)
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
