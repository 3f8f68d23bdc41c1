package priority

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
// that is not goes low, and a create keeps the handler's.
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
	h := LowUnless(&handler.EnqueueRequestForObject{}, MoreThanMetadata)
	h.Update(ctx, event.UpdateEvent{ObjectOld: u("noted", "1", "Running", ""), ObjectNew: u("noted", "2", "Running", "x")}, q)
	h.Update(ctx, event.UpdateEvent{ObjectOld: u("status", "1", "Provisioning", ""), ObjectNew: u("status", "2", "Running", "")}, q)
	h.Create(ctx, event.CreateEvent{Object: u("created", "1", "Running", "")}, q)
	got := map[string]int{}
	for range 3 {
		item, prio, _ := q.GetWithPriority()
		got[item.Name] = prio
		q.Done(item)
	}
	want := map[string]int{"noted": handler.LowPriority, "status": 0, "created": 0}
	for name, p := range want {
		if got[name] != p {
			t.Errorf("%s: priority %d, want %d (all: %v)", name, got[name], p, got)
		}
	}
}

func TestMoreThanMetadata(t *testing.T) {
	base := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"replicas": int64(3)}}}
	base.SetResourceVersion("1")
	annotated := base.DeepCopy()
	annotated.SetResourceVersion("2")
	annotated.SetAnnotations(map[string]string{"example.com/x": "y"})
	labelled := base.DeepCopy()
	labelled.SetLabels(map[string]string{"a": "b"})
	scaled := base.DeepCopy()
	_ = unstructured.SetNestedField(scaled.Object, int64(4), "spec", "replicas")
	if MoreThanMetadata(base, annotated) {
		t.Error("an annotation and a resource version: reported as more")
	}
	if !MoreThanMetadata(base, labelled) {
		t.Error("a label: not reported")
	}
	if !MoreThanMetadata(base, scaled) {
		t.Error("a spec change: not reported")
	}
	typed := &corev1.ConfigMap{}
	if !MoreThanMetadata(typed, typed) {
		t.Error("typed objects: want true (no cheap comparison)")
	}
}
