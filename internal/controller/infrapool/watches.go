package infrapool

import (
	"context"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/internal/bootstrap"
	"github.com/mpool-dev/mpool/internal/capi"
	"github.com/mpool-dev/mpool/internal/controller/priority"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/workload"
)

// SetupWithManager registers the engine as the controller of the adapter's
// pool kind. Besides the pools it watches their per-instance objects, the
// owner MachinePools, their Machines, bootstrap data Secrets, Clusters
// (pausing) and, when the Workload offers it, the workload clusters' Nodes.
func (e *Engine) SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, e.a.NewInstance(), e.providerIDIndex(), func(o client.Object) []string {
		if id := e.a.ReadInstance(o.(contract.InstanceObject)).ProviderID; id != "" {
			return []string{id}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, e.a.NewInstance(), e.poolOwnerIndex(), func(o client.Object) []string {
		if ref := contract.PoolOwner(o, e.a.Kinds().Pool); ref != nil {
			return []string{ref.Name}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &clusterv1.Machine{}, e.machineIndex(), func(o client.Object) []string {
		m := o.(*clusterv1.Machine)
		pool, ok := m.Labels[clusterv1.MachinePoolNameLabel]
		if !ok || m.Spec.InfrastructureRef.Kind != e.a.Kinds().Instance {
			return nil
		}
		return []string{pool}
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &clusterv1.MachinePool{}, e.bootstrapSecretIndex(), func(o client.Object) []string {
		mp := o.(*clusterv1.MachinePool)
		name := ptr.Deref(mp.Spec.Template.Spec.Bootstrap.DataSecretName, "")
		if name == "" || mp.Spec.Template.Spec.InfrastructureRef.Kind != e.a.Kinds().Pool {
			return nil
		}
		return []string{name}
	}); err != nil {
		return err
	}

	e.bulk = priority.NewTracker()
	e.bulk.Hold = e.hold
	b := ctrl.NewControllerManagedBy(mgr).
		Named(strings.ToLower(e.a.Kinds().Pool)).
		For(e.a.NewPool(), builder.WithPredicates(changed(poolChanged))).
		// Any other annotation changed: a reconcile, behind the pools with
		// work.
		Watches(e.a.NewPool(), priority.Low(&handler.EnqueueRequestForObject{}), builder.WithPredicates(predicate.Funcs{
			CreateFunc:  func(event.CreateEvent) bool { return false },
			DeleteFunc:  func(event.DeleteEvent) bool { return false },
			GenericFunc: func(event.GenericEvent) bool { return false },
			UpdateFunc: func(ev event.UpdateEvent) bool {
				return ev.ObjectOld != nil && ev.ObjectNew != nil &&
					!equalAnnotations(ev.ObjectOld, ev.ObjectNew, poolOwnAnnotations...) &&
					!workAnnotationsChanged(ev.ObjectOld, ev.ObjectNew, poolOwnAnnotations...)
			},
		})).
		// Every owner: the pool's reference is not the controller's
		// (contract.PoolOwner). Their creation is this engine's own bulk
		// work, seen again (priority.LowCreates).
		Watches(e.a.NewInstance(), priority.LowCreates(handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), e.a.NewPool())),
			builder.WithPredicates(changed(func(o, n client.Object) bool {
				return !equalAnnotations(o, n, preview.DrainStartedAnnotation) ||
					!o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp())
			}))).
		Watches(&clusterv1.MachinePool{}, handler.EnqueueRequestsFromMapFunc(e.machinePoolToPool),
			builder.WithPredicates(changed(func(o, n client.Object) bool {
				return o.GetGeneration() != n.GetGeneration() || !equalAnnotations(o, n, "")
			}))).
		// A Machine created is the MachinePool controller's bulk work.
		Watches(&clusterv1.Machine{}, priority.LowCreates(handler.EnqueueRequestsFromMapFunc(e.machineToPool)),
			builder.WithPredicates(changed(func(o, n client.Object) bool {
				return !equalAnnotations(o, n, "") || !o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp())
			}))).
		// A token rotation alone (see "Bootstrap data" in the package doc)
		// wakes no pool: at a thousand pools at rest with a 15-minute token
		// it was a reconcile and a cloud read every 7.5 minutes per pool.
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(e.secretToPools),
			builder.WithPredicates(changed(bootstrapDataChanged))).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(e.clusterToPools),
			builder.WithPredicates(changed(func(o, n client.Object) bool {
				oc, nc := o.(*clusterv1.Cluster), n.(*clusterv1.Cluster)
				return oc.Spec.Paused != nc.Spec.Paused ||
					preview.HasAnnotation(o.GetAnnotations(), clusterv1.PausedAnnotation) != preview.HasAnnotation(n.GetAnnotations(), clusterv1.PausedAnnotation) ||
					oc.Spec.InfrastructureRef != nc.Spec.InfrastructureRef || oc.Spec.ControlPlaneRef != nc.Spec.ControlPlaneRef
			}))).
		WithOptions(e.bulk.Watch(opts))
	if infra := e.a.NewInfraCluster(); infra != nil {
		// A pool waiting for its placement object goes on when it appears.
		b = b.Watches(infra, handler.EnqueueRequestsFromMapFunc(e.infraClusterToPools),
			builder.WithPredicates(changed(func(o, n client.Object) bool { return o.GetGeneration() != n.GetGeneration() })))
	}
	if nw, ok := e.w.(NodeWatcher); ok {
		b = b.WatchesRawSource(nw.NodeSource(e.nodeToPools))
	}
	return b.Complete(e)
}

