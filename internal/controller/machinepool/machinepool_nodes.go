package machinepool

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/internal/capi"
	"github.com/mpool-dev/mpool/internal/events"
	"github.com/mpool-dev/mpool/internal/lastwrite"
	"github.com/mpool-dev/mpool/internal/workload"
)

// UninitializedTaint is the taint a Node joins with; the controller removes
// it once the Node is matched to its pool and annotated.
const UninitializedTaint = capi.NodeUninitializedTaintKey

// reconcileNodes matches spec.providerIDList to Nodes through the workload
// cluster's providerID index and computes nodeRefs and the ready and
// available counts; it annotates matched Nodes, removes their uninitialized
// taint, and deletes Nodes this pool annotated whose providerID left the list.
func (r *Reconciler) reconcileNodes(ctx context.Context, s *scope) (ctrl.Result, error) {
	pool := s.pool
	ids := pool.Spec.ProviderIDList
	if len(ids) == 0 && len(pool.Status.NodeRefs) == 0 && !s.providerIDsFresh {
		// Nothing was provisioned yet: no need to reach the workload cluster.
		s.nodesKnown = true
		s.applyNodeStatus(nodeStatus{})
		return ctrl.Result{}, nil
	}
	key := clusterKey(s)
	nodes, err := r.ClusterCache.NodesByProviderIDs(ctx, key, ids)
	if err != nil {
		if workload.IsConnectionError(err) {
			s.workloadErr = err
			ctrl.LoggerFrom(ctx).Info("Workload cluster not reachable, Node status left as last observed", "reason", workload.ConnectionErrorReason(err))
			return ctrl.Result{RequeueAfter: workloadRetryInterval}, nil
		}
		return ctrl.Result{}, fmt.Errorf("matching Nodes to providerIDs: %w", err)
	}
	s.nodes = nodes
	s.nodesKnown = true
	st := computeNodeStatus(ids, nodes, minReady(pool.Spec.Template.Spec.MinReadySeconds), s.now)
	s.applyNodeStatus(st)
	if s.nodeRefsCut > 0 && len(s.orig.Status.NodeRefs) < MaxNodeRefs {
		r.Recorder.Eventf(pool, nil, corev1.EventTypeNormal, events.NodeRefsTruncated, events.ActionReconcile,
			"status.nodeRefs lists the first %d of %d Nodes (an object this large nears etcd's size limit); the replica counts include them all", MaxNodeRefs, s.nodeRefsCut)
	}

	s.writeAfterStatus(r.patchNodes(ctx, s, key))
	if s.providerIDsFresh {
		writes, err := r.deleteRetiredNodes(ctx, s, key)
		if err != nil {
			return ctrl.Result{RequeueAfter: st.nextAvailable}, err
		}
		s.writeAfterStatus(writes)
	}
	return ctrl.Result{RequeueAfter: st.nextAvailable}, nil
}

func clusterKey(s *scope) types.NamespacedName {
	return types.NamespacedName{Namespace: s.pool.Namespace, Name: s.pool.Spec.ClusterName}
}

func (s *scope) owner() workload.Owner {
	return workload.Owner{ClusterName: s.pool.Spec.ClusterName, Namespace: s.pool.Namespace, Kind: "MachinePool", Name: s.pool.Name}
}

func minReady(seconds *int32) time.Duration {
	if seconds == nil {
		return 0
	}
	return time.Duration(*seconds) * time.Second
}

// nodeStatus is the Node-derived part of a pool's status.
type nodeStatus struct {
	refs      []corev1.ObjectReference
	ready     int32
	available int32
	// nextAvailable is when the next Ready-but-not-yet-available Node
	// becomes available (0: none).
	nextAvailable time.Duration
}

