package preview

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/rollout"
)

var t0 = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)

func TestPreviewInput(t *testing.T) {
	now := t0
	obj := func(name string, age time.Duration) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(now.Add(-age))}
	}
	readySince := func(ago time.Duration) []metav1.Condition {
		return []metav1.Condition{{Type: infrav1.InstanceReadyCondition, Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-ago))}}
	}
	tests := []struct {
		name   string
		reason string
		state  State
		check  func(t *testing.T, in rollout.Input)
	}{
		{
			name:   "replicas default to 1 and minReadySeconds comes from the MachinePool",
			reason: "as the engine reads the owner",
			state: State{
				MachinePool: &clusterv1.MachinePool{Spec: clusterv1.MachinePoolSpec{Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{MinReadySeconds: ptr.To[int32](30)}}}},
				Strategy:    rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(2)), MinReadySeconds: 5, DeletePolicy: rollout.DeletePolicyNewest},
				PoolUID:     "uid-1",
			},
			check: func(t *testing.T, in rollout.Input) {
				if in.Desired != 1 || in.Strategy.MinReadySeconds != 30 || in.Strategy.DeletePolicy != rollout.DeletePolicyNewest || in.Strategy.MaxSurge.IntVal != 2 {
					t.Errorf("input %+v", in)
				}
				if in.RandSeed != Seed("uid-1") || in.Paused || in.ModelHash != CurrentModel || in.Instances == nil {
					t.Errorf("seed %d (want %d), paused %v, model %q, instances %v", in.RandSeed, Seed("uid-1"), in.Paused, in.ModelHash, in.Instances)
				}
			},
		},
		{
			name:   "models, states and readiness from the reported status",
			reason: "without Nodes the object's Ready condition dates readiness",
			state: State{
				MachinePool: &clusterv1.MachinePool{Spec: clusterv1.MachinePoolSpec{Replicas: ptr.To[int32](3)}},
				Now:         now,
				Instances: []Instance{
					{ObjectMeta: obj("p-a", time.Hour), InstanceView: contract.InstanceView{InstanceID: "a", Zone: "z1", State: contract.InstanceRunning, Ready: true, UpToDate: true, Conditions: readySince(time.Minute), Reported: true}},
					{ObjectMeta: obj("p-b", time.Hour), InstanceView: contract.InstanceView{InstanceID: "b", State: contract.InstanceRunning, Ready: true, Reported: true}},
					{ObjectMeta: obj("p-c", time.Minute), InstanceView: contract.InstanceView{InstanceID: "c", State: contract.InstanceBooting, UpToDate: true, Reported: true}},
					{ObjectMeta: obj("p-d", time.Second)},
					{ObjectMeta: obj("p-e", time.Hour), InstanceView: contract.InstanceView{InstanceID: "e", State: contract.InstanceRunning, Ready: false, Conditions: readySince(time.Hour), Reported: true}},
				},
			},
			check: func(t *testing.T, in rollout.Input) {
				got := map[string]rollout.Instance{}
				for _, i := range in.Instances {
					got[i.ID] = i
				}
				a, b, c, d, e := got["a"], got["b"], got["c"], got["p-d"], got["e"]
				if a.State != rollout.StateRunning || a.ModelHash != CurrentModel || a.Zone != "z1" || a.ReadySince == nil ||
					!a.ReadySince.Equal(now.Add(-time.Minute)) || !a.CreatedAt.Equal(now.Add(-time.Hour)) {
					t.Errorf("a: %+v", a)
				}
				if b.ModelHash != StaleModel || b.ReadySince == nil || !b.ReadySince.Equal(now) {
					t.Errorf("b (stale, Ready without a condition: since now): %+v", b)
				}
				if c.State != rollout.StatePending || c.ReadySince != nil {
					t.Errorf("c (booting): %+v", c)
				}
				if d.State != rollout.StatePending || d.ModelHash != CurrentModel {
					t.Errorf("p-d (not reported yet: a new instance on the current model, named by its object): %+v", d)
				}
				if e.ReadySince != nil {
					t.Errorf("e (not Ready, whatever its stale condition says): %+v", e)
				}
			},
		},
		{
			name:   "Nodes date readiness when they are known",
			reason: "the engine reads the Node's Ready condition",
			state: State{
				MachinePool: &clusterv1.MachinePool{},
				Now:         now,
				Nodes: map[string]*corev1.Node{"p://a": {Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
					{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-2 * time.Hour))},
				}}}},
				Instances: []Instance{
					{ObjectMeta: obj("p-a", 3*time.Hour), InstanceView: contract.InstanceView{InstanceID: "a", ProviderID: "p://a", State: contract.InstanceRunning, Ready: false, Reported: true}},
					{ObjectMeta: obj("p-b", 3*time.Hour), InstanceView: contract.InstanceView{InstanceID: "b", ProviderID: "p://b", State: contract.InstanceRunning, Ready: true, Conditions: readySince(time.Hour), Reported: true}},
				},
			},
			check: func(t *testing.T, in rollout.Input) {
				if rs := in.Instances[0].ReadySince; rs == nil || !rs.Equal(now.Add(-2*time.Hour)) {
					t.Errorf("a: ReadySince %v, want its Node's", rs)
				}
				if rs := in.Instances[1].ReadySince; rs != nil {
					t.Errorf("b has no Node: ReadySince %v", rs)
				}
			},
		},
		{
			name:   "Machines of another kind are not matched",
			reason: "the engine matches Machines by their infrastructureRef's kind and name",
			state: State{
				MachinePool:  &clusterv1.MachinePool{},
				InstanceKind: infrav1.LocalMachinePoolMachineKind,
				Machines: []clusterv1.Machine{
					{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{clusterv1.DeleteMachineAnnotation: ""}},
						Spec: clusterv1.MachineSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{Kind: "Other", Name: "p-a"}}},
					{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: ptr.To(metav1.NewTime(now)), Finalizers: []string{"x"}},
						Spec: clusterv1.MachineSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{Kind: infrav1.LocalMachinePoolMachineKind, Name: "p-b"}}},
				},
				Instances: []Instance{
					{ObjectMeta: obj("p-a", time.Hour), InstanceView: contract.InstanceView{InstanceID: "a", State: contract.InstanceRunning, Reported: true}},
					{ObjectMeta: obj("p-b", time.Hour), InstanceView: contract.InstanceView{InstanceID: "b", State: contract.InstanceRunning, Reported: true}},
				},
			},
			check: func(t *testing.T, in rollout.Input) {
				if a := in.Instances[0]; a.MarkedForDeletion || a.State != rollout.StateRunning {
					t.Errorf("a: %+v", a)
				}
				if b := in.Instances[1]; b.State != rollout.StateDeleting {
					t.Errorf("b (its Machine is being deleted): %+v", b)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := Input(tt.state)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, in)
		})
	}
	if _, err := Input(State{}); err == nil {
		t.Error("a state without a MachinePool is accepted")
	}
}

