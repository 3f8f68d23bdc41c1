package infrapool

import (
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/rollout"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// previewOf builds, from a glue pass, what the API server would hold
// after the engine reported it: per-instance objects with the status
// instanceReport writes and the conditions setInstanceConditions sets
// (last changed at the reconcile's time), and the pool Machines.
func previewOf(e *Engine, s *pass, withNodes bool) preview.State {
	mp := &clusterv1.MachinePool{Spec: clusterv1.MachinePoolSpec{Replicas: ptr.To(s.replicas)}}
	if s.desired.Strategy.MinReadySeconds != 0 {
		mp.Spec.Template.Spec.MinReadySeconds = ptr.To(s.desired.Strategy.MinReadySeconds)
	}
	ps := preview.State{
		MachinePool:             mp,
		PoolUID:                 s.pool.GetUID(),
		Strategy:                s.desired.Strategy,
		InstanceKind:            infrav1.LocalMachinePoolMachineKind,
		SkipModelReconciliation: e.skip,
		Now:                     s.now,
	}
	if withNodes {
		ps.Nodes = s.nodes
	}
	for _, in := range s.cloud.Instances {
		obj := s.objects[in.ID]
		rep := e.instanceReport(s, in)
		var conds []metav1.Condition
		setInstanceConditions(&conds, s, rep, 1)
		meta := *obj.(*infrav1.LocalMachinePoolMachine).ObjectMeta.DeepCopy()
		meta.CreationTimestamp = metav1.NewTime(in.CreatedAt)
		ps.Instances = append(ps.Instances, preview.Instance{ObjectMeta: meta, InstanceView: contract.InstanceView{
			InstanceID: in.ID, ProviderID: in.ProviderID, Zone: in.Zone, Reported: true,
			State: rep.State, Ready: rep.Ready, UpToDate: rep.LatestModelApplied, Conditions: conds,
		}})
		if m := s.machines[obj.GetName()]; m != nil {
			m := m.DeepCopy()
			m.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: infrav1.LocalMachinePoolMachineKind, Name: obj.GetName()}
			ps.Machines = append(ps.Machines, *m)
		}
	}
	return ps
}

