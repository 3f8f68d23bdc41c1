package infrapool

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mpool-dev/mpool/internal/events"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/mpool-dev/mpool/api/core/v1beta1"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/rollout"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

func TestParseManagedCapacity(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want preview.ManagedCapacity
		ok   bool
	}{
		{name: "capacity and replicas", in: "5/4", want: preview.ManagedCapacity{Capacity: 5, Replicas: 4}, ok: true},
		{name: "zero", in: "0/0", ok: true},
		{name: "absent", in: ""},
		{name: "no separator", in: "5"},
		{name: "not numbers", in: "a/b"},
		{name: "negative", in: "-1/2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := preview.ParseManagedCapacity(tc.in)
			if ok != tc.ok || got != tc.want {
				t.Fatalf("preview.ParseManagedCapacity(%q) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
			}
			if ok && got.String() != tc.in {
				t.Fatalf("String() = %q, want %q", got.String(), tc.in)
			}
		})
	}
}

func TestExternalReplicas(t *testing.T) {
	for _, tc := range []struct {
		name       string
		reason     string
		managedBy  *string // nil: no annotation
		capacity   int32   // the cloud's; -1: no group
		annotation string  // preview.ManagedCapacityAnnotation on the pool
		memory     *preview.ManagedCapacity
		want       int32
	}{
		{
			name: "without the annotation spec.replicas rules", managedBy: nil, capacity: 7, want: 3,
			reason: "the MachinePool manages its replicas",
		},
		{
			name: "a group not created yet starts from spec.replicas", managedBy: ptr.To("ca"), capacity: -1, want: 3,
			reason: "nothing has scaled a group that does not exist",
		},
		{
			name: "no record: the group's capacity", managedBy: ptr.To("ca"), capacity: 7, want: 7,
			reason: "the external actor's capacity is the replicas",
		},
		{
			name: "an empty value still counts", managedBy: ptr.To(""), capacity: 7, want: 7,
			reason: "the core MachinePool controller tests the annotation's presence",
		},
		{
			name: "the engine's own surge is not the actor's", managedBy: ptr.To("ca"), capacity: 5, annotation: "5/4", want: 4,
			reason: "the engine left the group at 5 (one surge) planning for 4: it must not take 5 as the replicas",
		},
		{
			name: "a capacity the engine did not leave is the actor's", managedBy: ptr.To("ca"), capacity: 6, annotation: "5/4", want: 6,
			reason: "the autoscaler changed the capacity since",
		},
		{
			name: "memory wins over a lagging cache", managedBy: ptr.To("ca"), capacity: 4, annotation: "5/4",
			memory: &preview.ManagedCapacity{Capacity: 4, Replicas: 3}, want: 3,
			reason: "this process recorded 4/3 after the annotation the cache still shows",
		},
		{
			name: "a malformed record is ignored", managedBy: ptr.To("ca"), capacity: 6, annotation: "x", want: 6,
			reason: "nothing is known about the engine's own changes",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, s := glueScope(nil, 3, rollout.Strategy{})
			e.managed = newPoolMemo[preview.ManagedCapacity]()
			s.owner = &clusterv1.MachinePool{Spec: clusterv1.MachinePoolSpec{Replicas: ptr.To[int32](3)}}
			if tc.managedBy != nil {
				s.owner.Annotations = map[string]string{clusterv1.ReplicasManagedByAnnotation: *tc.managedBy}
			}
			if tc.capacity < 0 {
				s.cloud = nil
			} else {
				s.cloud.Capacity = tc.capacity
			}
			if tc.annotation != "" {
				s.pool.SetAnnotations(map[string]string{preview.ManagedCapacityAnnotation: tc.annotation})
			}
			if tc.memory != nil {
				e.managed.set(s.pool.GetUID(), *tc.memory)
			}
			e.externalReplicas(s)
			if s.replicas != tc.want {
				t.Errorf("replicas %d, want %d (%s)", s.replicas, tc.want, tc.reason)
			}
			if managed := tc.managedBy != nil && tc.capacity >= 0; managed != (s.managedBy != "") {
				t.Errorf("managedBy %q, want managed=%v", s.managedBy, managed)
			}
		})
	}
}

func TestRecordManagedCapacity(t *testing.T) {
	for _, tc := range []struct {
		name    string
		reason  string
		deleted map[string]bool
		latest  *scalegroup.Group
		want    string
	}{
		{
			name: "nothing changed", want: "3/3",
			reason: "the group keeps the capacity the engine found",
		},
		{
			name: "deleted victims lowered the capacity", deleted: map[string]bool{"a": true}, want: "2/3",
			reason: "DeleteInstances lowers the capacity by one per instance",
		},
		{
			name: "an applied capacity is recorded", deleted: map[string]bool{"a": true}, latest: &scalegroup.Group{Capacity: 4}, want: "4/3",
			reason: "Apply's answer is the newest capacity",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, s := glueScope([]fixture{running("a", time.Hour, "new"), running("b", time.Hour, "new"), running("c", time.Hour, "new")}, 3, rollout.Strategy{})
			e.managed = newPoolMemo[preview.ManagedCapacity]()
			s.managedBy = "ca"
			if tc.deleted != nil {
				s.deletedNow = tc.deleted
			}
			s.latest = tc.latest
			e.recordManagedCapacity(s)
			if got := s.pool.GetAnnotations()[preview.ManagedCapacityAnnotation]; got != tc.want {
				t.Errorf("recorded %q, want %q (%s)", got, tc.want, tc.reason)
			}
			if rec, ok := e.managed.get(s.pool.GetUID()); !ok || rec.String() != tc.want {
				t.Errorf("remembered %+v, want %q", rec, tc.want)
			}
		})
	}
}

