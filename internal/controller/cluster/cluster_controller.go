package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	kevents "k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/api/conditions"
	"github.com/mpool-dev/mpool/internal/capi"
	"github.com/mpool-dev/mpool/internal/condition"
	"github.com/mpool-dev/mpool/internal/events"
	"github.com/mpool-dev/mpool/internal/lastwrite"
	"github.com/mpool-dev/mpool/internal/workload"
)

// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters;clusters/status,verbs=get;list;watch;update;patch
// Infrastructure cluster kinds (AzureCluster, AWSCluster, ...) are not served by
// mpool; a deployment that adds them grants their read access in its own role.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// ControllerName names the controller and its event source.
const ControllerName = "cluster"

// Retry intervals.
const (
	// unreachableRetry is how soon an unreachable cluster is tried again
	// (a changed Secret triggers a reconcile sooner).
	unreachableRetry = 15 * time.Second
	// infraRetry is how soon a not-ready infrastructure object is read again.
	infraRetry = 30 * time.Second
)

// Reconciler reconciles Clusters. Set the exported fields, then call
// SetupWithManager.
type Reconciler struct {
	// Client is the manager's client. Required.
	Client client.Client
	// ClusterCache reaches the workload clusters; the MachinePool controller
	// must use the same one. Required.
	ClusterCache *workload.ClusterCache
	// Recorder records events; SetupWithManager defaults it from the manager.
	Recorder kevents.EventRecorder
	// Clock is the time source; nil means the real clock.
	Clock clock.PassiveClock
	// PlacementKinds are the infrastructure cluster kinds of mpool's
	// providers (contract.Kinds.InfraCluster: AzureCluster, AWSCluster),
	// records of where pools go in infrastructure that exists. mpool
	// provisions nothing for them, so a Cluster's infrastructure object of
	// one of them is marked ready here (status.ready), unless another
	// controller manages it (annotation cluster.x-k8s.io/managed-by, as
	// Cluster API defines it): the Cluster is then Provisioned, and
	// upstream's MachineHealthCheck evaluates its Machines, as beside CAPZ
	// or CAPA once their cluster controller reports ready.
	PlacementKinds []schema.GroupKind

	// written remembers the controller's last status write to each
	// Cluster until the cache shows it: a reconcile from the older copy
	// works from that write's answer instead, so that it neither writes
	// the same status again nor moves its conditions' transition times.
	written lastwrite.Memo
}

// statusKey names the controller's status write to cluster.
func statusKey(cluster *clusterv1.Cluster) lastwrite.Key {
	return lastwrite.Key{UID: cluster.UID, Part: "status"}
}

// SetupWithManager registers the controller with mgr.
func (r *Reconciler) SetupWithManager(_ context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Client == nil || r.ClusterCache == nil {
		return errors.New("cluster.Reconciler needs Client and ClusterCache")
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(ControllerName + "-controller")
	}
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	err := ctrl.NewControllerManagedBy(mgr).
		For(&clusterv1.Cluster{}).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(secretToCluster),
			builder.WithPredicates(predicate.NewPredicateFuncs(workload.IsKubeconfigSecret))).
		WatchesRawSource(r.ClusterCache.ClusterSource(func(_ context.Context, c types.NamespacedName) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: c}}
		})).
		WithOptions(options).
		Named(ControllerName).
		Complete(r)
	if err != nil {
		return fmt.Errorf("creating the Cluster controller: %w", err)
	}
	return nil
}

