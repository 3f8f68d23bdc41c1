package machinepool

import (
	"context"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// TestPoolObjectEventsAreNotBulk: the events of what a MachinePool waits
// for — its infrastructure pool created (with no status yet, as a user
// applies it) or reporting ready — reach the MachinePool controller's queue
// at the default priority, ahead of the pools' bulk work; an infrastructure
// machine's statusless create wakes no pool and its status is bulk work
// (handler.LowPriority). At a thousand pools, the infrastructure pool's
// events at low priority left the pools created first waiting minutes for
// their turn behind every other pool's Machines (BENCHMARKS.md, "Many
// pools").
func TestPoolObjectEventsAreNotBulk(t *testing.T) {
	handlers := map[string]handler.EventHandler{}
	r := &Reconciler{watchFunc: func(obj client.Object, h handler.EventHandler) error {
		handlers[obj.GetObjectKind().GroupVersionKind().Kind] = h
		return nil
	}}
	ctx := context.Background()
	const apiVersion = "infrastructure.cluster.x-k8s.io/v1beta1"
	toPool := func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "pool"}}}
	}
	if err := r.ensureWatch(ctx, apiVersion, "LocalMachinePool", toPool); err != nil {
		t.Fatal(err)
	}
	if err := r.ensureMachineWatch(ctx, apiVersion, "LocalMachinePoolMachine"); err != nil {
		t.Fatal(err)
	}
	object := func(kind, name string, status map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
		u.SetNamespace("ns")
		u.SetName(name)
		u.SetLabels(map[string]string{clusterv1.MachinePoolNameLabel: "pool"})
		u.SetResourceVersion("1")
		if status != nil {
			u.Object["status"] = status
			u.SetResourceVersion("2")
		}
		return u
	}
	// queued sends one event through the kind's handler and returns the
	// priorities of what it queued.
	queued := func(kind string, send func(h handler.EventHandler, q priorityqueue.PriorityQueue[reconcile.Request])) []int {
		t.Helper()
		h, ok := handlers[kind]
		if !ok {
			t.Fatalf("no watch of %s", kind)
		}
		q := priorityqueue.New[reconcile.Request]("test")
		defer q.ShutDown()
		send(h, q)
		var got []int
		for q.Len() > 0 {
			_, p, _ := q.GetWithPriority()
			got = append(got, p)
		}
		return got
	}
	pool := func(status map[string]any) *unstructured.Unstructured {
		return object("LocalMachinePool", "pool", status)
	}
	machine := func(status map[string]any) *unstructured.Unstructured {
		return object("LocalMachinePoolMachine", "pool-i-1", status)
	}
	ready := map[string]any{"ready": true, "replicas": int64(3)}
	for _, tc := range []struct {
		name, kind string
		send       func(h handler.EventHandler, q priorityqueue.PriorityQueue[reconcile.Request])
		want       []int
	}{
		{"infrastructure pool created without a status", "LocalMachinePool", func(h handler.EventHandler, q priorityqueue.PriorityQueue[reconcile.Request]) {
			h.Create(ctx, event.CreateEvent{Object: pool(nil)}, q)
		}, []int{0}},
		{"infrastructure pool ready", "LocalMachinePool", func(h handler.EventHandler, q priorityqueue.PriorityQueue[reconcile.Request]) {
			h.Update(ctx, event.UpdateEvent{ObjectOld: pool(nil), ObjectNew: pool(ready)}, q)
		}, []int{0}},
		{"infrastructure machine created without a status", "LocalMachinePoolMachine", func(h handler.EventHandler, q priorityqueue.PriorityQueue[reconcile.Request]) {
			h.Create(ctx, event.CreateEvent{Object: machine(nil)}, q)
		}, nil},
		{"infrastructure machine's status written", "LocalMachinePoolMachine", func(h handler.EventHandler, q priorityqueue.PriorityQueue[reconcile.Request]) {
			h.Update(ctx, event.UpdateEvent{ObjectOld: machine(nil), ObjectNew: machine(ready)}, q)
		}, []int{handler.LowPriority}},
	} {
		got := queued(tc.kind, tc.send)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: queued at priorities %v, want %v", tc.name, got, tc.want)
		}
	}
}
