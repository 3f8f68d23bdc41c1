package eksface

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/mpool-dev/mpool/sim/core"
)

// Node auto repair of the EKS face, as EKS's for managed node groups
// (https://docs.aws.amazon.com/eks/latest/userguide/node-repair.html):
//
//   - nodeRepairConfig (CreateNodegroup, UpdateNodegroupConfig: update
//     parameters NodeRepairEnabled and NodeRepairConfig; DescribeNodegroup)
//     is kept as sent: enabled (off by default), maxUnhealthyNodeThreshold
//     Count or Percentage, maxParallelNodesRepaired Count or Percentage
//     (one of each pair, counts at least 1, percentages 1 to 100), and
//     nodeRepairConfigOverrides (kept, not acted on).
//   - With repair enabled, a node whose Ready condition is not True for
//     EKSFace.NodeRepairWait (EKS's 30 minutes for Ready by default) is
//     replaced: its instance terminated (its Node deleted), and the Auto
//     Scaling group launches another, the desired size unchanged. A node is
//     not Ready from the moment its instance has the core fault
//     KubeletStopped or NodeNotReady (core.Instance.FaultSince): the face
//     reads the fault, as EKS's node monitoring agent would see it, rather
//     than the Node (its node groups need no workload cluster).
//   - Repairs stop while more nodes are unhealthy than the threshold; with
//     none set, EKS's default: a node group of more than five nodes with
//     more than 20% of them unhealthy is not repaired. At most the parallel
//     limit is repaired per pass of the face's loop (EKSFace.Interval;
//     unlimited when none is set).
//   - The face's loop runs while a node group has repair enabled.

// EKSDefaultNodeRepairWait is how long EKS waits before it repairs a node
// whose Ready condition is not True.
const EKSDefaultNodeRepairWait = 30 * time.Minute

// Update parameter types of nodeRepairConfig.
const (
	eksParamNodeRepairEnabled = "NodeRepairEnabled"
	eksParamNodeRepairConfig  = "NodeRepairConfig"
)

// eksRepairConfig is a node group's nodeRepairConfig.
type eksRepairConfig struct {
	Enabled                             *bool           `json:"enabled,omitempty"`
	MaxUnhealthyNodeThresholdCount      *int32          `json:"maxUnhealthyNodeThresholdCount,omitempty"`
	MaxUnhealthyNodeThresholdPercentage *int32          `json:"maxUnhealthyNodeThresholdPercentage,omitempty"`
	MaxParallelNodesRepairedCount       *int32          `json:"maxParallelNodesRepairedCount,omitempty"`
	MaxParallelNodesRepairedPercentage  *int32          `json:"maxParallelNodesRepairedPercentage,omitempty"`
	NodeRepairConfigOverrides           json.RawMessage `json:"nodeRepairConfigOverrides,omitempty"`
}

func (c *eksRepairConfig) enabled() bool { return c != nil && c.Enabled != nil && *c.Enabled }

// validRepair checks a nodeRepairConfig as EKS does.
func validRepair(c *eksRepairConfig) error {
	if c == nil {
		return nil
	}
	for _, p := range []struct {
		count, pct *int32
		name       string
	}{
		{c.MaxUnhealthyNodeThresholdCount, c.MaxUnhealthyNodeThresholdPercentage, "maxUnhealthyNodeThreshold"},
		{c.MaxParallelNodesRepairedCount, c.MaxParallelNodesRepairedPercentage, "maxParallelNodesRepaired"},
	} {
		switch {
		case p.count != nil && p.pct != nil:
			return eksInvalid("nodeRepairConfig: only one of %sCount and %sPercentage may be set", p.name, p.name)
		case p.count != nil && *p.count < 1:
			return eksInvalid("nodeRepairConfig.%sCount must be at least 1", p.name)
		case p.pct != nil && (*p.pct < 1 || *p.pct > 100):
			return eksInvalid("nodeRepairConfig.%sPercentage must be between 1 and 100", p.name)
		}
	}
	return nil
}

