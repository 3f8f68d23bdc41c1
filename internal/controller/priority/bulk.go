package priority

import (
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Bulk writes: a pool's per-instance bookkeeping (the objects that mirror
// its instances, and their status) changes nothing the pool's own progress
// waits for, and at a thousand pools created at once it was half of all the
// API server's work: with it done in every pass, each pass held its worker
// for its writes and every pool waited a whole turn of the queue (a minute
// and more) for each step towards Running. A controller with a Tracker
// leaves those writes to a pass of its own at handler.LowPriority, behind
// every pool with work, and does them at once when nothing else waits.
// However busy the controller, a request's bulk writes wait MaxBulkDelay at
// most.

// Tracker knows the priority at which each request of one controller's
// queue was handed to its worker. Use one per controller (request names of
// different kinds collide): Watch it in the controller's options, and ask
// Bulk in its Reconcile.
type Tracker struct {
	// Hold, when set, holds the bulk writes while pools are being created
	// (see Hold); set it before the controller starts.
	Hold *Hold

	mu     sync.Mutex
	handed map[reconcile.Request]int
	// deferred is when each request first left its bulk writes (Defer),
	// until a pass may do them.
	deferred map[reconcile.Request]time.Time
	tracked  bool
	now      func() time.Time
	// queue is the controller's queue; parked are the requests Defer held
	// out of it, and releasing is whether a releaseParked loop runs.
	queue     priorityqueue.PriorityQueue[reconcile.Request]
	parked    map[reconcile.Request]struct{}
	releasing bool
	// poll is how often releaseParked looks at the Hold.
	poll time.Duration
}

// MaxBulkDelay bounds how long a request's bulk writes wait behind other
// work: a pass at any priority does them once they have waited this long.
const MaxBulkDelay = 5 * time.Minute

// NewTracker returns a Tracker that knows no request yet.
func NewTracker() *Tracker {
	return &Tracker{handed: map[reconcile.Request]int{}, deferred: map[reconcile.Request]time.Time{}, parked: map[reconcile.Request]struct{}{},
		now: time.Now, poll: holdPoll}
}

// holdPoll is how often parked requests look at their Hold.
const holdPoll = 250 * time.Millisecond

// Watch returns opts with a priority queue that tells t the priority of
// each request it hands out. Options with a queue of their own, or without
// the priority queue, are returned as they are: t then never defers (Bulk
// is always true).
func (t *Tracker) Watch(opts controller.Options) controller.Options {
	if opts.NewQueue != nil || !ptr.Deref(opts.UsePriorityQueue, true) {
		return opts
	}
	t.tracked = true
	opts.NewQueue = func(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
		q := priorityqueue.New(name, func(o *priorityqueue.Opts[reconcile.Request]) {
			o.Log = ctrl.Log.WithValues("controller", name)
			o.RateLimiter = rl
		})
		t.mu.Lock()
		t.queue = q
		t.mu.Unlock()
		return trackedQueue{PriorityQueue: q, t: t}
	}
	return opts
}

// Bulk reports whether the reconcile of req may do its bulk writes now: its
// request was handed out at handler.LowPriority or below (a resync, or the
// pass a deferring one asked for) while t's Hold is not active, its bulk
// writes have waited MaxBulkDelay, or t does not know its priority. A
// reconcile that may not does its other work and returns Defer's result.
func (t *Tracker) Bulk(req reconcile.Request) bool {
	if t == nil || !t.tracked {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	p, ok := t.handed[req]
	since, waiting := t.deferred[req]
	if !ok || waiting && t.now().Sub(since) >= MaxBulkDelay || p <= handler.LowPriority && !t.Hold.Active() {
		delete(t.deferred, req)
		return true
	}
	return false
}

// Defer records that the reconcile of req left its bulk writes, and
// returns its result: another pass at once, at handler.LowPriority (behind
// every request with work, and raised again by any new event for the same
// object). While t's Hold is active the request is parked instead, and res
// (what the reconcile returns for its own work) is returned: it goes back
// to the queue at handler.LowPriority when the Hold is no longer active, or
// once its bulk writes have waited MaxBulkDelay.
func (t *Tracker) Defer(req reconcile.Request, res reconcile.Result) reconcile.Result {
	if t == nil {
		return reconcile.Result{RequeueAfter: deferredDelay, Priority: ptr.To(handler.LowPriority)}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	since, ok := t.deferred[req]
	if !ok {
		since = t.now()
		t.deferred[req] = since
	}
	if t.queue == nil || !t.Hold.Active() || t.now().Sub(since) >= MaxBulkDelay {
		return reconcile.Result{RequeueAfter: deferredDelay, Priority: ptr.To(handler.LowPriority)}
	}
	t.parked[req] = struct{}{}
	if !t.releasing {
		t.releasing = true
		go t.releaseParked()
	}
	return res
}

// releaseParked hands the parked requests back to the queue, at
// handler.LowPriority, once the Hold is no longer active or each has waited
// MaxBulkDelay; it returns when none is left.
func (t *Tracker) releaseParked() {
	tick := time.NewTicker(t.poll)
	defer tick.Stop()
	for range tick.C {
		if t.release() == 0 {
			return
		}
	}
}

// release hands back the parked requests that may go, and returns how many
// are left; with none left, releaseParked stops.
func (t *Tracker) release() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	held := t.Hold.Active()
	for req := range t.parked {
		if !held || t.now().Sub(t.deferred[req]) >= MaxBulkDelay {
			t.queue.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(handler.LowPriority)}, req)
			delete(t.parked, req)
		}
	}
	if len(t.parked) == 0 {
		t.releasing = false
	}
	return len(t.parked)
}

// Forget drops what t remembers of req's deferred bulk writes: its object
// is gone, and no pass will do them.
func (t *Tracker) Forget(req reconcile.Request) {
	if t != nil {
		t.mu.Lock()
		delete(t.deferred, req)
		delete(t.parked, req)
		t.mu.Unlock()
	}
}

// deferredDelay is how soon the pass that does the bulk writes may come.
const deferredDelay = time.Millisecond

func (t *Tracker) handedOut(req reconcile.Request, p int) {
	t.mu.Lock()
	t.handed[req] = p
	t.mu.Unlock()
}

func (t *Tracker) done(req reconcile.Request) {
	t.mu.Lock()
	delete(t.handed, req)
	t.mu.Unlock()
}

// trackedQueue is a priority queue that tells its Tracker what it hands out
// and when each is done.
type trackedQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	t *Tracker
}

// GetWithPriority implements priorityqueue.PriorityQueue.
func (q trackedQueue) GetWithPriority() (reconcile.Request, int, bool) {
	req, p, shutdown := q.PriorityQueue.GetWithPriority()
	if !shutdown {
		q.t.handedOut(req, p)
	}
	return req, p, shutdown
}

// Get implements workqueue.TypedInterface.
func (q trackedQueue) Get() (reconcile.Request, bool) {
	req, _, shutdown := q.GetWithPriority()
	return req, shutdown
}

// Done implements workqueue.TypedInterface.
func (q trackedQueue) Done(req reconcile.Request) {
	q.t.done(req)
	q.PriorityQueue.Done(req)
}
