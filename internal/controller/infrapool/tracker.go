package infrapool

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// instanceTimes remembers a time per instance of each pool, for this
// process. The engine keeps two: when it started an instance's removal
// (Engine.tracker: the per-instance object's annotation is the record that
// survives a restart; this covers the moments when the manager's cache has
// not seen that annotation yet, so that a reconcile right after the one
// that started a drain never counts the victim as live again), and when it
// last saw the cloud hold an instance before its boot (Engine.held).
type instanceTimes struct {
	mu sync.Mutex
	m  map[types.UID]map[string]time.Time
}

func newInstanceTimes() *instanceTimes {
	return &instanceTimes{m: map[types.UID]map[string]time.Time{}}
}

// started returns when the removal of instance id of pool started, if this
// process started it.
func (t *instanceTimes) started(pool types.UID, id string) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	at, ok := t.m[pool][id]
	return at, ok
}

// start records that the removal of instance id of pool started at at,
// keeping an earlier record.
func (t *instanceTimes) start(pool types.UID, id string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ids := t.m[pool]
	if ids == nil {
		ids = map[string]time.Time{}
		t.m[pool] = ids
	}
	if _, ok := ids[id]; !ok {
		ids[id] = at
	}
}

// mark records at for instance id of pool, replacing an earlier record.
func (t *instanceTimes) mark(pool types.UID, id string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ids := t.m[pool]
	if ids == nil {
		ids = map[string]time.Time{}
		t.m[pool] = ids
	}
	ids[id] = at
}

// retain forgets the instances of pool that are not in present.
func (t *instanceTimes) retain(pool types.UID, present map[string]bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id := range t.m[pool] {
		if !present[id] {
			delete(t.m[pool], id)
		}
	}
	if len(t.m[pool]) == 0 {
		delete(t.m, pool)
	}
}

// drop forgets instance id of pool.
func (t *instanceTimes) drop(pool types.UID, id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m[pool], id)
}

// forget drops every record of pool.
func (t *instanceTimes) forget(pool types.UID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, pool)
}

// poolMemo remembers one value per pool for this process. It only bridges
// the cache's lag behind the engine's own writes: an annotation on the pool
// is the durable record (AppliedSpecAnnotation for the spec hash last
// applied to the group, preview.ManagedCapacityAnnotation for a managed pool's
// capacity record), and a reconcile that runs before the cache shows it
// must not act on the older value.
type poolMemo[V any] struct {
	mu sync.Mutex
	m  map[types.UID]V
}

func newPoolMemo[V any]() *poolMemo[V] { return &poolMemo[V]{m: map[types.UID]V{}} }

func (p *poolMemo[V]) get(pool types.UID) (V, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.m[pool]
	return v, ok
}

func (p *poolMemo[V]) set(pool types.UID, v V) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.m[pool] = v
}

func (p *poolMemo[V]) forget(pool types.UID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.m, pool)
}