// repairParams are the update parameters of a nodeRepairConfig change.
func repairParams(c *eksRepairConfig) []eksUpdateParam {
	b, _ := json.Marshal(c)
	return []eksUpdateParam{
		{Type: eksParamNodeRepairEnabled, Value: strconv.FormatBool(c.enabled())},
		{Type: eksParamNodeRepairConfig, Value: string(b)},
	}
}

func (f *EKSFace) nodeRepairWait() time.Duration {
	return core.OrDefault(f.NodeRepairWait, EKSDefaultNodeRepairWait)
}

// notReady reports whether in's node is not Ready, and since when.
func notReady(in core.Instance) (time.Time, bool) {
	if in.State != core.StateRunning || in.Fault != core.FaultKubeletStopped && in.Fault != core.FaultNodeNotReady {
		return time.Time{}, false
	}
	return in.FaultSince, true
}

// repairNodes replaces n's nodes that have not been Ready for the repair
// wait, within its thresholds (see above).
func (f *EKSFace) repairNodes(env core.FaceEnv, n *eksNodegroup, now time.Time) {
	if !n.Repair.enabled() {
		return
	}
	sc := asgScope(env, n)
	g, err := sc.GetGroup(n.ASG)
	if err != nil || g.Operation != nil && g.Operation.Type == core.OperationDelete {
		return
	}
	live, unhealthy := g.Live(), 0
	var due []core.Instance
	for _, in := range live {
		if since, bad := notReady(in); bad {
			unhealthy++
			if !now.Before(since.Add(f.nodeRepairWait())) {
				due = append(due, in)
			}
		}
	}
	if len(due) == 0 || !n.Repair.withinThreshold(len(live), unhealthy) {
		return
	}
	due = due[:min(len(due), n.Repair.parallel(unhealthy))]
	ids := make([]string, len(due))
	for i, in := range due {
		ids[i] = in.ID
	}
	capacity := g.Capacity
	if _, err := sc.DeleteInstances(n.ASG, ids); err != nil {
		return
	}
	_, _ = sc.SetCapacity(n.ASG, capacity)
	env.Log.V(1).Info("EKS repaired unhealthy nodes", "nodegroup", n.Name, "instances", ids)
	cs := f.client(env, n)
	for _, in := range due {
		deleteNode(env, cs, in.NodeName)
	}
}

// withinThreshold reports whether repairs go on with unhealthy of live
// nodes unhealthy.
func (c *eksRepairConfig) withinThreshold(live, unhealthy int) bool {
	switch {
	case c.MaxUnhealthyNodeThresholdCount != nil:
		return unhealthy <= int(*c.MaxUnhealthyNodeThresholdCount)
	case c.MaxUnhealthyNodeThresholdPercentage != nil:
		return unhealthy*100 <= int(*c.MaxUnhealthyNodeThresholdPercentage)*live
	}
	return live <= 5 || unhealthy*100 <= 20*live
}

// parallel is how many of unhealthy nodes one pass repairs.
func (c *eksRepairConfig) parallel(unhealthy int) int {
	switch {
	case c.MaxParallelNodesRepairedCount != nil:
		return int(*c.MaxParallelNodesRepairedCount)
	case c.MaxParallelNodesRepairedPercentage != nil:
		return max(1, unhealthy*int(*c.MaxParallelNodesRepairedPercentage)/100)
	}
	return unhealthy
}

// deleteNode deletes a terminated instance's Node, if the face has a
// client of its cluster.
func deleteNode(env core.FaceEnv, cs kubernetes.Interface, name string) {
	if cs == nil || name == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), eksCallTimeout)
	defer cancel()
	if err := cs.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		env.Log.V(1).Info("Deleting a terminated node's Node failed", "node", name, "error", err.Error())
	}
}

// eksRepairing reports whether a node group needs the loop for its repairs.
func eksRepairing(n eksNodegroup) bool {
	return n.Repair.enabled() && slices.Contains([]string{EKSStatusActive, EKSStatusDegraded}, n.Status)
}