// secretToCluster maps a kubeconfig Secret to its Cluster.
func secretToCluster(_ context.Context, o client.Object) []reconcile.Request {
	cluster, ok := workload.ClusterOfKubeconfigSecret(o)
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: cluster}}
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			r.ClusterCache.Disconnect(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("reading Cluster %s: %w", req.NamespacedName, err)
	}
	if last, ok := r.written.Latest(statusKey(cluster), cluster.ResourceVersion).(*clusterv1.Cluster); ok {
		// The cache has not shown this controller's last status write:
		// work from its answer, as if it had.
		cluster = last
	}
	orig := cluster.DeepCopy()
	now := r.Clock.Now()
	defer func() {
		r.recordEvents(orig, cluster)
		if reterr == nil {
			cluster.Status.ObservedGeneration = cluster.Generation
		}
		if !equality.Semantic.DeepEqual(orig.Status, cluster.Status) {
			switch err := r.Client.Status().Patch(ctx, cluster, client.MergeFrom(orig)); {
			case err == nil:
				r.written.Wrote(statusKey(cluster), orig.ResourceVersion, cluster.DeepCopy())
			case !apierrors.IsNotFound(err):
				reterr = errors.Join(reterr, fmt.Errorf("patching the status of Cluster %s: %w", klog.KObj(cluster), err))
			}
		}
	}()

	if !cluster.DeletionTimestamp.IsZero() {
		r.ClusterCache.Disconnect(req.NamespacedName)
		cluster.Status.Phase = string(clusterv1.ClusterPhaseDeleting)
		return ctrl.Result{}, nil
	}
	_, pausedAnn := cluster.Annotations[clusterv1.PausedAnnotation]
	if ptr.Deref(cluster.Spec.Paused, false) || pausedAnn {
		set(cluster, clusterv1.PausedCondition, metav1.ConditionTrue, clusterv1.PausedReason, "The Cluster is paused", now)
		return ctrl.Result{}, nil
	}
	set(cluster, clusterv1.PausedCondition, metav1.ConditionFalse, clusterv1.NotPausedReason, "", now)

	var res ctrl.Result
	var errs []error
	if rr, err := r.reconcileControlPlane(ctx, cluster, now); err != nil {
		errs = append(errs, err)
	} else {
		res = earliest(res, rr)
	}
	if rr, err := r.reconcileInfrastructure(ctx, cluster, now); err != nil {
		errs = append(errs, err)
	} else {
		res = earliest(res, rr)
	}
	setReadyCondition(cluster, now)
	cluster.Status.Phase = string(computePhase(cluster))
	return res, errors.Join(errs...)
}

// reconcileControlPlane connects to the workload cluster and records whether
// that worked.
func (r *Reconciler) reconcileControlPlane(ctx context.Context, cluster *clusterv1.Cluster, now time.Time) (ctrl.Result, error) {
	_, err := r.ClusterCache.Client(ctx, client.ObjectKeyFromObject(cluster))
	switch {
	case err == nil:
		cluster.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
		// Upstream's MachineHealthCheck reads the condition: it checks Nodes
		// only once the control plane is initialized. Once True it stays.
		set(cluster, clusterv1.ClusterControlPlaneInitializedCondition, metav1.ConditionTrue, clusterv1.ClusterControlPlaneInitializedReason, "", now)
		set(cluster, conditions.WorkloadClusterReachableCondition, metav1.ConditionTrue, conditions.ReachableReason, "", now)
		set(cluster, conditions.ControlPlaneReadyCondition, metav1.ConditionTrue, clusterv1.ReadyReason, "", now)
		return ctrl.Result{}, nil
	case workload.IsConnectionError(err):
		ctrl.LoggerFrom(ctx).Info("Workload cluster not reachable", "reason", workload.ConnectionErrorReason(err))
		cluster.Status.Initialization.ControlPlaneInitialized = ptr.To(false)
		if !meta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1.ClusterControlPlaneInitializedCondition) {
			set(cluster, clusterv1.ClusterControlPlaneInitializedCondition, metav1.ConditionFalse, clusterv1.ClusterControlPlaneNotInitializedReason,
				"The workload API server has not been reached yet", now)
		}
		set(cluster, conditions.WorkloadClusterReachableCondition, metav1.ConditionFalse, workload.ConnectionErrorReason(err), err.Error(), now)
		set(cluster, conditions.ControlPlaneReadyCondition, metav1.ConditionFalse, conditions.WaitingForControlPlaneReason,
			"The workload API server cannot be reached: see "+conditions.WorkloadClusterReachableCondition, now)
		return ctrl.Result{RequeueAfter: unreachableRetry}, nil
	default:
		set(cluster, conditions.WorkloadClusterReachableCondition, metav1.ConditionUnknown, clusterv1.InternalErrorReason, err.Error(), now)
		set(cluster, conditions.ControlPlaneReadyCondition, metav1.ConditionUnknown, clusterv1.InternalErrorReason, err.Error(), now)
		return ctrl.Result{}, fmt.Errorf("connecting to the workload cluster: %w", err)
	}
}

