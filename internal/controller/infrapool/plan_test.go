package infrapool

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/rollout"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

var t0 = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)

// fixture describes one instance of a glue test.
type fixture struct {
	id      string
	age     time.Duration
	state   scalegroup.InstanceState
	model   string
	ready   bool
	objMark map[string]string // annotations on the per-instance object
	objGone bool              // per-instance object being deleted
	machine map[string]string // annotations on its Machine; nil: no Machine
	mGone   bool              // Machine being deleted
	held    bool              // held by the cloud before its boot (scalegroup.Instance.Held)
}

func glueScope(fx []fixture, desired int32, strategy rollout.Strategy) (*Engine, *pass) {
	e := &Engine{tracker: newInstanceTimes(), held: newInstanceTimes(), clock: clocktesting.NewFakePassiveClock(t0)}
	pool := &infrav1.LocalMachinePool{ObjectMeta: metav1.ObjectMeta{Name: "pool", Namespace: "ns", UID: "uid-1"}}
	s := &pass{
		pool: pool, now: t0, replicas: desired, modelHash: "new",
		desired:    contract.Desired{Strategy: strategy},
		cloud:      &scalegroup.Group{Name: "g", Capacity: int32(len(fx))},
		objects:    map[string]contract.InstanceObject{},
		machines:   map[string]*clusterv1.Machine{},
		nodes:      map[string]*corev1.Node{},
		nodesKnown: true, bootstrap: true,
		removing:   map[string]time.Time{},
		deletedNow: map[string]bool{},
	}
	for _, f := range fx {
		pid := "local:///g/" + f.id
		s.cloud.Instances = append(s.cloud.Instances, scalegroup.Instance{
			ID: f.id, ProviderID: pid, State: f.state, ModelHash: f.model, CreatedAt: t0.Add(-f.age), Held: f.held,
		})
		obj := &infrav1.LocalMachinePoolMachine{ObjectMeta: metav1.ObjectMeta{Name: "pool-" + f.id, Namespace: "ns", Annotations: f.objMark}}
		if f.objGone {
			obj.DeletionTimestamp = ptr.To(metav1.NewTime(t0))
		}
		s.objects[f.id] = obj
		if f.machine != nil || f.mGone {
			m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m-" + f.id, Annotations: f.machine}}
			if f.mGone {
				m.DeletionTimestamp = ptr.To(metav1.NewTime(t0))
			}
			s.machines[obj.Name] = m
		}
		if f.ready {
			s.nodes[pid] = &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: "node-" + f.id},
				Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{
					Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(-f.age / 2)),
				}}},
			}
		}
	}
	return e, s
}

func running(id string, age time.Duration, model string) fixture {
	return fixture{id: id, age: age, state: scalegroup.StateRunning, model: model, ready: true}
}

