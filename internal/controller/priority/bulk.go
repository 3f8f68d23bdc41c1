package priority

import (
	"slices"
	"sync"
	"sync/atomic"
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
//
// Priority alone orders one controller's queue, and the pools' work is
// spread over several controllers (the MachinePool's, the infrastructure
// pool's) that share the API server: an infrastructure controller whose
// pools all waited for their Nodes found its queue empty of work and did
// its bookkeeping, and at a thousand pools created at once 92% of the
// per-instance objects were created before the last pool was Running. So
// the Trackers of one manager share a Load: a request that leaves its bulk
// writes while another reconcile of any of them has work is parked, not
// queued, and goes back to its queue at handler.LowPriority once none has
// (or after MaxBulkDelay).

// Load counts the reconciles handed out above handler.LowPriority and not
// yet done by the controllers whose Trackers share it (Share): one per
// manager. The zero Load is ready.
type Load struct {
	busy     atomic.Int64
	mu       sync.Mutex
	trackers []*Tracker
}

// add changes the count by d and returns it.
func (l *Load) add(d int64) int64 { return l.busy.Add(d) }

// release hands every parked request of every Tracker back to its queue.
func (l *Load) release() {
	l.mu.Lock()
	trackers := slices.Clone(l.trackers)
	l.mu.Unlock()
	for _, t := range trackers {
		t.unpark(func(time.Time) bool { return true })
	}
}

func (l *Load) join(t *Tracker) {
	l.mu.Lock()
	l.trackers = append(l.trackers, t)
	l.mu.Unlock()
}

// Tracker knows the priority at which each request of one controller's
// queue was handed to its worker. Use one per controller (request names of
// different kinds collide): Share the manager's Load, Watch it in the
// controller's options, and ask Bulk in its Reconcile.
type Tracker struct {
	mu     sync.Mutex
	handed map[reconcile.Request]int
	// deferred is when each request first left its bulk writes (Defer),
	// until a pass may do them.
	deferred map[reconcile.Request]time.Time
	// parked are the deferred requests out of the queue until the Load
	// has no work (or they waited MaxBulkDelay); timer hands back those
	// that waited that long.
	parked  map[reconcile.Request]bool
	timer   *time.Timer
	tracked bool
	now     func() time.Time
	load    *Load
	queue   priorityqueue.PriorityQueue[reconcile.Request]
}

// MaxBulkDelay bounds how long a request's bulk writes wait behind other
// work: a pass at any priority does them once they have waited this long.
const MaxBulkDelay = 5 * time.Minute

// NewTracker returns a Tracker that knows no request yet.
// Its Load is its own until Share.
func NewTracker() *Tracker {
	return &Tracker{handed: map[reconcile.Request]int{}, deferred: map[reconcile.Request]time.Time{},
		parked: map[reconcile.Request]bool{}, now: time.Now, load: &Load{}}
}

// Share makes l t's Load (before Watch; nil keeps its own), and returns t.
func (t *Tracker) Share(l *Load) *Tracker {
	if l != nil {
		t.load = l
	}
	return t
}

// Watch returns opts with a priority queue that tells t the priority of
// each request it hands out. Options with a queue of their own, or without
// the priority queue, are returned as they are: t then never defers (Bulk
// is always true).
func (t *Tracker) Watch(opts controller.Options) controller.Options {
	if opts.NewQueue != nil || !ptr.Deref(opts.UsePriorityQueue, true) {
		return opts
	}
	t.tracked = true
	t.load.join(t)
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
// pass a deferring one asked for), its bulk writes have waited
// MaxBulkDelay, or t does not know its priority. A reconcile that may not
// does its other work and returns Defer's result.
func (t *Tracker) Bulk(req reconcile.Request) bool {
	if t == nil || !t.tracked {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	p, ok := t.handed[req]
	since, waiting := t.deferred[req]
	if !ok || p <= handler.LowPriority || waiting && t.now().Sub(since) >= MaxBulkDelay {
		delete(t.deferred, req)
		delete(t.parked, req)
		return true
	}
	return false
}

// Defer records that the reconcile of req left its bulk writes, and
// returns its result. While another reconcile of the Load has work, req is
// parked (no requeue: the Load hands it back); otherwise it is another pass
// at once, at handler.LowPriority (behind every request with work, and
// raised again by any new event for the same object).
func (t *Tracker) Defer(req reconcile.Request) reconcile.Result {
	if t == nil {
		return reconcile.Result{RequeueAfter: deferredDelay, Priority: ptr.To(handler.LowPriority)}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.deferred[req]; !ok {
		t.deferred[req] = t.now()
	}
	others := t.load.busy.Load()
	if p, ok := t.handed[req]; ok && p > handler.LowPriority {
		others-- // this reconcile
	}
	if t.queue == nil || others <= 0 {
		return reconcile.Result{RequeueAfter: deferredDelay, Priority: ptr.To(handler.LowPriority)}
	}
	t.parked[req] = true
	if t.timer == nil {
		t.timer = time.AfterFunc(MaxBulkDelay, t.expire)
	}
	return reconcile.Result{}
}

// expire hands back the parked requests that have waited MaxBulkDelay, and
// sets the timer for the next.
func (t *Tracker) expire() {
	t.unpark(func(since time.Time) bool { return t.now().Sub(since) >= MaxBulkDelay })
}

// unpark hands the parked requests whose deferral time due accepts back to
// the queue at handler.LowPriority, and sets the timer for those left.
func (t *Tracker) unpark(due func(since time.Time) bool) {
	t.mu.Lock()
	var back []reconcile.Request
	var next time.Time
	for req := range t.parked {
		since := t.deferred[req]
		if due(since) {
			back = append(back, req)
			delete(t.parked, req)
		} else if next.IsZero() || since.Before(next) {
			next = since
		}
	}
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
	if len(t.parked) > 0 {
		t.timer = time.AfterFunc(max(next.Add(MaxBulkDelay).Sub(t.now()), time.Millisecond), t.expire)
	}
	q := t.queue
	t.mu.Unlock()
	if len(back) > 0 && q != nil {
		q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(handler.LowPriority)}, back...)
	}
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
	if p > handler.LowPriority {
		t.load.add(1)
	}
}

func (t *Tracker) done(req reconcile.Request) {
	t.mu.Lock()
	p, ok := t.handed[req]
	delete(t.handed, req)
	t.mu.Unlock()
	if ok && p > handler.LowPriority && t.load.add(-1) == 0 {
		t.load.release()
	}
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