func (e *Engine) providerIDIndex() string {
	return "infrapool.mpool.dev/" + strings.ToLower(e.a.Kinds().Instance) + ".providerID"
}

// poolOwnerIndex indexes the per-instance objects by the name of the pool
// that controls them: a pass lists its own pool's objects, not every one
// of its namespace.
func (e *Engine) poolOwnerIndex() string {
	return "infrapool.mpool.dev/" + strings.ToLower(e.a.Kinds().Instance) + ".pool"
}

// machineIndex indexes the Machines of the adapter's per-instance kind by
// their pool-name label.
func (e *Engine) machineIndex() string {
	return "infrapool.mpool.dev/" + strings.ToLower(e.a.Kinds().Instance) + ".machinePool"
}

func (e *Engine) bootstrapSecretIndex() string {
	return "infrapool.mpool.dev/" + strings.ToLower(e.a.Kinds().Pool) + ".bootstrapDataSecret"
}

// machinePoolToPool maps a MachinePool to its infra pool, when it is of the
// adapter's kind.
func (e *Engine) machinePoolToPool(_ context.Context, o client.Object) []reconcile.Request {
	mp, ok := o.(*clusterv1.MachinePool)
	if !ok {
		return nil
	}
	ref := mp.Spec.Template.Spec.InfrastructureRef
	if ref.Kind != e.a.Kinds().Pool || ref.Name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: mp.Namespace, Name: ref.Name}}}
}