// reconcileInfrastructure marks the infrastructure ready when there is no
// infrastructureRef, and mirrors the referenced object's status.ready
// otherwise.
func (r *Reconciler) reconcileInfrastructure(ctx context.Context, cluster *clusterv1.Cluster, now time.Time) (ctrl.Result, error) {
	ref := cluster.Spec.InfrastructureRef
	if !ref.IsDefined() {
		cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
		set(cluster, clusterv1.InfrastructureReadyCondition, metav1.ConditionTrue, conditions.NoInfrastructureRefReason,
			"The Cluster has no infrastructureRef", now)
		return ctrl.Result{}, nil
	}
	gvk, err := capi.RefGVK(ctx, r.Client, ref)
	if err != nil {
		set(cluster, clusterv1.InfrastructureReadyCondition, metav1.ConditionUnknown, clusterv1.InternalErrorReason, err.Error(), now)
		return ctrl.Result{}, err
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: ref.Name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(false)
			set(cluster, clusterv1.InfrastructureReadyCondition, metav1.ConditionFalse, conditions.ObjectNotFoundReason,
				fmt.Sprintf("%s %s not found", ref.Kind, ref.Name), now)
			return ctrl.Result{RequeueAfter: infraRetry}, nil
		}
		set(cluster, clusterv1.InfrastructureReadyCondition, metav1.ConditionUnknown, clusterv1.InternalErrorReason, err.Error(), now)
		return ctrl.Result{}, fmt.Errorf("reading %s %s: %w", ref.Kind, ref.Name, err)
	}
	ready, _, err := unstructured.NestedBool(obj.Object, "status", "ready")
	if r.placementOnly(obj) {
		// Nothing to provision: the placement is usable as it is.
		if !ready {
			if err := r.Client.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(`{"status":{"ready":true}}`))); err != nil {
				set(cluster, clusterv1.InfrastructureReadyCondition, metav1.ConditionUnknown, clusterv1.InternalErrorReason, err.Error(), now)
				return ctrl.Result{}, fmt.Errorf("marking %s %s ready: %w", ref.Kind, ref.Name, err)
			}
		}
		cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
		set(cluster, clusterv1.InfrastructureReadyCondition, metav1.ConditionTrue, conditions.PlacementOnlyReason,
			fmt.Sprintf("%s %s places the pools in infrastructure that exists; mpool provisions nothing for it", ref.Kind, ref.Name), now)
		return ctrl.Result{}, nil
	}
	if err != nil || !ready {
		cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(false)
		set(cluster, clusterv1.InfrastructureReadyCondition, metav1.ConditionFalse, conditions.WaitingForInfrastructureReason,
			fmt.Sprintf("%s %s is not ready", ref.Kind, ref.Name), now)
		return ctrl.Result{RequeueAfter: infraRetry}, nil
	}
	cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	set(cluster, clusterv1.InfrastructureReadyCondition, metav1.ConditionTrue, clusterv1.ReadyReason, "", now)
	return ctrl.Result{}, nil
}

