package machinepool

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/internal/events"
	"github.com/mpool-dev/mpool/internal/workload"
)

// DefaultNodeDeletionTimeout is how long the Nodes of a deleted pool are
// retried when spec.template.spec.nodeDeletionTimeout is unset.
const DefaultNodeDeletionTimeout = 10 * time.Second

// nodeDeletionRetry is how soon a failed Node deletion is retried.
const nodeDeletionRetry = 2 * time.Second

// reconcileDelete takes a deleted pool apart in order: the bootstrap config
// and the infrastructure pool (waiting until both are gone), the pool
// Machines (each deleting its infrastructure machine), the remaining Nodes
// (retried up to the node deletion timeout), and finally the finalizer.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	pool := s.pool
	if !controllerutil.ContainsFinalizer(pool, clusterv1.MachinePoolFinalizer) {
		return ctrl.Result{}, nil
	}

	remaining, err := r.deleteExternal(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(remaining) > 0 {
		s.deleteStep = "Waiting for " + strings.Join(remaining, " and ") + " to be deleted"
		return ctrl.Result{}, nil
	}

	left, err := r.deleteMachines(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	if left > 0 {
		s.deleteStep = fmt.Sprintf("Waiting for %d Machines to be deleted", left)
		return ctrl.Result{}, nil
	}

	if done, res := r.deleteNodes(ctx, s); !done {
		return res, nil
	}

	controllerutil.RemoveFinalizer(pool, clusterv1.MachinePoolFinalizer)
	ctrl.LoggerFrom(ctx).Info("MachinePool deleted")
	r.Recorder.Eventf(pool, nil, corev1.EventTypeNormal, events.Deleted, events.ActionDelete, "%s", "Deleted the bootstrap config, the infrastructure pool, the Machines and the Nodes")
	return ctrl.Result{}, nil
}

// deleteExternal deletes the bootstrap config and the infrastructure pool
// and returns those that still exist.
func (r *Reconciler) deleteExternal(ctx context.Context, s *scope) ([]string, error) {
	pool := s.pool
	type step struct {
		ref    *clusterv1.ContractVersionedObjectReference
		reason string
	}
	steps := []step{
		{&pool.Spec.Template.Spec.Bootstrap.ConfigRef, events.DeletingBootstrapConfig},
		{&pool.Spec.Template.Spec.InfrastructureRef, events.DeletingInfrastructure},
	}
	var remaining []string
	var errs []error
	for _, st := range steps {
		if st.ref.Name == "" {
			continue
		}
		apiVersion, err := r.refAPIVersion(ctx, *st.ref)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := r.ensureWatch(ctx, apiVersion, st.ref.Kind, r.externalToMachinePools); err != nil {
			errs = append(errs, err)
			continue
		}
		obj, err := r.getExternal(ctx, apiVersion, *st.ref, pool.Namespace)
		if err != nil {
			if !apierrors.IsNotFound(err) {
				errs = append(errs, err)
			}
			continue
		}
		remaining = append(remaining, fmt.Sprintf("%s %s", obj.GetKind(), obj.GetName()))
		if obj.GetDeletionTimestamp() != nil {
			continue
		}
		if err := r.Client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting %s %s: %w", obj.GetKind(), klog.KObj(obj), err))
			continue
		}
		ctrl.LoggerFrom(ctx).Info("Deleted a referenced object", "kind", obj.GetKind(), "name", obj.GetName())
		r.Recorder.Eventf(pool, nil, corev1.EventTypeNormal, st.reason, events.ActionDelete, "Deleted %s %s", obj.GetKind(), obj.GetName())
	}
	return remaining, errors.Join(errs...)
}

