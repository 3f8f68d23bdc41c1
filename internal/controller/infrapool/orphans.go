package infrapool

import (
	"time"

	"context"
	"fmt"
	"strings"

	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mpool-dev/mpool/internal/provider/contract"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// OrphanReleaser releases orphaned per-instance objects of one adapter's
// kind. A per-instance object's lifecycle belongs to its pool: the engine
// creates it, reports into it and, when it is deleted, drains and deletes
// its instance before removing its finalizer. OrphanReleaser only removes
// the finalizer of an object being deleted whose pool no longer exists,
// which no one else would do. It is the same for every provider.
type OrphanReleaser struct {
	// Adapter names the kinds and the finalizer. Required.
	Adapter contract.Adapter
	// Client is the manager's client (default: mgr.GetClient()).
	Client client.Client
}

// SetupWithManager registers the releaser for the adapter's per-instance
// kind with mgr. It sees only objects being deleted.
func (r *OrphanReleaser) SetupWithManager(_ context.Context, mgr ctrl.Manager, opts controller.Options) error {
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	deleting := predicate.NewPredicateFuncs(func(o client.Object) bool { return !o.GetDeletionTimestamp().IsZero() })
	return ctrl.NewControllerManagedBy(mgr).
		Named(strings.ToLower(r.Adapter.Kinds().Instance)).
		For(r.Adapter.NewInstance(), builder.WithPredicates(deleting)).
		WithOptions(opts).
		Complete(r)
}

// Reconcile implements reconcile.Reconciler.
func (r *OrphanReleaser) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.Adapter.NewInstance()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	fin := r.Adapter.Kinds().InstanceFinalizer
	if obj.GetDeletionTimestamp().IsZero() || !controllerutil.ContainsFinalizer(obj, fin) {
		return ctrl.Result{}, nil
	}
	kind := r.Adapter.Kinds().Pool
	if ref := contract.PoolOwner(obj, kind); ref != nil {
		pool := r.Adapter.NewPool()
		err := r.Client.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}, pool)
		switch {
		case err == nil && pool.GetUID() == ref.UID:
			return ctrl.Result{}, nil // the engine drains and deletes the instance
		case err != nil && !apierrors.IsNotFound(err):
			return ctrl.Result{}, fmt.Errorf("reading %s %s: %w", kind, ref.Name, err)
		}
	}
	before := obj.DeepCopyObject().(contract.InstanceObject)
	controllerutil.RemoveFinalizer(obj, fin)
	if err := r.Client.Patch(ctx, obj, client.MergeFrom(before)); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("removing the finalizer of orphaned %s %s: %w", r.Adapter.Kinds().Instance, obj.GetName(), err)
	}
	log := ctrl.LoggerFrom(ctx)
	log.Info("Released an orphaned per-instance object: its pool is gone", "kind", r.Adapter.Kinds().Instance, "name", obj.GetName())
	return ctrl.Result{}, nil
}

// MaxRetryDelay caps the per-pool retry delay after consecutive failed
// reconciles (transient cloud errors), which would otherwise double up to
// controller-runtime's 1,000 s: a cloud that answered errors for a while
// (throttling storms, a scaling activity in progress) must not leave a
// pool untouched for a quarter of an hour once it recovers.
const MaxRetryDelay = 30 * time.Second

// RateLimiter is the engine's retry policy: controller-runtime's default
// (per item 5 ms doubling, overall 10 qps with bursts of 100), with the
// per-item delay capped at MaxRetryDelay.
func RateLimiter() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, MaxRetryDelay),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}

// Setup registers everything one provider's pool kind needs with mgr: the
// engine as the pool kind's controller and the OrphanReleaser of its
// per-instance objects. opts.Client and opts.Recorder default to the
// manager's.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options, copts controller.Options) error {
	if opts.Client == nil {
		opts.Client = mgr.GetClient()
	}
	if opts.Recorder == nil && opts.Adapter != nil {
		opts.Recorder = mgr.GetEventRecorder(strings.ToLower(opts.Adapter.Kinds().Pool) + "-controller")
	}
	e, err := New(opts)
	if err != nil {
		return err
	}
	engineOpts := copts
	if engineOpts.RateLimiter == nil {
		engineOpts.RateLimiter = RateLimiter()
	}
	if err := e.SetupWithManager(ctx, mgr, engineOpts); err != nil {
		return fmt.Errorf("setting up the %s controller: %w", opts.Adapter.Kinds().Pool, err)
	}
	if err := (&OrphanReleaser{Adapter: opts.Adapter, Client: opts.Client}).SetupWithManager(ctx, mgr, copts); err != nil {
		return fmt.Errorf("setting up the %s controller: %w", opts.Adapter.Kinds().Instance, err)
	}
	return nil
}
