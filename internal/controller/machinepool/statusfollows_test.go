package machinepool

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestStatusFollowsDropsOnlyStatuslessCreates: the create of an
// infrastructure machine without a status wakes no pool (its status
// follows, and that update does); with a status, and every update, it does.
func TestStatusFollowsDropsOnlyStatuslessCreates(t *testing.T) {
	h := statusFollows{handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: "pool"}}}
	})}
	machine := func(status map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "LocalMachinePoolMachine"}}
		u.SetNamespace("ns")
		u.SetName("pool-i-1")
		if status != nil {
			u.Object["status"] = status
		}
		return u
	}
	queued := func(send func(workqueue.TypedRateLimitingInterface[reconcile.Request])) int {
		q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
		defer q.ShutDown()
		send(q)
		return q.Len()
	}
	ctx := context.Background()
	if n := queued(func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		h.Create(ctx, event.CreateEvent{Object: machine(nil)}, q)
	}); n != 0 {
		t.Errorf("create without a status: %d requests queued, want 0", n)
	}
	if n := queued(func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		h.Create(ctx, event.CreateEvent{Object: machine(map[string]any{"latestModelApplied": true})}, q)
	}); n != 1 {
		t.Errorf("create with a status: %d requests queued, want 1", n)
	}
	if n := queued(func(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		h.Update(ctx, event.UpdateEvent{ObjectOld: machine(nil), ObjectNew: machine(map[string]any{"latestModelApplied": true})}, q)
	}); n != 1 {
		t.Errorf("the status written: %d requests queued, want 1", n)
	}
}