func TestVictimOrderingGlue(t *testing.T) {
	oneSurge := rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(1))}
	for _, tc := range []struct {
		name     string
		reason   string
		fx       []fixture
		desired  int32
		strategy rollout.Strategy
		skip     bool
		want     []string
		capacity int32
	}{
		{
			name:    "scale in follows deletePolicy Oldest",
			reason:  "the default policy removes the oldest instance",
			fx:      []fixture{running("a", 3*time.Hour, "new"), running("b", 2*time.Hour, "new"), running("c", time.Hour, "new")},
			desired: 2, strategy: rollout.Strategy{MaxUnavailable: ptr.To(intstr.FromInt32(1))},
			want: []string{"a"}, capacity: 2,
		},
		{
			name:    "scale in follows deletePolicy Newest",
			reason:  "the pool's deletePolicy reaches the planner",
			fx:      []fixture{running("a", 3*time.Hour, "new"), running("b", 2*time.Hour, "new"), running("c", time.Hour, "new")},
			desired: 2, strategy: rollout.Strategy{MaxUnavailable: ptr.To(intstr.FromInt32(1)), DeletePolicy: rollout.DeletePolicyNewest},
			want: []string{"c"}, capacity: 2,
		},
		{
			name:   "delete-machine on the Machine wins over the policy",
			reason: "the core copies Cluster API's mark onto the Machine; it must be honoured",
			fx: []fixture{running("a", 3*time.Hour, "new"), running("b", 2*time.Hour, "new"),
				func() fixture {
					f := running("c", time.Hour, "new")
					f.machine = map[string]string{clusterv1.DeleteMachineAnnotation: ""}
					return f
				}()},
			desired: 2, strategy: rollout.Strategy{MaxUnavailable: ptr.To(intstr.FromInt32(1))},
			want: []string{"c"}, capacity: 2,
		},
		{
			name:   "delete-machine on the per-instance object wins too",
			reason: "users may mark the infra machine directly",
			fx: []fixture{running("a", 3*time.Hour, "new"),
				func() fixture {
					f := running("b", 2*time.Hour, "new")
					f.objMark = map[string]string{clusterv1.DeleteMachineAnnotation: "yes"}
					return f
				}()},
			desired: 1, strategy: rollout.Strategy{MaxUnavailable: ptr.To(intstr.FromInt32(1))},
			want: []string{"b"}, capacity: 1,
		},
		{
			name:   "a deleted per-instance object is removed at once and replaced",
			reason: "deleting the infra machine drains and deletes exactly that instance; the group refills",
			fx: []fixture{running("a", 3*time.Hour, "new"),
				func() fixture { f := running("b", 2*time.Hour, "new"); f.objGone = true; return f }()},
			desired: 2, strategy: oneSurge,
			want: []string{"b"}, capacity: 2,
		},
		{
			name:   "a deleted Machine is removed at once",
			reason: "deleting the pool Machine is the same intent",
			fx: []fixture{running("a", 3*time.Hour, "new"),
				func() fixture { f := running("b", 2*time.Hour, "new"); f.mGone = true; return f }()},
			desired: 2, strategy: oneSurge,
			want: []string{"b"}, capacity: 2,
		},
		{
			name:   "a started drain resumes after a restart",
			reason: "the drain-started annotation makes the instance Deleting, listed again until gone",
			fx: []fixture{running("a", 3*time.Hour, "old"),
				func() fixture {
					f := running("b", 2*time.Hour, "old")
					f.objMark = map[string]string{preview.DrainStartedAnnotation: t0.Add(-time.Minute).Format(time.RFC3339)}
					return f
				}(),
				running("c", time.Minute, "new")},
			desired: 2, strategy: rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(1))},
			want: []string{"b"}, capacity: 3,
		},
		{
			name:   "failed instances go first and do not count",
			reason: "the cloud gave up on them",
			fx: []fixture{running("a", 3*time.Hour, "new"),
				{id: "b", age: time.Hour, state: scalegroup.StateFailed, model: "new"}},
			desired: 2, strategy: oneSurge,
			want: []string{"b"}, capacity: 2,
		},
		{
			name:    "stale instances roll within the budget",
			reason:  "with maxUnavailable 1 one stale instance goes while a replacement surges",
			fx:      []fixture{running("a", 3*time.Hour, "old"), running("b", 2*time.Hour, "old"), running("c", time.Hour, "old")},
			desired: 3, strategy: oneSurge,
			want: []string{"a"}, capacity: 4,
		},
		{
			name:    "stale instances stay with SkipMachinePoolModelReconciliation",
			reason:  "the gate stops replacement",
			fx:      []fixture{running("a", 3*time.Hour, "old"), running("b", 2*time.Hour, "old")},
			desired: 2, strategy: oneSurge, skip: true,
			want: nil, capacity: 2,
		},
		{
			name:    "with the gate scale-in ignores staleness",
			reason:  "deletePolicy and the budgets alone decide: the oldest goes even though it is up to date",
			fx:      []fixture{running("a", 3*time.Hour, "new"), running("b", 2*time.Hour, "old")},
			desired: 1, strategy: oneSurge, skip: true,
			want: []string{"a"}, capacity: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, s := glueScope(tc.fx, tc.desired, tc.strategy)
			e.skip = tc.skip
			in := e.rolloutInput(s)
			res, err := rollout.Plan(in)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range res.Delete {
				got = append(got, v.ID)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("victims %v, want %v (%s)", got, tc.want, tc.reason)
			}
			// Once the victims are deleted, the cloud must only add instances.
			deleted := map[string]bool{}
			for _, id := range got {
				deleted[id] = true
			}
			if c := capacity(res, in, s.cloud.Instances, deleted); c != tc.capacity {
				t.Errorf("capacity %d, want %d", c, tc.capacity)
			}
		})
	}
}