// computeNodeStatus is the pure part of the Node sync: one nodeRef per
// providerID that has a Node (in list order), how many of those Nodes are
// Ready, and how many have been Ready for at least minReady.
func computeNodeStatus(ids []string, nodes map[string]*corev1.Node, minReady time.Duration, now time.Time) nodeStatus {
	var st nodeStatus
	if len(nodes) > 0 {
		st.refs = make([]corev1.ObjectReference, 0, len(nodes))
	}
	for _, id := range ids {
		n := nodes[id]
		if n == nil {
			continue
		}
		st.refs = append(st.refs, corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: n.Name, UID: n.UID})
		since, ready := readySince(n)
		if !ready {
			continue
		}
		st.ready++
		if wait := since.Add(minReady).Sub(now); minReady > 0 && wait > 0 {
			if st.nextAvailable == 0 || wait < st.nextAvailable {
				st.nextAvailable = wait
			}
			continue
		}
		st.available++
	}
	return st
}

// readySince reports whether n is Ready, and since when.
func readySince(n *corev1.Node) (time.Time, bool) {
	for i := range n.Status.Conditions {
		c := &n.Status.Conditions[i]
		if c.Type == corev1.NodeReady {
			return c.LastTransitionTime.Time, c.Status == corev1.ConditionTrue
		}
	}
	return time.Time{}, false
}

// MaxNodeRefs bounds status.nodeRefs. A MachinePool carries its
// providerIDList and nodeRefs in one object, which etcd refuses beyond
// 1.5 MiB: at about 7,800 Nodes the status could no longer be written at
// all, and a 10,000-instance pool never reported Ready. Beyond this many
// the list is cut (in providerIDList order) and an event says so; the
// replica counts still cover every Node, and the pool's Nodes are found by
// their annotations, not this list, when it is deleted.
const MaxNodeRefs = 5000

func (s *scope) applyNodeStatus(st nodeStatus) {
	status := &s.pool.Status
	status.NodeRefs = st.refs
	if len(st.refs) > MaxNodeRefs {
		status.NodeRefs = st.refs[:MaxNodeRefs:MaxNodeRefs]
		s.nodeRefsCut = len(st.refs)
	}
	status.ReadyReplicas = ptr.To(st.ready)
	status.AvailableReplicas = ptr.To(st.available)
	// What v1beta1 readers see as status.readyReplicas, availableReplicas
	// and unavailableReplicas.
	d := deprecatedV1Beta1(s.pool)
	d.ReadyReplicas, d.AvailableReplicas = st.ready, st.available
	d.UnavailableReplicas = max(0, s.desiredReplicas()-st.available)
}

// patchNodes returns the writes that annotate each matched Node with its
// cluster and pool and remove the uninitialized taint. Nodes another owner
// annotated are left alone.
func (r *Reconciler) patchNodes(ctx context.Context, s *scope, key types.NamespacedName) []write {
	owner := s.owner()
	want := owner.Annotations()
	var writes []write
	for _, id := range s.pool.Spec.ProviderIDList {
		n := s.nodes[id]
		if n == nil || !n.DeletionTimestamp.IsZero() {
			continue
		}
		if other, ok := workload.OwnerOf(n); ok && other != owner {
			ctrl.LoggerFrom(ctx).Info("Node is annotated with another owner, leaving it alone", "node", n.Name, "owner", other.Key())
			continue
		}
		if owner.OwnedBy(n) && !hasTaint(n, UninitializedTaint) {
			continue
		}
		memo := nodeAnnotateKey(n)
		if r.written.Pending(memo, n.ResourceVersion) {
			// Annotated from this copy already: the cache has not shown
			// the patch yet. Sending it again is one more Node write, and
			// every Node write goes to every watcher of Nodes.
			continue
		}
		writes = append(writes, func(ctx context.Context) error {
			c, err := r.ClusterCache.Client(ctx, key)
			if err != nil {
				return fmt.Errorf("annotating Node %s: %w", n.Name, err)
			}
			patched := n.DeepCopy()
			if patched.Annotations == nil {
				patched.Annotations = map[string]string{}
			}
			maps.Copy(patched.Annotations, want)
			opts := []client.MergeFromOption{}
			if hasTaint(n, UninitializedTaint) {
				patched.Spec.Taints = withoutTaint(n.Spec.Taints, UninitializedTaint)
				opts = append(opts, client.MergeFromWithOptimisticLock{}) // taints is a list: do not drop a concurrent change
			}
			switch err := c.Patch(ctx, patched, client.MergeFromWithOptions(n, opts...)); {
			case err == nil:
				// Only Pending is asked of this record: it keeps the
				// cache's trimmed copy, not the answer (a whole Node,
				// managed fields and all, thousands of them in a
				// scale-up until the Memo sweeps them).
				r.written.Wrote(memo, n.ResourceVersion, n)
			case !apierrors.IsNotFound(err):
				return fmt.Errorf("annotating Node %s: %w", n.Name, err)
			}
			return nil
		})
	}
	return writes
}

