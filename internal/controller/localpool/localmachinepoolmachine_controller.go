package localpool

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
)

// LocalMachinePoolMachineReconciler releases orphaned
// LocalMachinePoolMachines. A LocalMachinePoolMachine's lifecycle belongs to
// its pool: the LocalMachinePool reconciler creates it, reports into it, and,
// when it is deleted, drains and deletes its instance before removing its
// finalizer. This reconciler only removes the finalizer of an object being
// deleted whose pool no longer exists, which no one else would do.
type LocalMachinePoolMachineReconciler struct {
	// Client is the manager's client.
	Client client.Client
}

// SetupWithManager registers the LocalMachinePoolMachine controller with mgr.
func (r *LocalMachinePoolMachineReconciler) SetupWithManager(_ context.Context, mgr ctrl.Manager, opts controller.Options) error {
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	deleting := predicate.NewPredicateFuncs(func(o client.Object) bool { return !o.GetDeletionTimestamp().IsZero() })
	return ctrl.NewControllerManagedBy(mgr).
		Named("localmachinepoolmachine").
		For(&infrav1.LocalMachinePoolMachine{}, builder.WithPredicates(deleting)).
		WithOptions(opts).
		Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *LocalMachinePoolMachineReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	m := &infrav1.LocalMachinePoolMachine{}
	if err := r.Client.Get(ctx, req.NamespacedName, m); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if m.DeletionTimestamp.IsZero() || !controllerutil.ContainsFinalizer(m, infrav1.LocalMachinePoolMachineFinalizer) {
		return ctrl.Result{}, nil
	}
	if ref := metav1.GetControllerOf(m); ref != nil && ref.Kind == "LocalMachinePool" {
		pool := &infrav1.LocalMachinePool{}
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: m.Namespace, Name: ref.Name}, pool)
		switch {
		case err == nil && pool.UID == ref.UID:
			return ctrl.Result{}, nil // the pool's reconciler drains and deletes the instance
		case err != nil && !apierrors.IsNotFound(err):
			return ctrl.Result{}, fmt.Errorf("reading LocalMachinePool %s: %w", ref.Name, err)
		}
	}
	before := m.DeepCopy()
	controllerutil.RemoveFinalizer(m, infrav1.LocalMachinePoolMachineFinalizer)
	if err := r.Client.Patch(ctx, m, client.MergeFrom(before)); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("removing the finalizer of orphaned LocalMachinePoolMachine %s: %w", m.Name, err)
	}
	return ctrl.Result{}, nil
}
