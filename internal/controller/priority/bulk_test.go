package priority

import (
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestTrackerKnowsThePriorityOfEachPass hands requests out of a tracked
// controller-runtime priority queue and asks Bulk about each while it is
// handed out and after it is done.
func TestTrackerKnowsThePriorityOfEachPass(t *testing.T) {
	tr := NewTracker()
	opts := tr.Watch(controller.Options{})
	if opts.NewQueue == nil {
		t.Fatal("Watch set no queue")
	}
	q := opts.NewQueue("test", workqueue.DefaultTypedItemBasedRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request])
	if !ok {
		t.Fatalf("the queue is a %T, not a priority queue: the controller would wrap it and hand out every request at priority 0", q)
	}
	req := func(name string) reconcile.Request {
		return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
	}
	pq.AddWithOpts(priorityqueue.AddOpts{}, req("work"))
	pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(handler.LowPriority)}, req("bulk"))

	for _, want := range []struct {
		name string
		bulk bool
	}{{"work", false}, {"bulk", true}} {
		got, prio, shutdown := pq.GetWithPriority()
		if shutdown {
			t.Fatal("queue shut down")
		}
		if got != req(want.name) {
			t.Fatalf("handed out %v, want %s first (the higher priority)", got, want.name)
		}
		if tr.Bulk(got) != want.bulk {
			t.Errorf("%s handed out at priority %d: Bulk = %v, want %v", want.name, prio, !want.bulk, want.bulk)
		}
		pq.Done(got)
		if !tr.Bulk(got) {
			t.Errorf("%s done: Bulk = false, want true (nothing known about a request not handed out)", want.name)
		}
	}
	if len(tr.handed) != 0 {
		t.Errorf("the tracker still holds %d requests after they were done", len(tr.handed))
	}
}

// TestTrackerWithoutItsQueueNeverDefers: a controller whose options bring
// their own queue, or turn the priority queue off, does its bulk writes in
// every pass, as does a reconciler never set up with a manager.
func TestTrackerWithoutItsQueueNeverDefers(t *testing.T) {
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "p"}}
	var unset *Tracker
	if !unset.Bulk(req) {
		t.Error("a nil Tracker defers")
	}
	off := NewTracker()
	if opts := off.Watch(controller.Options{UsePriorityQueue: ptr.To(false)}); opts.NewQueue != nil {
		t.Error("Watch set a queue on options without the priority queue")
	}
	off.handedOut(req, 0)
	if !off.Bulk(req) {
		t.Error("a Tracker whose queue is not watched defers")
	}
}

// TestBulkWritesWaitAtMostMaxBulkDelay: a request whose passes keep coming
// at a higher priority (a busy pool's events) has its bulk writes done once
// they have waited MaxBulkDelay, and waits anew after that.
func TestBulkWritesWaitAtMostMaxBulkDelay(t *testing.T) {
	tr := NewTracker()
	tr.Watch(controller.Options{})
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	tr.now = func() time.Time { return now }
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "busy"}}

	tr.handedOut(req, 0)
	if tr.Bulk(req) {
		t.Fatal("a pass at priority 0 may do its bulk writes")
	}
	res := tr.Defer(req, reconcile.Result{})
	if res.RequeueAfter <= 0 || res.Priority == nil || *res.Priority != handler.LowPriority {
		t.Fatalf("Defer = %+v, want a prompt requeue at LowPriority", res)
	}
	tr.done(req)

	now = now.Add(MaxBulkDelay - time.Second)
	tr.handedOut(req, 0)
	if tr.Bulk(req) {
		t.Fatalf("bulk writes done after %s, before MaxBulkDelay", MaxBulkDelay-time.Second)
	}
	tr.Defer(req, reconcile.Result{}) // still the first deferral's time
	tr.done(req)

	now = now.Add(time.Second)
	tr.handedOut(req, 0)
	if !tr.Bulk(req) {
		t.Fatalf("bulk writes still deferred after %s", MaxBulkDelay)
	}
	tr.done(req)
	tr.handedOut(req, 0)
	if tr.Bulk(req) {
		t.Fatal("once done, the next pass at priority 0 does them at once again: the wait did not start anew")
	}
}

// TestForgetDropsADeferral: the deferral of a request whose object is gone
// is not kept.
func TestForgetDropsADeferral(t *testing.T) {
	tr := NewTracker()
	tr.Watch(controller.Options{})
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "gone"}}
	tr.handedOut(req, 0)
	tr.Defer(req, reconcile.Result{})
	tr.done(req)
	tr.Forget(req)
	if len(tr.deferred) != 0 {
		t.Errorf("after Forget the tracker still holds %d deferrals", len(tr.deferred))
	}
}

// TestHoldParksBulkPasses: while pools are being created and their creation
// moves, a pass that would do only bulk writes (handed out at LowPriority)
// may not, and its request is parked (the pass's own result is returned, no
// prompt requeue); once no pool took a step for HoldWindow the parked
// request comes back to the queue at LowPriority, and its pass may do them.
// A Hold with no pool being created holds nothing.
func TestHoldParksBulkPasses(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	hold := NewHold()
	hold.now = clock
	tr := NewTracker()
	// The test releases parked requests itself (release), not a ticker.
	tr.Hold, tr.now, tr.poll = hold, clock, time.Hour
	q := tr.Watch(controller.Options{}).NewQueue("test", workqueue.DefaultTypedItemBasedRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	pq := q.(priorityqueue.PriorityQueue[reconcile.Request])
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "bookkeeping"}}
	pool := types.NamespacedName{Namespace: "ns", Name: "new"}

	pass := func() (bool, reconcile.Result) {
		t.Helper()
		got, _, _ := pq.GetWithPriority()
		if got != req {
			t.Fatalf("handed out %v", got)
		}
		defer pq.Done(got)
		if tr.Bulk(got) {
			return true, reconcile.Result{}
		}
		return false, tr.Defer(got, reconcile.Result{RequeueAfter: time.Minute})
	}
	if hold.Active() {
		t.Fatal("a Hold that knows no pool is active")
	}
	hold.Observe(pool, true, true)
	pq.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(handler.LowPriority)}, req)
	bulk, res := pass()
	if bulk {
		t.Fatal("a pass at LowPriority did its bulk writes while a pool was being created")
	}
	if res.RequeueAfter != time.Minute || res.Priority != nil {
		t.Errorf("a parked request's pass returned %+v, want its own result (requeue after 1m)", res)
	}
	// Parked: nothing comes back while the creation moves.
	advance(HoldWindow - time.Second)
	if left := tr.release(); left != 1 || pq.Len() != 0 {
		t.Fatalf("while the Hold is active: %d parked, %d in the queue; want the one parked", left, pq.Len())
	}
	// The pool took no step for HoldWindow: the request comes back.
	advance(time.Second)
	if left := tr.release(); left != 0 || pq.Len() != 1 {
		t.Fatalf("once the Hold is no longer active: %d parked, %d in the queue; want it back in the queue", left, pq.Len())
	}
	if bulk, _ := pass(); !bulk {
		t.Error("the released pass at LowPriority may not do its bulk writes")
	}
	// The pool was created: nothing is held.
	hold.Observe(pool, false, true)
	if hold.Active() {
		t.Error("the Hold is active with no pool being created")
	}
}
