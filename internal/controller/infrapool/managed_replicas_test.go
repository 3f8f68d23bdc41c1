package infrapool

import (
	"testing"
	"time"

	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

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