func TestRolloutPaused(t *testing.T) {
	paused := map[string]string{RolloutPausedAnnotation: "true"}
	for _, tt := range []struct {
		name string
		mp   *clusterv1.MachinePool
		pool map[string]string
		want bool
	}{
		{name: "not paused", mp: &clusterv1.MachinePool{}, want: false},
		{name: "on the MachinePool", mp: &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Annotations: paused}}, want: true},
		{name: "on the infra pool", mp: &clusterv1.MachinePool{}, pool: paused, want: true},
		{name: "only \"true\" pauses", mp: &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{RolloutPausedAnnotation: "yes"}}}, want: false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := RolloutPaused(tt.mp, tt.pool); got != tt.want {
				t.Errorf("RolloutPaused = %v, want %v", got, tt.want)
			}
		})
	}
}

// waveString renders waves as "delete a(Stale) +1 | ..." for comparison.
func waveString(waves []Wave) string {
	var parts []string
	for _, w := range waves {
		var p []string
		for _, v := range w.Result.Delete {
			id := v.ID
			if IsNewInstance(id) {
				id = "new"
			}
			p = append(p, fmt.Sprintf("-%s(%s)", id, v.Reason))
		}
		if w.Create > 0 {
			p = append(p, fmt.Sprintf("+%d", w.Create))
		}
		if w.Result.Done {
			p = append(p, "done")
		}
		if len(p) == 0 {
			p = append(p, "wait")
		}
		parts = append(parts, strings.Join(p, " "))
	}
	return strings.Join(parts, " | ")
}

