package managedcluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/capi"
	"github.com/mpool-dev/mpool/internal/condition"
	"github.com/mpool-dev/mpool/internal/preview"
)

// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=azuremanagedclusters;azuremanagedcontrolplanes,verbs=get;list;watch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=azuremanagedclusters/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch

// ControllerName names the controller.
const ControllerName = "azuremanagedcluster"

var (
	// clusterGK and controlPlaneGK are the kinds of the pair: the Cluster's
	// infrastructureRef and controlPlaneRef.
	clusterGK      = infrav1.GroupVersion.WithKind(infrav1.AzureManagedClusterKind).GroupKind()
	controlPlaneGK = infrav1.GroupVersion.WithKind(infrav1.AzureManagedControlPlaneKind).GroupKind()
)

// Reconciler reconciles AzureManagedClusters. Set the exported fields, then
// call SetupWithManager.
type Reconciler struct {
	// Client is the manager's client. Required.
	Client client.Client
	// Clock is the time source; nil means the real clock.
	Clock clock.PassiveClock
}

// SetupWithManager registers the controller with mgr: it watches
// AzureManagedClusters, the Clusters that name them and the
// AzureManagedControlPlanes those Clusters name, so that an
// AzureManagedCluster becomes ready as soon as its control plane appears.
func (r *Reconciler) SetupWithManager(_ context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Client == nil {
		return errors.New("managedcluster.Reconciler needs Client")
	}
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	err := ctrl.NewControllerManagedBy(mgr).
		For(&infrav1.AzureManagedCluster{}).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(clusterToManagedCluster)).
		Watches(&infrav1.AzureManagedControlPlane{}, handler.EnqueueRequestsFromMapFunc(r.controlPlaneToManagedClusters)).
		WithOptions(options).
		Named(ControllerName).
		Complete(r)
	if err != nil {
		return fmt.Errorf("creating the AzureManagedCluster controller: %w", err)
	}
	return nil
}

// clusterToManagedCluster maps a Cluster to its AzureManagedCluster.
func clusterToManagedCluster(_ context.Context, o client.Object) []reconcile.Request {
	c, ok := o.(*clusterv1.Cluster)
	if !ok || !capi.RefersTo(c.Spec.InfrastructureRef, clusterGK) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: c.Namespace, Name: c.Spec.InfrastructureRef.Name}}}
}

// controlPlaneToManagedClusters maps an AzureManagedControlPlane to the
// AzureManagedClusters of the Clusters naming it as their controlPlaneRef.
func (r *Reconciler) controlPlaneToManagedClusters(ctx context.Context, o client.Object) []reconcile.Request {
	clusters := &clusterv1.ClusterList{}
	if err := r.Client.List(ctx, clusters, client.InNamespace(o.GetNamespace())); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range clusters.Items {
		c := &clusters.Items[i]
		if capi.RefersTo(c.Spec.ControlPlaneRef, controlPlaneGK) && c.Spec.ControlPlaneRef.Name == o.GetName() {
			out = append(out, clusterToManagedCluster(ctx, c)...)
		}
	}
	return out
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	amc := &infrav1.AzureManagedCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, amc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if _, managed := amc.Annotations[clusterv1.ManagedByAnnotation]; managed || !amc.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	cluster, err := r.cluster(ctx, amc)
	if err != nil {
		return ctrl.Result{}, err
	}
	if cluster != nil && (ptr.Deref(cluster.Spec.Paused, false) || preview.HasAnnotation(cluster.Annotations, clusterv1.PausedAnnotation)) ||
		preview.HasAnnotation(amc.Annotations, clusterv1.PausedAnnotation) {
		return ctrl.Result{}, nil
	}
	orig := amc.DeepCopy()
	defer func() {
		if equality.Semantic.DeepEqual(orig.Status, amc.Status) {
			return
		}
		if err := r.Client.Status().Patch(ctx, amc, client.MergeFrom(orig)); err != nil && !apierrors.IsNotFound(err) {
			reterr = errors.Join(reterr, fmt.Errorf("patching the status of AzureManagedCluster %s: %w", klog.KObj(amc), err))
		}
	}()
	ready, reason, msg, err := r.controlPlaneFound(ctx, amc, cluster)
	if err != nil {
		setReadyCondition(amc, metav1.ConditionUnknown, clusterv1.InternalErrorReason, err.Error(), r.Clock.Now())
		return ctrl.Result{}, err
	}
	amc.Status.Ready = ready
	status := metav1.ConditionFalse
	if ready {
		status = metav1.ConditionTrue
	} else {
		ctrl.LoggerFrom(ctx).V(1).Info("Waiting for the control plane", "reason", msg)
	}
	setReadyCondition(amc, status, reason, msg, r.Clock.Now())
	return ctrl.Result{}, nil
}

