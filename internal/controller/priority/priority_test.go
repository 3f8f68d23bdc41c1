package priority

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestLow enqueues through a real controller-runtime
// priority queue and reads back the priority each request got.
func TestLow(t *testing.T) {
	ctx := context.Background()
	obj := func(name, rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
	}
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()
	plain, low := &handler.EnqueueRequestForObject{}, Low(&handler.EnqueueRequestForObject{})

	plain.Update(ctx, event.UpdateEvent{ObjectOld: obj("work", "1"), ObjectNew: obj("work", "2")}, q)
	low.Update(ctx, event.UpdateEvent{ObjectOld: obj("poked", "1"), ObjectNew: obj("poked", "2")}, q)
	low.Create(ctx, event.CreateEvent{Object: obj("created", "1")}, q)
	low.Generic(ctx, event.GenericEvent{Object: obj("generic", "1")}, q)

	got := map[string]int{}
	for range 4 {
		item, prio, shutdown := q.GetWithPriority()
		if shutdown {
			t.Fatal("queue shut down")
		}
		got[item.Name] = prio
		q.Done(item)
	}
	want := map[string]int{"work": 0, "poked": handler.LowPriority, "created": handler.LowPriority, "generic": handler.LowPriority}
	for name, p := range want {
		if got[name] != p {
			t.Errorf("%s: priority %d, want %d (all: %v)", name, got[name], p, got)
		}
	}

	// A pool with work is taken first whatever the order it came in.
	low.Update(ctx, event.UpdateEvent{ObjectOld: obj("idle", "1"), ObjectNew: obj("idle", "2")}, q)
	plain.Update(ctx, event.UpdateEvent{ObjectOld: obj("busy", "1"), ObjectNew: obj("busy", "2")}, q)
	// Adds reach the queue through a buffer: wait until both are in it.
	for deadline := time.Now().Add(10 * time.Second); q.Len() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests queued, want 2", q.Len())
		}
	}
	first, _, _ := q.GetWithPriority()
	if first.Name != "busy" {
		t.Errorf("first request %s, want busy (the idle pool's came first but at low priority)", first.Name)
	}
	q.Done(first)

	// A queue that is not a priority queue is used as it is.
	if plainQueue := lowQueue(nil); plainQueue != nil {
		t.Errorf("lowQueue(nil) = %v, want nil", plainQueue)
	}
}

// TestLowUnless: an update that is work keeps the default priority, one
// that is not goes low, and a create keeps the handler's; under LowCreates
// a create goes low too.
func TestLowUnless(t *testing.T) {
	ctx := context.Background()
	u := func(name, rv, phase, note string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"phase": phase}}}
		o.SetNamespace("ns")
		o.SetName(name)
		o.SetResourceVersion(rv)
		if note != "" {
			o.SetAnnotations(map[string]string{"example.com/note": note})
		}
		return o
	}
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()
	phaseChanged := func(o, n client.Object) bool {
		return !equality.Semantic.DeepEqual(o.(*unstructured.Unstructured).Object["status"], n.(*unstructured.Unstructured).Object["status"])
	}
	h := LowUnless(&handler.EnqueueRequestForObject{}, phaseChanged)
	h.Update(ctx, event.UpdateEvent{ObjectOld: u("noted", "1", "Running", ""), ObjectNew: u("noted", "2", "Running", "x")}, q)
	h.Update(ctx, event.UpdateEvent{ObjectOld: u("status", "1", "Provisioning", ""), ObjectNew: u("status", "2", "Running", "")}, q)
	h.Create(ctx, event.CreateEvent{Object: u("created", "1", "Running", "")}, q)
	// LowCreates over it: its creates go low, its updates as they were.
	lc := LowCreates(h)
	lc.Create(ctx, event.CreateEvent{Object: u("bookkept", "1", "Running", "")}, q)
	lc.Update(ctx, event.UpdateEvent{ObjectOld: u("moved", "1", "Provisioning", ""), ObjectNew: u("moved", "2", "Running", "")}, q)
	lc.Update(ctx, event.UpdateEvent{ObjectOld: u("renoted", "1", "Running", ""), ObjectNew: u("renoted", "2", "Running", "x")}, q)
	got := map[string]int{}
	for range 6 {
		item, prio, _ := q.GetWithPriority()
		got[item.Name] = prio
		q.Done(item)
	}
	want := map[string]int{"noted": handler.LowPriority, "status": 0, "created": 0,
		"bookkept": handler.LowPriority, "moved": 0, "renoted": handler.LowPriority}
	for name, p := range want {
		if got[name] != p {
			t.Errorf("%s: priority %d, want %d (all: %v)", name, got[name], p, got)
		}
	}
}
