// Package lastwrite remembers a controller's last write to each object
// until its cache shows it.
//
// A controller reconciles from its cache, and the cache learns of the
// controller's own writes a moment after they are made. A reconcile in that
// moment sees the object as it was before the write and computes the same
// write again: a merge patch repeats it (one more request that carries no new
// state), a patch locked on the cached resourceVersion conflicts (a request
// and a requeue, and the new state waits for the cache), and a create is
// refused as AlreadyExists. A Memo records each write's answer (the object
// as the API server left it) with the resourceVersion of the copy it was
// computed from: while the cache still shows that copy, the caller works
// from the answer instead, as if the cache had caught up. Any other
// resourceVersion — the cache caught up, or someone else wrote — forgets
// the record, and a record older than the Memo's TTL is not trusted.
package lastwrite

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultTTL is how long a write is trusted to reach the cache.
const DefaultTTL = 10 * time.Second

// Key names one kind of write (Part: "status", "create", ...) to one object.
// For a create, UID is that of the object the created one is made from.
type Key struct {
	UID  types.UID
	Part string
}

// Memo is safe for concurrent use; the zero Memo is ready, with DefaultTTL
// and the real clock.
type Memo struct {
	// TTL bounds how long a write is trusted to be on its way to the
	// cache (0: DefaultTTL).
	TTL time.Duration
	// Clock is the time source (nil: the real clock).
	Clock clock.PassiveClock

	mu      sync.Mutex
	entries map[Key]entry
	// swept is the number of records after the last sweep of the expired
	// ones (records of objects that were not looked at again).
	swept int
}

type entry struct {
	// stale are the resourceVersions of the copies the cache may still
	// show: the one the first write was computed from and those the
	// writes made since left.
	stale []string
	obj   client.Object
	at    time.Time
}

// Wrote records that the write key, computed from the copy at
// resourceVersion base ("" for a create: no copy), left the object as obj
// (the API server's answer; the Memo keeps it and never changes it).
func (m *Memo) Wrote(key Key, base string, obj client.Object) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil {
		m.entries = map[Key]entry{}
	}
	stale := []string{base}
	if e, ok := m.entries[key]; ok && base != "" && e.obj.GetResourceVersion() == base {
		// Written from the answer of the last write: the cache may show
		// any of the copies before it still.
		stale = append(slices.Clone(e.stale), base)
	}
	now := m.now()
	m.entries[key] = entry{stale: stale, obj: obj, at: now}
	if len(m.entries) > max(1024, 2*m.swept) {
		for k, e := range m.entries {
			if now.Sub(e.at) >= m.ttl() {
				delete(m.entries, k)
			}
		}
		m.swept = len(m.entries)
	}
}

// Latest returns a copy of the object as the last write key left it when
// the cache's copy, at resourceVersion rv, predates that write; nil when
// the cache shows it (or something newer), and then the record is
// forgotten.
func (m *Memo) Latest(key Key, rv string) client.Object {
	obj := m.pending(key, rv)
	if obj == nil {
		return nil
	}
	return obj.DeepCopyObject().(client.Object)
}

// Pending reports whether the last write key has not reached the cache,
// whose copy is at resourceVersion rv ("" for a create: the cache has no
// copy): Latest without the copy, for callers that only skip the write.
func (m *Memo) Pending(key Key, rv string) bool {
	return m.pending(key, rv) != nil
}

// pending returns the Memo's own copy of the object the last write key
// left, when the cache's copy at rv predates it; else nil, forgetting the
// record.
func (m *Memo) pending(key Key, rv string) client.Object {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[key]
	if !ok {
		return nil
	}
	if !slices.Contains(e.stale, rv) || m.now().Sub(e.at) >= m.ttl() {
		delete(m.entries, key)
		return nil
	}
	return e.obj
}

// Forget drops the record of the write key.
func (m *Memo) Forget(key Key) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.entries, key)
}

// Len is the number of records kept.
func (m *Memo) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.entries)
}

func (m *Memo) ttl() time.Duration {
	if m.TTL <= 0 {
		return DefaultTTL
	}
	return m.TTL
}

func (m *Memo) now() time.Time {
	if m.Clock == nil {
		return time.Now()
	}
	return m.Clock.Now()
}
