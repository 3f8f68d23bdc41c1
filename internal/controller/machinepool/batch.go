package machinepool

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/mpool-dev/mpool/internal/parallel"
)

// write is one object's pending writes (a pool Machine, a Node).
type write func(context.Context) error

// Bounds of the per-object writes of one reconcile.
const (
	// writeWorkers bounds the concurrent per-object writes.
	writeWorkers = 16
	// maxWritesPerBatch bounds the objects of one kind (pool Machines,
	// Nodes) written by one reconcile: a pool of thousands writes them in
	// batches, and its own status is reported between them rather than
	// after all of them.
	maxWritesPerBatch = 200
	// batchRequeue is the requeue after a reconcile that left objects to
	// write, or that found one changed under it (its cache was behind).
	batchRequeue = 100 * time.Millisecond
)

// writeAfterStatus queues writes (one kind of object: a batch of its own)
// to run once the pool's status is written. Nothing in the pool's status
// depends on these writes — its replica counts come from the Nodes and the
// infrastructure pool as read — and at a thousand instances one batch of
// Node and Machine writes takes seconds: run first, it held the pool's
// status (readyReplicas, the phase) back by that much on every reconcile.
// Their outcome, and their errors, reach the status on the next reconcile.
func (s *scope) writeAfterStatus(writes []write) {
	if len(writes) > 0 {
		s.afterStatus = append(s.afterStatus, writes)
	}
}

// runAfterStatus runs the batches queued by writeAfterStatus, one after the
// other (each bounded by writeBatch), and returns the earliest requeue.
func (s *scope) runAfterStatus(ctx context.Context) (ctrl.Result, error) {
	var res ctrl.Result
	var errs []error
	for _, writes := range s.afterStatus {
		r, err := writeBatch(ctx, writes)
		if err != nil {
			errs = append(errs, err)
		}
		res = lowestNonZeroResult(res, r)
	}
	s.afterStatus = nil
	return res, errors.Join(errs...)
}

// writeBatch runs at most maxWritesPerBatch of writes, writeWorkers at a
// time. Conflicts are not errors: the cache was behind the object, and a
// prompt requeue (rather than the error backoff, which grows to many seconds
// over a long scale-up) writes it again from the newer copy.
func writeBatch(ctx context.Context, writes []write) (ctrl.Result, error) {
	var res ctrl.Result
	if len(writes) > maxWritesPerBatch {
		writes = writes[:maxWritesPerBatch]
		res.RequeueAfter = batchRequeue
	}
	var conflicts atomic.Int32
	err := parallel.ForEach(ctx, writeWorkers, len(writes), func(ctx context.Context, i int) error {
		err := writes[i](ctx)
		if err != nil && onlyConflicts(err) {
			conflicts.Add(1)
			return nil
		}
		return err
	})
	if conflicts.Load() > 0 {
		res.RequeueAfter = batchRequeue
	}
	return res, err
}

// onlyConflicts reports whether err, and every error joined in it, is a
// Conflict: one object's writes may fail on a conflict and on something
// else at once, and the something else must not be swallowed.
func onlyConflicts(err error) bool {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			if !onlyConflicts(e) {
				return false
			}
		}
		return true
	}
	return apierrors.IsConflict(err)
}