// machineToPool maps a pool Machine to its MachinePool's infra pool. The
// Machine's controller is its MachinePool (the pool-name label holds the
// name only for names of up to 63 characters).
func (e *Engine) machineToPool(ctx context.Context, o client.Object) []reconcile.Request {
	owner := metav1.GetControllerOf(o)
	if owner == nil || owner.Kind != "MachinePool" {
		return nil
	}
	name := owner.Name
	mp := &clusterv1.MachinePool{}
	if err := e.c.Get(ctx, types.NamespacedName{Namespace: o.GetNamespace(), Name: name}, mp, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	return e.machinePoolToPool(ctx, mp)
}

// clusterToPools maps a Cluster to the pools of its MachinePools, so that
// unpausing it resumes them.
func (e *Engine) clusterToPools(ctx context.Context, o client.Object) []reconcile.Request {
	pools := &clusterv1.MachinePoolList{}
	if err := e.c.List(ctx, pools, client.InNamespace(o.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range pools.Items {
		if pools.Items[i].Spec.ClusterName == o.GetName() {
			out = append(out, e.machinePoolToPool(ctx, &pools.Items[i])...)
		}
	}
	return out
}

// infraClusterToPools maps an object of the adapter's InfraCluster kind to
// the pools of the Clusters it places (as their infrastructureRef or
// controlPlaneRef).
func (e *Engine) infraClusterToPools(ctx context.Context, o client.Object) []reconcile.Request {
	clusters := &clusterv1.ClusterList{}
	if err := e.c.List(ctx, clusters, client.InNamespace(o.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range clusters.Items {
		if ref, ok := capi.PlacementRef(&clusters.Items[i], e.placementKind()); ok && ref.Name == o.GetName() {
			out = append(out, e.clusterToPools(ctx, &clusters.Items[i])...)
		}
	}
	return out
}

// secretToPools maps a bootstrap data Secret to the pools of the
// MachinePools that use it, so that a rotated token is applied promptly.
func (e *Engine) secretToPools(ctx context.Context, o client.Object) []reconcile.Request {
	pools := &clusterv1.MachinePoolList{}
	if err := e.c.List(ctx, pools, client.InNamespace(o.GetNamespace()),
		client.MatchingFields{e.bootstrapSecretIndex(): o.GetName()}, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range pools.Items {
		out = append(out, e.machinePoolToPool(ctx, &pools.Items[i])...)
	}
	return out
}

// poolChanged reports whether an update of a pool is work for the engine:
// its generation, an annotation it acts on, its owners or its deletion
// changed — not its status or the engine's own annotations, which it wrote
// itself — or it is the cache's resync (the same resourceVersion): the
// manager's --sync-period pass, which looks at every pool's cloud group
// again (controller-runtime queues it at low priority), so that a change
// made in the cloud alone is seen within that period.
func poolChanged(o, n client.Object) bool {
	return o.GetResourceVersion() == n.GetResourceVersion() ||
		o.GetGeneration() != n.GetGeneration() ||
		workAnnotationsChanged(o, n, poolOwnAnnotations...) ||
		!equalOwners(o, n) ||
		!o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp())
}

// bootstrapDataChanged reports whether an update of a Secret changes what a
// pool reads from it as bootstrap data: its BootstrapDataKey with the
// bootstrap tokens masked, or its deletion. Every other change — a rotated
// token, the bootstrap provider's annotations — leaves the pools' model and
// what they would create unchanged; the next pass that creates instances
// reads the current data anyway.
func bootstrapDataChanged(o, n client.Object) bool {
	os, ok1 := o.(*corev1.Secret)
	ns, ok2 := n.(*corev1.Secret)
	if !ok1 || !ok2 {
		return true
	}
	if !os.DeletionTimestamp.Equal(ns.DeletionTimestamp) {
		return true
	}
	return !bootstrap.SameContent(os.Data[BootstrapDataKey], ns.Data[BootstrapDataKey])
}

// nodeToPools maps a workload-cluster Node to the pool whose per-instance
// object has the Node's providerID.
func (e *Engine) nodeToPools(ctx context.Context, clusters []types.NamespacedName, node *corev1.Node) []reconcile.Request {
	if node.Spec.ProviderID == "" {
		return nil
	}
	list := e.a.NewInstanceList()
	if err := e.c.List(ctx, list, append(workload.InNamespaceOf(clusters),
		client.MatchingFields{e.providerIDIndex(): node.Spec.ProviderID}, client.UnsafeDisableDeepCopy)...); err != nil {
		return nil
	}
	var out []reconcile.Request
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		obj, ok := o.(client.Object)
		if !ok || !slices.ContainsFunc(clusters, func(c types.NamespacedName) bool { return c.Namespace == obj.GetNamespace() }) {
			return nil
		}
		if ref := contract.PoolOwner(obj, e.a.Kinds().Pool); ref != nil {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: ref.Name}})
		}
		return nil
	})
	return out
}

// poolOwnAnnotations are the pool's annotations the engine writes itself:
// their changes wake nothing.
var poolOwnAnnotations = []string{AppliedSpecAnnotation, ApplyRetryAnnotation, preview.ManagedCapacityAnnotation}

// changed is a predicate that passes create, delete and generic events, and
// the updates for which fn reports a change. It keeps the engine's own
// status writes from waking it up again.
func changed(fn func(oldObj, newObj client.Object) bool) predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(ev event.UpdateEvent) bool {
			if ev.ObjectOld == nil || ev.ObjectNew == nil {
				return true
			}
			return fn(ev.ObjectOld, ev.ObjectNew)
		},
	}
}

// equalAnnotations compares the annotations of a and b, ignoring the keys
// in ignore.
func equalAnnotations(a, b client.Object, ignore ...string) bool {
	x, y := maps.Clone(a.GetAnnotations()), maps.Clone(b.GetAnnotations())
	for _, k := range ignore {
		delete(x, k)
		delete(y, k)
	}
	return maps.Equal(x, y)
}

func equalOwners(a, b client.Object) bool {
	x, y := a.GetOwnerReferences(), b.GetOwnerReferences()
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i].UID != y[i].UID || x[i].Kind != y[i].Kind || x[i].Name != y[i].Name {
			return false
		}
	}
	return true
}