// cluster returns the Cluster whose infrastructureRef names amc, nil when
// there is none.
func (r *Reconciler) cluster(ctx context.Context, amc *infrav1.AzureManagedCluster) (*clusterv1.Cluster, error) {
	clusters := &clusterv1.ClusterList{}
	if err := r.Client.List(ctx, clusters, client.InNamespace(amc.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the Clusters of namespace %s: %w", amc.Namespace, err)
	}
	for i := range clusters.Items {
		c := &clusters.Items[i]
		if capi.RefersTo(c.Spec.InfrastructureRef, clusterGK) && c.Spec.InfrastructureRef.Name == amc.Name {
			return c, nil
		}
	}
	return nil, nil
}

// controlPlaneFound judges whether the Cluster's controlPlaneRef names an
// AzureManagedControlPlane that exists, and says what is missing when not.
func (r *Reconciler) controlPlaneFound(ctx context.Context, amc *infrav1.AzureManagedCluster, cluster *clusterv1.Cluster) (bool, string, string, error) {
	if cluster == nil {
		return false, infrav1.WaitingForClusterReason,
			fmt.Sprintf("No Cluster in namespace %s names AzureManagedCluster %s as its spec.infrastructureRef", amc.Namespace, amc.Name), nil
	}
	ref := cluster.Spec.ControlPlaneRef
	switch {
	case !ref.IsDefined():
		return false, infrav1.WaitingForControlPlaneRefReason,
			fmt.Sprintf("Cluster %s has no spec.controlPlaneRef: set it to the AzureManagedControlPlane (%s) that names the AKS cluster", cluster.Name, controlPlaneGK.Group), nil
	case !capi.RefersTo(ref, controlPlaneGK):
		return false, infrav1.WaitingForControlPlaneRefReason,
			fmt.Sprintf("Cluster %s's spec.controlPlaneRef is a %s (%s); an AzureManagedCluster's Cluster needs an AzureManagedControlPlane (%s)",
				cluster.Name, ref.Kind, ref.APIGroup, controlPlaneGK.Group), nil
	}
	cp := &infrav1.AzureManagedControlPlane{}
	switch err := r.Client.Get(ctx, types.NamespacedName{Namespace: amc.Namespace, Name: ref.Name}, cp); {
	case apierrors.IsNotFound(err):
		return false, infrav1.WaitingForControlPlaneRefReason,
			fmt.Sprintf("AzureManagedControlPlane %s, Cluster %s's spec.controlPlaneRef, does not exist", ref.Name, cluster.Name), nil
	case err != nil:
		return false, "", "", fmt.Errorf("reading AzureManagedControlPlane %s: %w", ref.Name, err)
	}
	return true, infrav1.ControlPlaneFoundReason,
		fmt.Sprintf("AzureManagedControlPlane %s names the AKS cluster; mpool provisions nothing for the AzureManagedCluster", cp.Name), nil
}

func setReadyCondition(amc *infrav1.AzureManagedCluster, status metav1.ConditionStatus, reason, msg string, now time.Time) {
	condition.Set(amc, condition.New(clusterv1.ReadyCondition, status, reason, msg, amc.Generation), now)
}
