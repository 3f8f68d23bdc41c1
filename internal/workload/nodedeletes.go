package workload

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// NodeDeletes remembers, for a while, the Nodes this process deleted, by
// UID. A deleted Node stays in every Node cache until its watch event
// arrives, and meanwhile each pass of each controller that retires Nodes
// (the infrastructure pool engine deletes the Nodes of the instances it
// removes, mpool's MachinePool controller those of instances that left the
// providerIDList) would delete it again: a roll of 1,000 instances sent
// 2,032 Node deletes, 516 of them answered NotFound. A UID names one Node
// once, in any cluster, so a Node registered again under the same name is
// a new Node and is not skipped.
type NodeDeletes struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	deleted map[types.UID]time.Time
	// pruned is when deletes older than the TTL were last forgotten: at
	// most once per TTL, so that a burst of deletes (a roll of 10,000) does
	// not scan the whole memo on each.
	pruned time.Time
}

// NewNodeDeletes returns a memo that remembers a delete for ttl.
func NewNodeDeletes(ttl time.Duration) *NodeDeletes {
	return &NodeDeletes{ttl: ttl, now: time.Now, deleted: map[types.UID]time.Time{}}
}

// Delete calls del to delete node unless a delete of the same Node
// succeeded within the TTL, and remembers del's success. del must return
// nil for a Node that is already gone.
func (d *NodeDeletes) Delete(node *corev1.Node, del func() error) error {
	if d == nil || node.UID == "" {
		return del()
	}
	now := d.now()
	d.mu.Lock()
	at, ok := d.deleted[node.UID]
	d.mu.Unlock()
	if ok && now.Sub(at) < d.ttl {
		return nil
	}
	if err := del(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.deleted[node.UID] = now
	if now.Sub(d.pruned) >= d.ttl {
		d.pruned = now
		for uid, at := range d.deleted {
			if now.Sub(at) >= d.ttl {
				delete(d.deleted, uid)
			}
		}
	}
	return nil
}

// NodeDeletes returns the memo of the Nodes deleted through this cache's
// users (NodeDeletes).
func (c *ClusterCache) NodeDeletes() *NodeDeletes { return c.nodeDeletes }