func TestCapacityNeverLetsTheCloudPickVictims(t *testing.T) {
	for _, tc := range []struct {
		name    string
		reason  string
		fx      []fixture
		deleted map[string]bool
		want    int32
	}{
		{
			name:   "victims still draining keep their place",
			reason: "the drain of b is not finished: lowering the capacity would make the cloud delete someone",
			fx: []fixture{running("a", 3*time.Hour, "old"), running("b", 2*time.Hour, "old"), running("c", time.Hour, "new"),
				running("d", time.Hour, "new")},
			deleted: map[string]bool{},
			want:    4,
		},
		{
			name:    "deleted victims leave",
			reason:  "DeleteInstances already lowered the cloud's capacity",
			fx:      []fixture{running("a", 3*time.Hour, "old"), running("b", 2*time.Hour, "old"), running("c", time.Hour, "new"), running("d", time.Hour, "new")},
			deleted: map[string]bool{"a": true, "b": true},
			want:    2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, s := glueScope(tc.fx, 2, rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(2))})
			in := e.rolloutInput(s)
			res, err := rollout.Plan(in)
			if err != nil {
				t.Fatal(err)
			}
			got := capacity(res, in, s.cloud.Instances, tc.deleted)
			if got != tc.want {
				t.Errorf("capacity %d, want %d (%s)", got, tc.want, tc.reason)
			}
			live := int32(0)
			for _, in := range s.cloud.Instances {
				if !tc.deleted[in.ID] {
					live++
				}
			}
			if got < live {
				t.Errorf("capacity %d below the %d instances the cloud keeps: it would pick victims", got, live)
			}
		})
	}
}

func TestUnreadableNodesPauseThePlan(t *testing.T) {
	e, s := glueScope([]fixture{running("a", time.Hour, "old"), running("b", time.Hour, "old")}, 2, rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(1))})
	s.nodes, s.nodesKnown = nil, false
	in := e.rolloutInput(s)
	if !in.Paused {
		t.Fatal("the plan must be paused when no Node can be read: every instance would look unavailable and free to delete")
	}
	res, err := rollout.Plan(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Delete) != 0 || res.TargetCapacity != 2 {
		t.Errorf("paused plan acts: delete %v, capacity %d", res.Delete, res.TargetCapacity)
	}
}

func TestRolloutPauseAnnotation(t *testing.T) {
	e, s := glueScope([]fixture{running("a", time.Hour, "old")}, 1, rollout.Strategy{})
	s.paused = true
	if !e.rolloutInput(s).Paused {
		t.Error("the mpool.dev/rollout-paused annotation does not reach the planner")
	}
}

func TestRemovalStartFromMemoryBeforeTheCacheCatchesUp(t *testing.T) {
	e, s := glueScope([]fixture{running("a", time.Hour, "new"), running("b", time.Hour, "new")}, 2, rollout.Strategy{})
	e.tracker.start(s.pool.GetUID(), "a", t0)
	in := e.rolloutInput(s)
	if in.Instances[0].State != rollout.StateDeleting {
		t.Errorf("instance a is %s; a victim whose annotation the cache has not shown yet must stay Deleting", in.Instances[0].State)
	}
}

// TestNoBootstrapDataPausesThePlan: the model hash covers the bootstrap
// data, so while it is missing (its Secret re-rendered or deleted) every
// instance would look stale; nothing may be deleted for that.
func TestNoBootstrapDataPausesThePlan(t *testing.T) {
	budget := rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(0)), MaxUnavailable: ptr.To(intstr.FromInt32(1))}
	fx := []fixture{running("a", time.Hour, "old"), running("b", time.Hour, "old")}
	for _, tc := range []struct {
		bootstrap bool
		want      int
	}{{bootstrap: false, want: 0}, {bootstrap: true, want: 1}} {
		e, s := glueScope(fx, 2, budget)
		s.bootstrap = tc.bootstrap
		res, err := rollout.Plan(e.rolloutInput(s))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Delete) != tc.want {
			t.Errorf("bootstrap data available=%v: %d victims, want %d", tc.bootstrap, len(res.Delete), tc.want)
		}
	}
}