// deleteMachines deletes the pool's Machines, finishes the deletion of
// those already deleting, and returns how many are left.
func (r *Reconciler) deleteMachines(ctx context.Context, s *scope) (int, error) {
	machines, err := r.listPoolMachines(ctx, s.pool)
	if err != nil {
		return 0, err
	}
	var errs []error
	var deletes []write
	var issued atomic.Int32
	for i := range machines {
		m := &machines[i]
		if apiVersion, err := r.refAPIVersion(ctx, m.Spec.InfrastructureRef); err != nil {
			errs = append(errs, err)
		} else if err := r.ensureMachineWatch(ctx, apiVersion, m.Spec.InfrastructureRef.Kind); err != nil {
			errs = append(errs, err)
		}
		if !m.DeletionTimestamp.IsZero() {
			continue
		}
		deletes = append(deletes, func(ctx context.Context) error {
			if err := r.Client.Delete(ctx, m); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting Machine %s: %w", klog.KObj(m), err)
			}
			issued.Add(1)
			return nil
		})
	}
	// The Machine events bring the pool back for what a batch leaves.
	if _, err := writeBatch(ctx, deletes); err != nil {
		errs = append(errs, err)
	}
	if n := issued.Load(); n > 0 {
		r.Recorder.Eventf(s.pool, nil, corev1.EventTypeNormal, events.DeletingMachines, events.ActionDelete, "Deleting %d Machines", n)
	}
	if len(errs) > 0 {
		return len(machines), errors.Join(errs...)
	}
	// Machines deleted just now are finalized once their deletion shows in
	// the cache; those already deleting are finalized here.
	_, err = writeBatch(ctx, r.finalizeMachines(s, machines))
	return len(machines), err
}

// deleteNodes deletes the Nodes the pool annotated or references. It
// reports done once they are deleted, or once the node deletion timeout
// (counted from the pool's deletion) has passed with them unreachable.
func (r *Reconciler) deleteNodes(ctx context.Context, s *scope) (bool, ctrl.Result) {
	if s.cluster == nil {
		return true, ctrl.Result{}
	}
	err := r.deletePoolNodes(ctx, s)
	if err == nil {
		return true, ctrl.Result{}
	}
	pool := s.pool
	timeout := DefaultNodeDeletionTimeout
	if d := pool.Spec.Template.Spec.Deletion.NodeDeletionTimeoutSeconds; d != nil {
		timeout = time.Duration(*d) * time.Second
	}
	if timeout > 0 {
		deadline := pool.DeletionTimestamp.Add(timeout)
		if !s.now.Before(deadline) {
			ctrl.LoggerFrom(ctx).Info("Giving up deleting the pool's Nodes: node deletion timeout passed", "timeout", timeout, "error", err.Error())
			r.Recorder.Eventf(pool, nil, corev1.EventTypeWarning, events.NodeDeletionTimedOut, events.ActionDelete,
				"Could not delete the pool's Nodes within %s, leaving them: %v", timeout, err)
			return true, ctrl.Result{}
		}
		s.deleteStep = "Retrying the deletion of the pool's Nodes: " + err.Error()
		return false, ctrl.Result{RequeueAfter: min(nodeDeletionRetry, deadline.Sub(s.now))}
	}
	s.deleteStep = "Retrying the deletion of the pool's Nodes: " + err.Error()
	return false, ctrl.Result{RequeueAfter: nodeDeletionRetry}
}

// deletePoolNodes deletes every Node the pool annotated, plus those in
// status.nodeRefs (same UID).
func (r *Reconciler) deletePoolNodes(ctx context.Context, s *scope) error {
	key := clusterKey(s)
	owned, err := r.ClusterCache.NodesOwnedBy(ctx, key, s.owner())
	if err != nil {
		if workload.IsConnectionError(err) && len(s.pool.Status.NodeRefs) == 0 {
			// Nothing was ever matched and the cluster is gone: nothing to delete.
			return nil
		}
		return err
	}
	c, err := r.ClusterCache.Client(ctx, key)
	if err != nil {
		return err
	}
	byName := make(map[string]*corev1.Node, len(owned))
	for _, n := range owned {
		byName[n.Name] = n
	}
	for _, ref := range s.pool.Status.NodeRefs {
		if _, ok := byName[ref.Name]; ok {
			continue
		}
		n := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: ref.Name}, n); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("reading Node %s: %w", ref.Name, err)
		}
		if n.UID == ref.UID {
			byName[n.Name] = n
		}
	}
	var errs []error
	deleted := 0
	for _, n := range byName {
		if !n.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.deleteNode(ctx, c, n); err != nil {
			errs = append(errs, err)
			continue
		}
		deleted++
	}
	if deleted > 0 {
		r.Recorder.Eventf(s.pool, nil, corev1.EventTypeNormal, events.DeletingNodes, events.ActionDelete, "Deleted %d Nodes of the pool", deleted)
	}
	return errors.Join(errs...)
}