// TestPreviewAgreesWithTheEngine: on the same group, the planner decides the
// same from the API server's objects as from the engine's observation.
func TestPreviewAgreesWithTheEngine(t *testing.T) {
	oneSurge := rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(1))}
	noUnavailable := rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0))}
	with := func(f fixture, change func(*fixture)) fixture { change(&f); return f }
	tests := []struct {
		name     string
		reason   string
		fx       []fixture
		desired  int32
		strategy rollout.Strategy
		skip     bool
		want     []string // the engine's victims, to be sure the case decides something
	}{
		{
			name:    "scale in, Oldest",
			reason:  "ages come from the objects' creation times",
			fx:      []fixture{running("a", 3*time.Hour, "new"), running("b", 2*time.Hour, "new"), running("c", time.Hour, "new")},
			desired: 1, strategy: rollout.Strategy{MaxUnavailable: ptr.To(intstr.FromInt32(1))},
			want: []string{"a", "b"},
		},
		{
			name:    "scale in, Newest",
			reason:  "the delete policy is the pool's",
			fx:      []fixture{running("a", 3*time.Hour, "new"), running("b", 2*time.Hour, "new"), running("c", time.Hour, "new")},
			desired: 1, strategy: rollout.Strategy{MaxUnavailable: ptr.To(intstr.FromInt32(1)), DeletePolicy: rollout.DeletePolicyNewest},
			want: []string{"c", "b"},
		},
		{
			name:   "scale in, Random",
			reason: "the seed is the engine's, from the pool's UID",
			fx: []fixture{running("i-1", time.Hour, "new"), running("i-2", time.Hour, "new"), running("i-3", time.Hour, "new"),
				running("i-4", time.Hour, "new"), running("i-5", time.Hour, "new"), running("i-6", time.Hour, "new")},
			desired: 3, strategy: rollout.Strategy{MaxUnavailable: ptr.To(intstr.FromInt32(3)), DeletePolicy: rollout.DeletePolicyRandom},
		},
		{
			name:    "stale instances wait for the surge with maxUnavailable 0",
			reason:  "the first wave only creates",
			fx:      []fixture{running("a", 3*time.Hour, "old"), running("b", 2*time.Hour, "old"), running("c", time.Hour, "old")},
			desired: 3, strategy: noUnavailable,
		},
		{
			name:   "a stale instance goes once the surge instance is Ready",
			reason: "readiness comes from the reported state and the Nodes",
			fx: []fixture{running("a", 3*time.Hour, "old"), running("b", 2*time.Hour, "old"), running("c", time.Hour, "old"),
				running("d", time.Minute, "new")},
			desired: 3, strategy: noUnavailable,
			want: []string{"a"},
		},
		{
			name:   "a booting instance is not available",
			reason: "Booting and Pending are the planner's Pending",
			fx: []fixture{running("a", 3*time.Hour, "old"), running("b", 2*time.Hour, "old"), running("c", time.Hour, "old"),
				{id: "d", age: time.Minute, state: scalegroup.StateBooting, model: "new"}},
			desired: 3, strategy: noUnavailable,
		},
		{
			name:    "stale instances roll within the budget",
			reason:  "maxUnavailable 1 lets the oldest stale go at once",
			fx:      []fixture{running("a", 3*time.Hour, "old"), running("b", 2*time.Hour, "old"), running("c", time.Hour, "old")},
			desired: 3, strategy: oneSurge,
			want: []string{"a"},
		},
		{
			name:    "delete-machine on the Machine",
			reason:  "the mark is read from the pool Machine",
			fx:      []fixture{running("a", 3*time.Hour, "new"), with(running("b", time.Hour, "new"), func(f *fixture) { f.machine = map[string]string{clusterv1.DeleteMachineAnnotation: ""} })},
			desired: 1, strategy: oneSurge,
			want: []string{"b"},
		},
		{
			name:    "delete-machine on the per-instance object",
			reason:  "and from the object",
			fx:      []fixture{running("a", 3*time.Hour, "new"), with(running("b", time.Hour, "new"), func(f *fixture) { f.objMark = map[string]string{clusterv1.DeleteMachineAnnotation: "yes"} })},
			desired: 1, strategy: oneSurge,
			want: []string{"b"},
		},
		{
			name:   "a started drain",
			reason: "the drain-started annotation makes the instance Deleting",
			fx: []fixture{running("a", 3*time.Hour, "old"),
				with(running("b", 2*time.Hour, "old"), func(f *fixture) {
					f.objMark = map[string]string{preview.DrainStartedAnnotation: t0.Add(-time.Minute).Format(time.RFC3339)}
				}),
				running("c", time.Minute, "new")},
			desired: 2, strategy: rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(1))},
			want: []string{"b"},
		},
		{
			name:    "a deleted object and a deleted Machine",
			reason:  "deletion timestamps make instances Deleting",
			fx:      []fixture{running("a", 3*time.Hour, "new"), with(running("b", 2*time.Hour, "new"), func(f *fixture) { f.objGone = true }), with(running("c", time.Hour, "new"), func(f *fixture) { f.mGone = true })},
			desired: 3, strategy: oneSurge,
			want: []string{"b", "c"},
		},
		{
			name:    "a failed instance",
			reason:  "Failed is reported and always removed",
			fx:      []fixture{running("a", 3*time.Hour, "new"), {id: "b", age: time.Hour, state: scalegroup.StateFailed, model: "new"}},
			desired: 2, strategy: oneSurge,
			want: []string{"b"},
		},
		{
			name:    "SkipMachinePoolModelReconciliation",
			reason:  "the gate reaches the planner: deletePolicy alone decides",
			fx:      []fixture{running("a", 3*time.Hour, "new"), running("b", 2*time.Hour, "old")},
			desired: 1, strategy: oneSurge, skip: true,
			want: []string{"a"},
		},
		{
			name:    "a Node that is not Ready",
			reason:  "a Running instance without a Ready Node is not available and goes first",
			fx:      []fixture{running("a", 3*time.Hour, "new"), with(running("b", time.Hour, "new"), func(f *fixture) { f.ready = false })},
			desired: 1, strategy: rollout.Strategy{},
			want: []string{"b"},
		},
	}
	for _, tt := range tests {
		for _, withNodes := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/nodes=%v", tt.name, withNodes), func(t *testing.T) {
				e, s := glueScope(tt.fx, tt.desired, tt.strategy)
				e.skip = tt.skip
				engine, err := rollout.Plan(e.rolloutInput(s))
				if err != nil {
					t.Fatal(err)
				}
				in, err := preview.Input(previewOf(e, s, withNodes))
				if err != nil {
					t.Fatal(err)
				}
				previewed, err := rollout.Plan(in)
				if err != nil {
					t.Fatal(err)
				}
				if tt.want != nil && !slices.Equal(victimIDs(engine.Delete), tt.want) {
					t.Fatalf("the engine deletes %v, want %v: the case does not test what it says", engine.Delete, tt.want)
				}
				if !slices.Equal(engine.Delete, previewed.Delete) {
					t.Errorf("preview deletes %v, the engine %v (%s)", previewed.Delete, engine.Delete, tt.reason)
				}
				if engine.TargetCapacity != previewed.TargetCapacity || engine.Counts != previewed.Counts || engine.Done != previewed.Done {
					t.Errorf("preview: capacity %d, counts %+v, done %v; engine: capacity %d, counts %+v, done %v (%s)",
						previewed.TargetCapacity, previewed.Counts, previewed.Done, engine.TargetCapacity, engine.Counts, engine.Done, tt.reason)
				}
				if !slices.Equal(engine.Waiting, previewed.Waiting) {
					t.Errorf("preview waits for %v, the engine for %v", previewed.Waiting, engine.Waiting)
				}
			})
		}
	}
}

func victimIDs(vs []rollout.Victim) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.ID)
	}
	return out
}
