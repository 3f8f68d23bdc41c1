// Package priority puts the reconciles that are unlikely to find work
// behind those that will, on controller-runtime's priority queue (the
// default queue of its controllers).
//
// A management cluster of a thousand pools queues many reconciles that find
// nothing to do: a resync, a tool stamping its own annotation on every pool,
// each pool's status written by the engine and seen again by the MachinePool
// controller. controller-runtime already queues a resync's and the initial
// list's events at handler.LowPriority; the handlers here do the same for
// updates that changed nothing a controller acts on, so that a pool with
// work (a new spec, a MachinePool scaled, a Node gone) is not queued behind
// every other pool. A low-priority request is still reconciled, after the
// others. A pool's bookkeeping writes (its per-instance objects and
// Machines) go there too: see Tracker.
package priority

import (
	"context"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Low returns h with every request it enqueues at handler.LowPriority
// (unless h gives one itself).
func Low(h handler.EventHandler) handler.EventHandler {
	return lowUnless{EventHandler: h, work: func(_, _ client.Object) bool { return false }, all: true}
}

// LowUnless returns h with the requests of an update for which work
// reports false at handler.LowPriority; every other event keeps h's
// priority.
func LowUnless(h handler.EventHandler, work func(oldObj, newObj client.Object) bool) handler.EventHandler {
	return lowUnless{EventHandler: h, work: work}
}

// LowCreates returns h with the requests of every create at
// handler.LowPriority; every other event keeps h's priority. It is for the
// objects a controller creates as bookkeeping of the one it reconciles (a
// pool's per-instance objects, its Machines): their creation, seen again,
// is bulk work (Tracker), not work of the pool's own.
func LowCreates(h handler.EventHandler) handler.EventHandler {
	return lowUnless{EventHandler: h, work: func(_, _ client.Object) bool { return true }, creates: true}
}

type lowUnless struct {
	handler.EventHandler
	work func(oldObj, newObj client.Object) bool
	all  bool // every event, not only updates
	// creates: every create as well as the updates work rejects
	creates bool
}

// Create implements handler.EventHandler.
func (h lowUnless) Create(ctx context.Context, ev event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if h.all || h.creates {
		q = lowQueue(q)
	}
	h.EventHandler.Create(ctx, ev, q)
}

// Update implements handler.EventHandler.
func (h lowUnless) Update(ctx context.Context, ev event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if h.all || ev.ObjectOld != nil && ev.ObjectNew != nil && !h.work(ev.ObjectOld, ev.ObjectNew) {
		q = lowQueue(q)
	}
	h.EventHandler.Update(ctx, ev, q)
}

// Delete implements handler.EventHandler.
func (h lowUnless) Delete(ctx context.Context, ev event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if h.all {
		q = lowQueue(q)
	}
	h.EventHandler.Delete(ctx, ev, q)
}

// Generic implements handler.EventHandler.
func (h lowUnless) Generic(ctx context.Context, ev event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if h.all {
		q = lowQueue(q)
	}
	h.EventHandler.Generic(ctx, ev, q)
}

// lowQueue returns q with every add at handler.LowPriority where q is a
// priority queue, and q itself where it is not.
func lowQueue(q workqueue.TypedRateLimitingInterface[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	if pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request]); ok {
		return low{pq}
	}
	return q
}

// low is a priority queue whose adds without a priority are at
// handler.LowPriority.
type low struct {
	priorityqueue.PriorityQueue[reconcile.Request]
}

func (q low) Add(r reconcile.Request) { q.AddWithOpts(priorityqueue.AddOpts{}, r) }

func (q low) AddRateLimited(r reconcile.Request) {
	q.AddWithOpts(priorityqueue.AddOpts{RateLimited: true}, r)
}

func (q low) AddAfter(r reconcile.Request, after time.Duration) {
	q.AddWithOpts(priorityqueue.AddOpts{After: after}, r)
}

func (q low) AddWithOpts(o priorityqueue.AddOpts, rs ...reconcile.Request) {
	if o.Priority == nil {
		o.Priority = ptr.To(handler.LowPriority)
	}
	q.PriorityQueue.AddWithOpts(o, rs...)
}
