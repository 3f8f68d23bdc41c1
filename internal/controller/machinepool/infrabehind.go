package machinepool

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// InfraStatusWait bounds how long a MachinePool's status waits for its
// infrastructure pool's status to catch up with the pool's spec.
//
// A provider writes its pool's spec and status in two requests (the status
// is a subresource): mpool's engine writes spec.providerIDList, then the
// status that observed it (status.replicas, status.observedGeneration).
// The MachinePool woken by the first write read a new providerIDList beside
// the old replica count, and wrote a status from the two (the new Nodes
// counted, the replicas not), which the second write's reconcile wrote
// again a few milliseconds later: one MachinePool status write for nothing
// on a scale-up's way to Running, and on a busy API server one more serial
// write (70–130 ms at a thousand pools) before it. (A new pool's status
// does not change between the two writes: it was written once already.)
// When the infrastructure pool says which generation its status observed
// (status.observedGeneration, older than metadata.generation), the
// MachinePool copies the spec (providerIDList) and leaves its status to
// the reconcile that the status write brings — for at most
// InfraStatusWait, in case the provider does not write it (stopped, or
// paused).
const InfraStatusWait = 2 * time.Second

// infraBehind remembers, per MachinePool, since when its infrastructure
// pool's status has been behind the infrastructure pool's generation, so
// that the MachinePool's status waits for it at most InfraStatusWait. The
// zero value is ready to use.
type infraBehind struct {
	mu    sync.Mutex
	since map[types.NamespacedName]behindSince
}

// behindSince is the infrastructure pool (its UID) and generation whose
// status a MachinePool awaits, and when a reconcile first found it behind.
type behindSince struct {
	uid        types.UID
	generation int64
	at         time.Time
}

// statusBehind reports whether obj's status observed an older generation
// than its own: status.observedGeneration is set (a provider that does not
// keep it is never waited for) and smaller than metadata.generation.
func statusBehind(obj *unstructured.Unstructured) bool {
	g, found, err := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	return err == nil && found && g > 0 && g < obj.GetGeneration()
}

// wait returns how much longer, at now, the status of pool computed from
// its infrastructure pool obj may wait for obj's status: zero when the
// status is not behind (or was waited for long enough), and the time left
// of InfraStatusWait otherwise.
func (b *infraBehind) wait(pool types.NamespacedName, obj *unstructured.Unstructured, now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !statusBehind(obj) {
		delete(b.since, pool)
		return 0
	}
	s, ok := b.since[pool]
	if !ok || s.uid != obj.GetUID() || s.generation != obj.GetGeneration() {
		if b.since == nil {
			b.since = map[types.NamespacedName]behindSince{}
		}
		s = behindSince{uid: obj.GetUID(), generation: obj.GetGeneration(), at: now}
		b.since[pool] = s
	}
	if left := InfraStatusWait - now.Sub(s.at); left > 0 {
		return left
	}
	return 0
}

// forget drops what is remembered for pool (it is gone).
func (b *infraBehind) forget(pool types.NamespacedName) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.since, pool)
}