// placementOnly reports whether obj is of one of the PlacementKinds and
// managed by no other controller.
func (r *Reconciler) placementOnly(obj *unstructured.Unstructured) bool {
	if _, managed := obj.GetAnnotations()[clusterv1.ManagedByAnnotation]; managed {
		return false
	}
	return slices.Contains(r.PlacementKinds, obj.GroupVersionKind().GroupKind())
}

// computePhase: Provisioned once both the infrastructure and the control
// plane are ready, Provisioning while the infrastructure is (or is being)
// provided, Pending before.
func computePhase(c *clusterv1.Cluster) clusterv1.ClusterPhase {
	switch {
	case !c.DeletionTimestamp.IsZero():
		return clusterv1.ClusterPhaseDeleting
	case c.Status.Deprecated != nil && c.Status.Deprecated.V1Beta1 != nil &&
		(c.Status.Deprecated.V1Beta1.FailureReason != nil || c.Status.Deprecated.V1Beta1.FailureMessage != nil):
		return clusterv1.ClusterPhaseFailed
	case ptr.Deref(c.Status.Initialization.InfrastructureProvisioned, false) && ptr.Deref(c.Status.Initialization.ControlPlaneInitialized, false):
		return clusterv1.ClusterPhaseProvisioned
	case ptr.Deref(c.Status.Initialization.InfrastructureProvisioned, false) || c.Spec.InfrastructureRef.IsDefined():
		return clusterv1.ClusterPhaseProvisioning
	default:
		return clusterv1.ClusterPhasePending
	}
}

func set(c *clusterv1.Cluster, t string, status metav1.ConditionStatus, reason, msg string, now time.Time) {
	condition.Set(c, condition.New(t, status, reason, msg, c.Generation), now)
}

// setReadyCondition summarises InfrastructureReady and ControlPlaneReady
// into Ready, and into Available, v1beta2's name for the same judgement.
func setReadyCondition(c *clusterv1.Cluster, now time.Time) {
	for _, t := range []string{clusterv1.InfrastructureReadyCondition, conditions.ControlPlaneReadyCondition} {
		cond := condition.Get(c, t)
		if cond == nil || cond.Status != metav1.ConditionTrue {
			status, reason, msg := metav1.ConditionUnknown, clusterv1.InternalErrorReason, t+" is not set"
			if cond != nil {
				status, reason, msg = cond.Status, cond.Reason, t+": "+cond.Message
			}
			set(c, clusterv1.ReadyCondition, status, reason, msg, now)
			set(c, clusterv1.ClusterAvailableCondition, status, reason, msg, now)
			return
		}
	}
	set(c, clusterv1.ReadyCondition, metav1.ConditionTrue, clusterv1.ReadyReason, "", now)
	// v1beta2's Available (what clusterctl describe shows): mpool's Cluster
	// is available when its infrastructure and control plane are.
	set(c, clusterv1.ClusterAvailableCondition, metav1.ConditionTrue, clusterv1.ClusterAvailableReason, "", now)
}

// recordEvents records reachability changes.
func (r *Reconciler) recordEvents(orig, c *clusterv1.Cluster) {
	before := condition.Get(orig, conditions.WorkloadClusterReachableCondition)
	after := condition.Get(c, conditions.WorkloadClusterReachableCondition)
	if after == nil || (before != nil && before.Status == after.Status && before.Reason == after.Reason) {
		return
	}
	switch after.Status {
	case metav1.ConditionTrue:
		r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, events.ControlPlaneReachable, events.ActionReconcile, "%s", "The workload API server is reachable")
	case metav1.ConditionFalse:
		r.Recorder.Eventf(c, nil, corev1.EventTypeWarning, events.ControlPlaneUnreachable, events.ActionReconcile, "%s", after.Message)
	}
}

func earliest(a, b ctrl.Result) ctrl.Result {
	if a.RequeueAfter == 0 || (b.RequeueAfter != 0 && b.RequeueAfter < a.RequeueAfter) {
		return b
	}
	return a
}
