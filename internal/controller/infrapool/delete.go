package infrapool

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/events"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// reconcileDelete tears a pool down: every instance's Node is cordoned and
// drained (bounded by nodeDrainTimeout), the group is deleted, and once the
// cloud says it is gone the Nodes and per-instance objects are removed and
// the pool's finalizer dropped.
func (e *Engine) reconcileDelete(ctx context.Context, s *pass) error {
	if !controllerutil.ContainsFinalizer(s.pool, e.a.Kinds().PoolFinalizer) {
		return nil
	}
	owner, err := e.ownerOf(ctx, s.pool)
	if err != nil {
		return err
	}
	s.owner = owner
	if owner != nil {
		s.cluster = types.NamespacedName{Namespace: owner.Namespace, Name: owner.Spec.ClusterName}
	}

	var g *scalegroup.Group
	switch {
	case s.refErr != nil:
		// The recorded reference is unreadable: deleting by a guess could
		// miss the group, or hit another. Keep the finalizer and say so.
		s.invalid = s.refErr
		return nil
	case !s.refKnown:
		// No reference was ever recorded, so no group was ever created:
		// the engine records it before its first Apply.
		log.FromContext(ctx).V(1).Info("No scale group was placed for this pool")
	default:
		var err error
		g, err = e.sg.Get(ctx, s.group)
		switch {
		case scalegroup.IsNotFound(err):
			g = nil
		case err != nil:
			return e.cloudError(ctx, s, events.ActionObserve, fmt.Errorf("reading scale group %s: %w", s.group, err))
		default:
			s.cloud = g
		}
	}
	s.observed = true
	if s.objects, err = e.instanceObjects(ctx, s.pool); err != nil {
		return err
	}
	if owner != nil {
		e.readDeletionNodes(ctx, s)
	}

	if g != nil {
		setDeletingCondition(s, fmt.Sprintf("Deleting scale group %s and its %d instances", s.group, len(g.Instances)))
		s.requeueAfter(e.timing.Converging)
		if err := e.deleteGroup(ctx, s); err != nil {
			return err
		}
		return e.deleteNodesOfDeletedInstances(ctx, s)
	}

	setDeletingCondition(s, fmt.Sprintf("Scale group %s is gone", s.group))
	objects := valuesOf(s.objects)
	err = e.parallel(ctx, len(objects), func(ctx context.Context, i int) error {
		return e.releaseInstanceObject(ctx, s, objects[i], true)
	})
	if err != nil {
		return err
	}
	e.tracker.forget(s.pool.GetUID())
	e.held.forget(s.pool.GetUID())
	e.applied.forget(s.pool.GetUID())
	if e.pausedSince != nil {
		e.pausedSince.forget(s.pool.GetUID())
	}
	e.managed.forget(s.pool.GetUID())
	e.status.forget(s.pool.GetUID())
	controllerutil.RemoveFinalizer(s.pool, e.a.Kinds().PoolFinalizer)
	log.FromContext(ctx).Info("Scale group deleted", "group", s.group.String())
	e.rec.Eventf(s.pool, nil, corev1.EventTypeNormal, events.ScaleGroupDeleted, events.ActionDelete, "Scale group %s is deleted", s.group)
	return nil
}

// readDeletionNodes reads the Nodes of the group's instances and of the
// per-instance objects. A workload cluster that cannot be reached (it may be
// deleted with the pool) means nothing is drained and no Node is deleted.
func (e *Engine) readDeletionNodes(ctx context.Context, s *pass) {
	var ids []string
	for _, in := range s.instances() {
		ids = append(ids, in.ProviderID)
	}
	for _, obj := range s.objects {
		ids = append(ids, e.a.ReadInstance(obj).ProviderID)
	}
	nodes, err := e.w.NodesByProviderIDs(ctx, s.cluster, ids)
	if err != nil {
		log.FromContext(ctx).Info("Deleting without draining: the workload cluster's Nodes cannot be read", "error", err.Error())
		s.nodesErr = err
		return
	}
	s.nodes, s.nodesKnown = nodes, true
}

// deleteGroup drains every instance that has a Node and, once all are
// drained (or their drains timed out), deletes the group.
func (e *Engine) deleteGroup(ctx context.Context, s *pass) error {
	if op := s.cloud.Operation; op != nil && op.Type == scalegroup.OperationDelete {
		return nil
	}
	var (
		mu      sync.Mutex
		pending int
	)
	var draining []scalegroup.Instance
	if s.nodesKnown {
		for _, in := range s.cloud.Instances {
			if in.State != scalegroup.StateDeleting && s.nodes[in.ProviderID] != nil {
				draining = append(draining, in)
			}
		}
	}
	err := e.parallel(ctx, len(draining), func(ctx context.Context, i int) error {
		ready, err := e.prepareRemoval(ctx, s, draining[i], "PoolDeleted", &mu)
		if !ready || err != nil {
			mu.Lock()
			pending++
			mu.Unlock()
		}
		return err
	})
	if err != nil || pending > 0 {
		return err
	}
	if err := e.sg.Delete(ctx, s.group); err != nil {
		return e.cloudError(ctx, s, events.ActionDelete, fmt.Errorf("deleting scale group %s: %w", s.group, err))
	}
	log.FromContext(ctx).Info("Deleting scale group", "group", s.group.String())
	e.rec.Eventf(s.pool, nil, corev1.EventTypeNormal, events.ScaleGroupDeleting, events.ActionDelete, "Deleting scale group %s", s.group)
	return nil
}

// deleteNodesOfDeletedInstances deletes the Nodes of instances the cloud is
// deleting.
func (e *Engine) deleteNodesOfDeletedInstances(ctx context.Context, s *pass) error {
	if !s.nodesKnown {
		return nil
	}
	var nodes []*corev1.Node
	for _, in := range s.cloud.Instances {
		if node := s.nodes[in.ProviderID]; node != nil && in.State == scalegroup.StateDeleting {
			nodes = append(nodes, node)
		}
	}
	return e.parallel(ctx, len(nodes), func(ctx context.Context, i int) error {
		return e.deleteWorkloadNode(ctx, s, nodes[i])
	})
}

func setDeletingCondition(s *pass, msg string) {
	conds := s.pool.GetConditions()
	for _, t := range []string{infrav1.ScaleGroupReadyCondition, clusterv1.ReadyCondition} {
		meta.SetStatusCondition(&conds, metav1.Condition{
			Type: t, Status: metav1.ConditionFalse, Reason: infrav1.ScaleGroupDeletingReason, Message: msg,
			ObservedGeneration: s.pool.GetGeneration(), LastTransitionTime: metav1.NewTime(s.now),
		})
	}
	s.pool.SetConditions(conds)
}

func valuesOf[K comparable, V any](m map[K]V) []V {
	out := make([]V, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
