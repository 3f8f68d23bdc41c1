package awsface

import (
	"context"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	astypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface/awstest"
)

// TestAWSEC2TerminateInstances: the request CAPA v2.13.0 sends when it
// deletes a pool instance's AWSMachine (EC2 TerminateInstances with one
// InstanceId of an Auto Scaling group) shuts the instance down, and the
// group, its desired capacity unchanged, replaces it; an unknown or
// malformed instance ID fails the request.
func TestAWSEC2TerminateInstances(t *testing.T) {
	e := newAWSEnv(t, core.Options{})
	ctx := context.Background()
	lt := e.template(t, "term", "v1.31.2")
	e.createGroup(t, "term", lt, "$Latest", 0, 4, 2)
	g := e.waitGroup(t, "term", "booted", inService(2))
	victim := aws.ToString(g.Instances[0].InstanceId)

	out, err := e.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{victim}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.TerminatingInstances) != 1 {
		t.Fatalf("%d state changes, want 1", len(out.TerminatingInstances))
	}
	c := out.TerminatingInstances[0]
	if aws.ToString(c.InstanceId) != victim || c.PreviousState.Name != ec2types.InstanceStateNameRunning || c.CurrentState.Name != ec2types.InstanceStateNameShuttingDown {
		t.Errorf("state change %s %s -> %s, want %s running -> shutting-down", aws.ToString(c.InstanceId), c.PreviousState.Name, c.CurrentState.Name, victim)
	}
	g = e.waitGroup(t, "term", "replaced the terminated instance", func(g astypes.AutoScalingGroup) bool {
		ids := []string{}
		for _, in := range g.Instances {
			ids = append(ids, aws.ToString(in.InstanceId))
		}
		return inService(2)(g) && !slices.Contains(ids, victim)
	})
	if aws.ToInt32(g.DesiredCapacity) != 2 {
		t.Errorf("desired capacity %d after the termination, want 2 (unchanged)", aws.ToInt32(g.DesiredCapacity))
	}

	_, err = e.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{"i-0123456789abcdef0"}})
	awstest.APIError(t, err, "InvalidInstanceID.NotFound")
	_, err = e.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{"not-an-instance"}})
	awstest.APIError(t, err, "InvalidInstanceID.Malformed")
}