// nodeAnnotateKey is the key of the patch that annotates n (and removes its
// uninitialized taint) in Reconciler.written.
func nodeAnnotateKey(n *corev1.Node) lastwrite.Key {
	return lastwrite.Key{UID: n.UID, Part: "Node annotations"}
}

// deleteRetiredNodes returns the deletes of the Nodes this pool annotated
// whose providerID is no longer in the (freshly synced) providerIDList. They
// run after the pool's status, as a batch: a roll retires a whole wave of
// Nodes at once, and deleting them first held the status back by seconds.
func (r *Reconciler) deleteRetiredNodes(ctx context.Context, s *scope, key types.NamespacedName) ([]write, error) {
	owned, err := r.ClusterCache.NodesOwnedBy(ctx, key, s.owner())
	if err != nil {
		return nil, fmt.Errorf("listing the pool's Nodes: %w", err)
	}
	// s.nodes has a key for every listed providerID that has a Node, so an
	// owned Node whose providerID is listed is always found there.
	var retired []*corev1.Node
	for _, n := range owned {
		if _, listed := s.nodes[n.Spec.ProviderID]; !listed && n.DeletionTimestamp.IsZero() {
			retired = append(retired, n)
		}
	}
	if len(retired) == 0 {
		return nil, nil
	}
	c, err := r.ClusterCache.Client(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("deleting retired Nodes: %w", err)
	}
	writes := make([]write, 0, len(retired))
	for _, n := range retired {
		writes = append(writes, func(ctx context.Context) error {
			if err := r.deleteNode(ctx, c, n); err != nil {
				r.Recorder.Eventf(s.pool, nil, corev1.EventTypeWarning, events.NodeDeleteFailed, events.ActionDelete, "Deleting Node %s: %v", n.Name, err)
				return err
			}
			ctrl.LoggerFrom(ctx).Info("Deleted a Node whose instance left the pool", "node", n.Name, "providerID", n.Spec.ProviderID)
			r.Recorder.Eventf(s.pool, nil, corev1.EventTypeNormal, events.NodeDeleted, events.ActionDelete, "Deleted Node %s: its instance %s left the pool", n.Name, n.Spec.ProviderID)
			return nil
		})
	}
	return writes, nil
}

// deleteNode deletes n, only if it is still the same Node (UID), unless
// this process deleted it a moment ago (workload.NodeDeletes).
func (r *Reconciler) deleteNode(ctx context.Context, c client.Client, n *corev1.Node) error {
	return r.ClusterCache.NodeDeletes().Delete(n, func() error {
		uid := n.UID
		// n may be shared with the cache: delete through a fresh object.
		err := c.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name}}, client.Preconditions{UID: &uid})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("deleting Node %s: %w", n.Name, err)
		}
		return nil
	})
}

func hasTaint(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

func withoutTaint(taints []corev1.Taint, key string) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range taints {
		if t.Key != key {
			out = append(out, t)
		}
	}
	return out
}
