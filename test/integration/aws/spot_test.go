package aws

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// spotInstances returns the pool's running Spot and On-Demand instances as
// EC2 reports them.
func (f *fixture) spotInstances() (spot, onDemand []string) {
	f.T.Helper()
	out, err := f.ec2Client().DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{
		Filters: []ec2types.Filter{{Name: awssdk.String("tag:aws:autoscaling:groupName"), Values: []string{f.asg()}},
			{Name: awssdk.String("instance-state-name"), Values: []string{"pending", "running"}}},
	})
	if err != nil {
		f.T.Fatalf("DescribeInstances: %v", err)
	}
	for _, r := range out.Reservations {
		for _, in := range r.Instances {
			if in.InstanceLifecycle == ec2types.InstanceLifecycleTypeSpot {
				spot = append(spot, awssdk.ToString(in.InstanceId))
			} else {
				onDemand = append(onDemand, awssdk.ToString(in.InstanceId))
			}
		}
	}
	return spot, onDemand
}

// readyPoolNodes counts the Ready Nodes of the group's instances that are
// not terminating.
func (f *fixture) readyPoolNodes() int {
	f.T.Helper()
	live := map[string]bool{}
	if g := f.Group(); g != nil {
		for _, in := range g.Instances {
			if in.State != core.StateDeleting {
				live[in.ProviderID] = true
			}
		}
	}
	list, err := f.CS.CoreV1().Nodes().List(f.Ctx, metav1.ListOptions{})
	if err != nil {
		f.T.Fatal(err)
	}
	n := 0
	for i := range list.Items {
		if node := &list.Items[i]; live[node.Spec.ProviderID] && testenv.NodeReady(node) {
			n++
		}
	}
	return n
}

// TestSpotInterruptionCapacityRebalance: a pool with a mixed instances
// policy (On-Demand base 1, 0% above it, Spot) and capacity rebalance runs
// one On-Demand and one Spot instance; a Spot interruption makes the ASG
// launch a replacement first and terminate the interrupted instance once
// the replacement is in service: in every state observed the pool keeps
// desired − maxUnavailable Ready Nodes, the interrupted instance's Node,
// Machine and AWSMachinePoolMachine go, and the pool converges at its
// desired replicas with the replacement.
func TestSpotInterruptionCapacityRebalance(t *testing.T) {
	f, _ := start(t, 500*time.Millisecond)
	f.ApplySeed(itest.SetField("AWSMachinePool", true, "spec", "capacityRebalance"), itest.SetField("AWSMachinePool", map[string]any{
		"instancesDistribution": map[string]any{
			"onDemandBaseCapacity": int64(1), "onDemandPercentageAboveBaseCapacity": int64(0), "spotAllocationStrategy": "lowest-price",
		},
		"overrides": []any{map[string]any{"instanceType": "m5.large"}, map[string]any{"instanceType": "c5.large"}},
	}, "spec", "mixedInstancesPolicy"))
	const desired = 2
	f.waitConverged(desired, seedVersion)
	spot, onDemand := f.spotInstances()
	if len(spot) != 1 || len(onDemand) != 1 {
		t.Fatalf("Spot %v, On-Demand %v: want one of each (On-Demand base 1, 0%% above)", spot, onDemand)
	}
	victim := spot[0]
	var victimNode, victimProviderID string
	for _, n := range f.PoolNodes() {
		if n.Spec.ProviderID != "" && n.Spec.ProviderID[len(n.Spec.ProviderID)-len(victim):] == victim {
			victimNode, victimProviderID = n.Name, n.Spec.ProviderID
		}
	}
	if victimNode == "" {
		t.Fatalf("no Node for Spot instance %s", victim)
	}
	// The seed's refreshPreferences leave AWS's minHealthyPercentage 90:
	// maxUnavailable 0 of 2.
	floor := desired

	t.Logf("interrupting Spot instance %s", victim)
	if err := awsface.AWSInterruptSpot(f.Cloud.Cloud(), awsface.AWSDefaultAccountID, awsface.AWSDefaultRegion, victim); err != nil {
		t.Fatal(err)
	}
	sawAbove := false
	testenv.Eventually(t, converge, func() error {
		if n := f.readyPoolNodes(); n < floor {
			t.Fatalf("%d Ready Nodes during the interruption, below desired − maxUnavailable = %d", n, floor)
		}
		if len(f.InstanceIDs()) > desired {
			sawAbove = true
		}
		if slices.Contains(f.InstanceIDs(), victim) {
			return fmt.Errorf("the interrupted instance %s is still in service", victim)
		}
		if err := f.Converged(desired, seedVersion); err != nil {
			return err
		}
		if err := env.Client.Get(f.Ctx, client.ObjectKey{Name: victimNode}, &corev1.Node{}); err == nil {
			return fmt.Errorf("the interrupted instance's Node %s is still there", victimNode)
		}
		machines := &infrav1.AWSMachinePoolMachineList{}
		if err := env.Client.List(f.Ctx, machines, client.InNamespace(f.NS)); err != nil {
			return err
		}
		for _, m := range machines.Items {
			if m.Spec.InstanceID == victim {
				return fmt.Errorf("AWSMachinePoolMachine %s of the interrupted instance is still there", m.Name)
			}
		}
		cm := &clusterv1.MachineList{}
		if err := env.Client.List(f.Ctx, cm, client.InNamespace(f.NS)); err != nil {
			return err
		}
		for _, m := range cm.Items {
			if m.Spec.ProviderID == victimProviderID {
				return fmt.Errorf("Machine %s of the interrupted instance is still there", m.Name)
			}
		}
		return nil
	})
	if !sawAbove {
		t.Errorf("the group never ran above its desired capacity: the replacement did not launch first")
	}
	spot, onDemand = f.spotInstances()
	if len(spot) != 1 || len(onDemand) != 1 || spot[0] == victim {
		t.Errorf("after the interruption: Spot %v, On-Demand %v", spot, onDemand)
	}
}
