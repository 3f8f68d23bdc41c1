package workload

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NodeByProviderID returns the Node of the workload cluster of cluster whose
// spec.providerID is providerID, or nil when there is none. It is served from
// the cache's providerID index; the Node is the caller's to modify. Should
// several Nodes carry the same providerID, the oldest wins.
func (c *ClusterCache) NodeByProviderID(ctx context.Context, cluster types.NamespacedName, providerID string) (*corev1.Node, error) {
	a, err := c.accessor(ctx, cluster)
	if err != nil {
		return nil, err
	}
	nodes, err := a.byIndex(ctx, rawProviderIDIndex, providerID, client.MatchingFields{NodeProviderIDIndex: providerID})
	if err != nil {
		return nil, fmt.Errorf("looking up the Node with providerID %s: %w", providerID, err)
	}
	if len(nodes) == 0 {
		return nil, nil
	}
	return oldestOf(nodes).DeepCopy(), nil
}

// NodesByProviderIDs returns, for each providerID of ids that has a Node in
// the workload cluster of cluster, that Node. It makes no API request: each
// id is one lookup in the cache's providerID index. The Nodes are shared with
// the cache and must be treated as read-only (DeepCopy before modifying).
func (c *ClusterCache) NodesByProviderIDs(ctx context.Context, cluster types.NamespacedName, ids []string) (map[string]*corev1.Node, error) {
	a, err := c.accessor(ctx, cluster)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*corev1.Node, len(ids))
	for _, id := range ids {
		if id == "" {
			continue
		}
		n, err := a.nodeByProviderID(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("looking up the Node with providerID %s: %w", id, err)
		}
		if n != nil {
			out[id] = n
		}
	}
	return out, nil
}

// nodeByProviderID returns the (oldest) Node with providerID id, shared
// with the cache, or nil. It is the hot path of NodesByProviderIDs: one
// index lookup, no copies.
func (a *accessor) nodeByProviderID(ctx context.Context, id string) (*corev1.Node, error) {
	if a.indexer == nil {
		nodes, err := a.byIndex(ctx, rawProviderIDIndex, id, client.MatchingFields{NodeProviderIDIndex: id})
		if err != nil || len(nodes) == 0 {
			return nil, err
		}
		return oldestOf(nodes), nil
	}
	objs, err := a.indexer.ByIndex(rawProviderIDIndex, id)
	if err != nil {
		return nil, err
	}
	var best *corev1.Node
	for _, o := range objs {
		if n, ok := o.(*corev1.Node); ok && (best == nil || older(n, best)) {
			best = n
		}
	}
	return best, nil
}

// NodesOwnedBy returns the Nodes of the workload cluster of cluster that
// carry owner's annotations (see Owner.Annotations), from the cache's owner
// index. The Nodes are shared with the cache and must be treated as
// read-only (DeepCopy before modifying).
func (c *ClusterCache) NodesOwnedBy(ctx context.Context, cluster types.NamespacedName, owner Owner) ([]*corev1.Node, error) {
	a, err := c.accessor(ctx, cluster)
	if err != nil {
		return nil, err
	}
	nodes, err := a.byIndex(ctx, rawOwnerIndex, owner.Key())
	if err != nil {
		return nil, fmt.Errorf("listing the Nodes owned by %s: %w", owner.Key(), err)
	}
	out := nodes[:0]
	for _, n := range nodes {
		if owner.OwnedBy(n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// byIndex returns the Nodes whose index value is key, straight from the
// informer's store. Without access to the store it lists from the cache,
// with the given options (nil: all Nodes, filtered by the caller).
func (a *accessor) byIndex(ctx context.Context, index, key string, fallback ...client.ListOption) ([]*corev1.Node, error) {
	if a.indexer != nil {
		objs, err := a.indexer.ByIndex(index, key)
		if err != nil {
			return nil, err
		}
		out := make([]*corev1.Node, 0, len(objs))
		for _, o := range objs {
			if n, ok := o.(*corev1.Node); ok {
				out = append(out, n)
			}
		}
		return out, nil
	}
	list := &corev1.NodeList{}
	if err := a.cache.List(ctx, list, append(fallback, client.UnsafeDisableDeepCopy)...); err != nil {
		return nil, err
	}
	out := make([]*corev1.Node, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}

// oldestOf returns the oldest of nodes (by creation time, then name).
func oldestOf(nodes []*corev1.Node) *corev1.Node {
	best := nodes[0]
	for _, n := range nodes[1:] {
		if older(n, best) {
			best = n
		}
	}
	return best
}

// older reports whether a was created before b (by name on a tie).
func older(a, b *corev1.Node) bool {
	return a.CreationTimestamp.Before(&b.CreationTimestamp) ||
		(a.CreationTimestamp.Equal(&b.CreationTimestamp) && a.Name < b.Name)
}

// stripManagedFields is the cache's transform that drops managed fields.
var stripManagedFields = cache.TransformStripManagedFields()

// trimNode is the Node cache's transform: it keeps of a Node what mpool
// reads (metadata without managed fields, the spec, the conditions and the
// kubelet's version) and drops the rest of its status. A real kubelet
// reports up to 50 container images, the capacity and allocatable
// resources and the attached volumes: most of a Node's size, held once per
// Node of every workload cluster. Nodes are only ever patched (merge
// patches of the changed fields) or deleted, never updated whole from the
// cache, so what is dropped here is never written back.
func trimNode(obj any) (any, error) {
	obj, err := stripManagedFields(obj)
	if err != nil {
		return obj, err
	}
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	n.Status = corev1.NodeStatus{
		Phase:      n.Status.Phase,
		Conditions: n.Status.Conditions,
		NodeInfo:   corev1.NodeSystemInfo{KubeletVersion: n.Status.NodeInfo.KubeletVersion},
	}
	return n, nil
}
