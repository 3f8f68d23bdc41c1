package eksface

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/sim/face/awsface/awstest"
)

// waitInstances polls the node group's instances until ok accepts their
// IDs, for at most 10s.
func (e *eksTestEnv) waitInstances(t *testing.T, name, what string, ok func([]string) bool) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ids := slices.Sorted(maps.Keys(e.instances(t, name)))
		if ok(ids) {
			return ids
		}
		if time.Now().After(deadline) {
			t.Fatalf("node group %s never %s: instances %v", name, what, ids)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestEKSNodeRepair: nodeRepairConfig is validated, kept and reported;
// with repair on, a node not Ready for the repair wait is replaced, the
// desired size unchanged; with it off, or beyond the unhealthy threshold,
// nothing is.
func TestEKSNodeRepair(t *testing.T) {
	e := newEKSEnv(t, &EKSFace{Interval: 20 * time.Millisecond, NodeRepairWait: 300 * time.Millisecond})
	ctx := context.Background()
	if err := EKSCreateCluster(e.srv.Cloud(), awsface.AWSDefaultAccountID, awsface.AWSDefaultRegion, "c1", ""); err != nil {
		t.Fatal(err)
	}
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