func TestProjectRollout(t *testing.T) {
	ready := func(id string, age time.Duration, model string) rollout.Instance {
		since := t0.Add(-age)
		return rollout.Instance{ID: id, CreatedAt: t0.Add(-age), ModelHash: model, State: rollout.StateRunning, ReadySince: &since}
	}
	surgeOne := rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0))}
	tests := []struct {
		name          string
		reason        string
		in            rollout.Input
		want          string
		wantConverged bool
	}{
		{
			name:   "maxSurge 1, maxUnavailable 0 replaces one at a time, oldest first",
			reason: "the first wave only creates; each later one removes the next stale instance",
			in: rollout.Input{Desired: 3, Strategy: surgeOne, ModelHash: "new", Now: t0,
				Instances: []rollout.Instance{ready("b", 2*time.Hour, "old"), ready("a", 3*time.Hour, "old"), ready("c", time.Hour, "old")}},
			want:          "+1 | -a(Stale) +1 | -b(Stale) +1 | -c(Stale) | done",
			wantConverged: true,
		},
		{
			name:   "scale in removes the excess in one wave",
			reason: "maxUnavailable counts against the new desired replicas",
			in: rollout.Input{Desired: 1, Strategy: surgeOne, ModelHash: "new", Now: t0,
				Instances: []rollout.Instance{ready("a", 3*time.Hour, "new"), ready("b", 2*time.Hour, "new"), ready("c", time.Hour, "new")}},
			want:          "-a(Excess) -b(Excess) | done",
			wantConverged: true,
		},
		{
			name:   "a failed instance is replaced",
			reason: "failed instances go and do not count",
			in: rollout.Input{Desired: 2, Strategy: surgeOne, ModelHash: "new", Now: t0,
				Instances: []rollout.Instance{ready("a", time.Hour, "new"), {ID: "b", State: rollout.StateFailed, ModelHash: "new"}}},
			want:          "-b(Failed) +1 | done",
			wantConverged: true,
		},
		{
			name:   "minReadySeconds is waited for",
			reason: "a wave that only waits for availability is progress, not a stuck pool",
			in: rollout.Input{Desired: 1, Strategy: rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(1)), MinReadySeconds: 60}, ModelHash: "new", Now: t0,
				Instances: []rollout.Instance{ready("a", 10*time.Second, "new")}},
			want:          "wait | done",
			wantConverged: true,
		},
		{
			name:   "the gate keeps stale instances",
			reason: "with SkipModelReconciliation a stale pool has converged",
			in: rollout.Input{Desired: 2, Strategy: surgeOne, ModelHash: "new", Now: t0, SkipModelReconciliation: true,
				Instances: []rollout.Instance{ready("a", time.Hour, "old"), ready("b", time.Hour, "old")}},
			want:          "done",
			wantConverged: true,
		},
		{
			name:   "a paused input is stuck",
			reason: "a wave that changes nothing ends the projection",
			in: rollout.Input{Desired: 2, Strategy: surgeOne, ModelHash: "new", Now: t0, Paused: true,
				Instances: []rollout.Instance{ready("a", time.Hour, "old")}},
			want: "wait",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			waves, converged, err := Project(tt.in, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := waveString(waves); got != tt.want || converged != tt.wantConverged {
				t.Errorf("waves %q converged %v, want %q %v (%s)", got, converged, tt.want, tt.wantConverged, tt.reason)
			}
			if first, _ := rollout.Plan(tt.in); !slices.Equal(first.Delete, waves[0].Result.Delete) || first.TargetCapacity != waves[0].Result.TargetCapacity {
				t.Errorf("the first wave %+v is not the plan %+v", waves[0].Result, first)
			}
		})
	}

	t.Run("bounded", func(t *testing.T) {
		in := rollout.Input{Desired: 3, Strategy: surgeOne, ModelHash: "new", Now: t0,
			Instances: []rollout.Instance{ready("a", 3*time.Hour, "old"), ready("b", 2*time.Hour, "old"), ready("c", time.Hour, "old")}}
		waves, converged, err := Project(in, 2)
		if err != nil || len(waves) != 2 || converged {
			t.Errorf("with maxWaves 2: %d waves, converged %v, err %v", len(waves), converged, err)
		}
	})
	t.Run("invalid input", func(t *testing.T) {
		if _, _, err := Project(rollout.Input{Desired: 1, Strategy: rollout.Strategy{DeletePolicy: "Sideways"}}, 0); err == nil {
			t.Error("an invalid input is projected")
		}
	})
}

func TestPreviewInputManagedReplicas(t *testing.T) {
	managed := map[string]string{clusterv1.ReplicasManagedByAnnotation: "cluster-autoscaler"}
	tests := []struct {
		name        string
		annotations map[string]string
		pool        map[string]string
		want        int32
	}{
		{name: "not managed: spec.replicas", pool: map[string]string{ManagedCapacityAnnotation: "6/4"}, want: 5},
		{name: "managed: the replicas the engine planned for", annotations: managed, pool: map[string]string{ManagedCapacityAnnotation: "6/4"}, want: 4},
		{name: "managed, no record yet: spec.replicas", annotations: managed, want: 5},
		{name: "managed, unreadable record: spec.replicas", annotations: managed, pool: map[string]string{ManagedCapacityAnnotation: "x"}, want: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mp := &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Annotations: tt.annotations}, Spec: clusterv1.MachinePoolSpec{Replicas: ptr.To(int32(5))}}
			in, err := Input(State{MachinePool: mp, PoolAnnotations: tt.pool})
			if err != nil {
				t.Fatal(err)
			}
			if in.Desired != tt.want {
				t.Errorf("Desired %d, want %d", in.Desired, tt.want)
			}
		})
	}
}
