package priority

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// A queue's priority orders only its own controller, and the bulk writes
// wait for its queue to be empty of work. A pool's creation is spread over
// several controllers (its MachinePool's, its infrastructure pool's) that
// share one API server, and while pools wait for their Nodes their queues
// are often empty: at a thousand pools created at once every per-instance
// object was written before the last pool was Running, on the cores the
// API server needed for the creations. A Hold shared by a manager's
// controllers says when pools are being created and the creation is moving:
// while it is active, a Tracker parks the passes that would do only bulk
// writes, without a requeue, and hands them back to its queue at
// handler.LowPriority once it is not (or once they have waited
// MaxBulkDelay).
//
// Only a creation that moves holds anything: a pool that stopped on the way
// (its Nodes never join, its cloud refuses it) holds the others' bulk
// writes, and its own (the Machines a MachineHealthCheck watches), for
// HoldWindow at most after the last pool took a step.

// HoldWindow is how long a step of a pool's creation keeps a Hold active.
const HoldWindow = 10 * time.Second

// Hold knows which pools are being created (their MachinePool has not been
// Running yet) and when one last took a step towards Running. The zero
// Hold is not usable; a nil Hold is never active.
type Hold struct {
	mu       sync.Mutex
	creating map[types.NamespacedName]struct{}
	stepped  time.Time
	now      func() time.Time
}

// NewHold returns a Hold that knows no pool.
func NewHold() *Hold {
	return &Hold{creating: map[types.NamespacedName]struct{}{}, now: time.Now}
}

// Observe records pool as its reconcile left it: whether it is being
// created, and whether it took a step towards Running (a new phase on the
// way, Running included).
func (h *Hold) Observe(pool types.NamespacedName, creating, stepped bool) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if creating {
		h.creating[pool] = struct{}{}
	} else {
		delete(h.creating, pool)
	}
	if stepped {
		h.stepped = h.now()
	}
}

// Creating reports whether pool is being created, as last observed.
func (h *Hold) Creating(pool types.NamespacedName) bool {
	if h == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.creating[pool]
	return ok
}

// Forget drops pool (it is gone).
func (h *Hold) Forget(pool types.NamespacedName) { h.Observe(pool, false, false) }

// Active reports whether pools are being created and one took a step in the
// last HoldWindow.
func (h *Hold) Active() bool {
	if h == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.creating) > 0 && h.now().Sub(h.stepped) < HoldWindow
}
