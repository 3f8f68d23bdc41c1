package infrapool

import (
	"context"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/internal/rollout"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// cloudGroup is a ScaleGroup whose cloud runs its own rollouts, recording
// what the engine asks of it. It stands for an EKS managed node group at
// the level of the engine's decisions; the EKS provider's own tests run
// against the simulated EKS.
type cloudGroup struct {
	group   *scalegroup.Group
	applied []scalegroup.GroupSpec
	deleted [][]string
}

func (c *cloudGroup) Get(context.Context, scalegroup.Ref) (*scalegroup.Group, error) {
	return c.group, nil
}
func (c *cloudGroup) Apply(_ context.Context, _ scalegroup.Ref, spec scalegroup.GroupSpec) (*scalegroup.Group, error) {
	c.applied = append(c.applied, spec)
	g := *c.group
	g.Capacity, g.ModelHash = spec.Capacity, spec.ModelHash
	g.Operation = &scalegroup.Operation{ID: "u-1", Type: scalegroup.OperationUpdate}
	return &g, nil
}
func (c *cloudGroup) DeleteInstances(_ context.Context, _ scalegroup.Ref, ids []string) error {
	c.deleted = append(c.deleted, ids)
	return nil
}
func (c *cloudGroup) Capabilities() scalegroup.Capabilities {
	return scalegroup.Capabilities{CloudRollouts: true}
}
func (c *cloudGroup) Delete(context.Context, scalegroup.Ref) error { return nil }

func cloudRollingEngine(t *testing.T, fx []fixture, desired int32) (*Engine, *pass, *cloudGroup) {
	t.Helper()
	budget := rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(1))}
	e, s := glueScope(fx, desired, budget)
	cg := &cloudGroup{group: s.cloud}
	e.setScaleGroup(cg)
	e.rec, e.applied, e.workers = nopRecorder{}, newPoolMemo[string](), 4
	e.timing.defaults()
	s.cloudRollouts = true
	return e, s, cg
}

// TestCloudRolloutsLeaveDriftToTheCloud: for a cloud that replaces
// out-of-date instances itself, the engine picks no victim for drift or
// excess (the cloud drains and removes them), only those a user marked.
func TestCloudRolloutsLeaveDriftToTheCloud(t *testing.T) {
	fx := []fixture{running("a", 3*time.Hour, "old"), running("b", 2*time.Hour, "old"), running("c", time.Hour, "new")}
	marked := running("d", time.Hour, "new")
	marked.machine = map[string]string{clusterv1.DeleteMachineAnnotation: ""}
	fx = append(fx, marked)

	// The same pool with an engine-driven cloud: drift and the mark are acted on.
	e, s := glueScope(fx, 2, rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(1))})
	res, err := rollout.Plan(e.rolloutInput(s))
	if err != nil {
		t.Fatal(err)
	}
	s.plan = res
	byID := map[string]scalegroup.Instance{}
	for _, in := range s.cloud.Instances {
		byID[in.ID] = in
	}
	if got := victimIDs(e.victims(s, byID)); len(got) < 2 || !slices.Contains(got, "d") {
		t.Fatalf("engine-driven victims %v: want the marked d and stale or excess ones (the case does not test what it says)", got)
	}

	e, s, _ = cloudRollingEngine(t, fx, 2)
	if res, err = rollout.Plan(e.rolloutInput(s)); err != nil {
		t.Fatal(err)
	}
	s.plan = res
	if got := victimIDs(e.victims(s, byID)); !slices.Equal(got, []string{"d"}) {
		t.Fatalf("victims %v, want only the marked instance d: the cloud replaces and scales in itself", got)
	}
}

// TestCloudRolloutsApplyReplicasOneChangeAtATime: the engine gives such a
// cloud the replicas as its capacity (no surge of its own) and the new
// model, and never a second change while the cloud's is in progress.
func TestCloudRolloutsApplyReplicasOneChangeAtATime(t *testing.T) {
	ctx := context.Background()
	fx := []fixture{running("a", 3*time.Hour, "old"), running("b", 2*time.Hour, "old"), running("c", time.Hour, "old")}
	e, s, cg := cloudRollingEngine(t, fx, 3)
	s.cloud.ModelHash = "old"
	res, err := rollout.Plan(e.rolloutInput(s))
	if err != nil {
		t.Fatal(err)
	}
	s.plan, s.input = res, e.rolloutInput(s)
	if err := e.applyGroup(ctx, s); err != nil {
		t.Fatal(err)
	}
	if len(cg.applied) != 1 || cg.applied[0].Capacity != 3 || cg.applied[0].ModelHash != "new" {
		t.Fatalf("applied %+v, want one Apply of capacity 3 (the replicas, no surge) and model new", cg.applied)
	}

	// The cloud's update is in progress: nothing more is sent, even for a
	// new capacity, and the engine looks again soon.
	s.cloud = s.latest
	s.latest, s.replicas, s.requeue = nil, 5, 0
	if err := e.applyGroup(ctx, s); err != nil {
		t.Fatal(err)
	}
	if len(cg.applied) != 1 {
		t.Fatalf("applied %d times while the cloud's update ran, want 1", len(cg.applied))
	}
	if s.requeue <= 0 {
		t.Fatal("no requeue while waiting for the cloud's update")
	}
}