func TestJoinTimeoutReplacesInstancesWithoutANode(t *testing.T) {
	notJoined := func(id string, age time.Duration, state scalegroup.InstanceState) fixture {
		return fixture{id: id, age: age, state: state, model: "new"}
	}
	oneSurge := rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(1))}
	for _, tc := range []struct {
		name       string
		reason     string
		fx         []fixture
		timeout    time.Duration
		nodesKnown bool
		victims    []string
	}{
		{
			name:    "a running instance without a Node past the timeout goes",
			reason:  "its token was wrong or expired: it never joins; replaced although maxUnavailable is 0",
			fx:      []fixture{running("a", time.Hour, "new"), notJoined("b", 11*time.Minute, scalegroup.StateRunning)},
			timeout: 10 * time.Minute, nodesKnown: true, victims: []string{"b"},
		},
		{
			name:    "a booting instance past the timeout goes too",
			reason:  "as a MachineHealthCheck's nodeStartupTimeout, whatever keeps it from joining",
			fx:      []fixture{running("a", time.Hour, "new"), notJoined("b", 11*time.Minute, scalegroup.StateBooting)},
			timeout: 10 * time.Minute, nodesKnown: true, victims: []string{"b"},
		},
		{
			name:    "within the timeout it is waited for",
			fx:      []fixture{running("a", time.Hour, "new"), notJoined("b", 9*time.Minute, scalegroup.StateRunning)},
			timeout: 10 * time.Minute, nodesKnown: true,
		},
		{
			name:    "disabled",
			fx:      []fixture{running("a", time.Hour, "new"), notJoined("b", time.Hour, scalegroup.StateRunning)},
			timeout: 0, nodesKnown: true,
		},
		{
			name:    "unknown Nodes time nothing out",
			reason:  "without the workload cluster's Nodes every instance would look unjoined",
			fx:      []fixture{running("a", time.Hour, "new"), notJoined("b", time.Hour, scalegroup.StateRunning)},
			timeout: 10 * time.Minute, nodesKnown: false,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, s := glueScope(tc.fx, 2, oneSurge)
			s.joinTimeout, s.nodesKnown = tc.timeout, tc.nodesKnown
			res, err := rollout.Plan(e.rolloutInput(s))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range res.Delete {
				got = append(got, v.ID)
				if v.Reason != rollout.ReasonFailed {
					t.Errorf("victim %s for %s, want Failed", v.ID, v.Reason)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.victims, ",") {
				t.Fatalf("victims %v, want %v (%s)", got, tc.victims, tc.reason)
			}
			if len(tc.victims) > 0 && res.TargetCapacity != 2 {
				t.Errorf("capacity %d, want 2: the group refills", res.TargetCapacity)
			}
			for _, id := range tc.victims {
				rep := e.instanceReport(s, s.cloud.Instances[1])
				if !s.joinTimedOut[id] || !rep.JoinTimedOut {
					t.Errorf("instance %s is not reported as timed out", id)
				}
				var conds []metav1.Condition
				setInstanceConditions(&conds, s, rep, 1)
				if c := conds[0]; c.Reason != NodeStartupTimeoutReason || !strings.Contains(c.Message, id) {
					t.Errorf("InstanceReady %+v, want reason %s naming %s", c, NodeStartupTimeoutReason, id)
				}
			}
		})
	}
}

func TestQuotaExceededSaysWhatToFix(t *testing.T) {
	e, s := glueScope(nil, 4, rollout.Strategy{})
	e.rec, e.timing = nopRecorder{}, Timing{QuotaRetry: time.Minute}
	err := e.cloudError(context.Background(), s, events.ActionApply, scalegroup.NewQuotaExceeded("capacity 4 exceeds the instance quota of 2"))
	if err != nil {
		t.Fatalf("a quota error is reported, not returned: %v", err)
	}
	s.owner = &clusterv1.MachinePool{}
	c := scaleGroupReadyCondition(s)
	if c.Status != metav1.ConditionFalse || c.Reason != QuotaExceededReason {
		t.Fatalf("ScaleGroupReady %+v, want False/%s", c, QuotaExceededReason)
	}
	for _, want := range []string{"quota of 2", "Raise the quota", "spec.replicas"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("message %q does not say %q", c.Message, want)
		}
	}
	if s.requeue != time.Minute {
		t.Errorf("requeue %s, want the quota retry", s.requeue)
	}
}
