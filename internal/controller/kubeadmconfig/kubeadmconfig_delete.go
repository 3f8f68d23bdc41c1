package kubeadmconfig

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/internal/events"
)

// reconcileDelete deletes the config's tokens from the workload cluster, then
// drops the finalizer. It gives up on the tokens, with a warning event, when
// the Cluster is gone or being deleted, or when the workload cluster has been
// unreachable for TokenTTL since the deletion began: by then every token has
// expired, since deleted configs' tokens are no longer extended.
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	cfg := s.config
	r.tokenChecks.Delete(cfg.UID)
	if !controllerutil.ContainsFinalizer(cfg, Finalizer) {
		return ctrl.Result{}, nil
	}
	log := ctrl.LoggerFrom(ctx)
	clusterName, err := r.clusterNameOf(ctx, cfg)
	if err != nil {
		return ctrl.Result{}, err
	}
	if clusterName == "" {
		return r.skipTokenCleanup(ctx, cfg, "its Cluster is unknown")
	}
	key := types.NamespacedName{Namespace: cfg.Namespace, Name: clusterName}
	cluster := &clusterv1.Cluster{}
	clusterGone := false
	if err := r.Client.Get(ctx, key, cluster); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("getting Cluster %s: %w", key, err)
		}
		clusterGone = true
	} else if !cluster.DeletionTimestamp.IsZero() {
		clusterGone = true
	}

	wl, err := r.Workload.Client(ctx, key)
	if err == nil {
		err = deleteTokens(ctx, wl, cfg, "")
	}
	if err == nil {
		log.Info("Deleted the bootstrap tokens of the KubeadmConfig")
		controllerutil.RemoveFinalizer(cfg, Finalizer)
		return ctrl.Result{}, nil
	}
	switch {
	case clusterGone:
		return r.skipTokenCleanup(ctx, cfg, fmt.Sprintf("Cluster %s is gone", clusterName))
	case r.Clock.Since(cfg.DeletionTimestamp.Time) >= r.TokenTTL:
		return r.skipTokenCleanup(ctx, cfg, fmt.Sprintf("the workload cluster of Cluster %s has been unreachable for %s", clusterName, r.TokenTTL))
	default:
		return ctrl.Result{}, fmt.Errorf("deleting the bootstrap tokens of KubeadmConfig %s: %w", client.ObjectKeyFromObject(cfg), err)
	}
}

func (r *Reconciler) skipTokenCleanup(ctx context.Context, cfg *bootstrapv1.KubeadmConfig, why string) (ctrl.Result, error) {
	ctrl.LoggerFrom(ctx).Info("Not deleting the bootstrap tokens of the KubeadmConfig; they expire on their own", "reason", why)
	r.Recorder.Eventf(cfg, nil, corev1.EventTypeWarning, events.BootstrapTokenCleanupSkipped, events.ActionDelete,
		"Bootstrap tokens were not deleted because %s; they expire within %s", why, r.TokenTTL)
	controllerutil.RemoveFinalizer(cfg, Finalizer)
	return ctrl.Result{}, nil
}

// clusterNameOf finds the Cluster of a config being deleted: from its
// MachinePool if that still exists, else from its data Secret's label.
func (r *Reconciler) clusterNameOf(ctx context.Context, cfg *bootstrapv1.KubeadmConfig) (string, error) {
	if ref := machinePoolOwner(cfg); ref != nil {
		mp := &clusterv1.MachinePool{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: cfg.Namespace, Name: ref.Name}, mp)
		if err == nil {
			return mp.Spec.ClusterName, nil
		}
		if !apierrors.IsNotFound(err) {
			return "", fmt.Errorf("getting MachinePool %s/%s: %w", cfg.Namespace, ref.Name, err)
		}
	}
	if name := cfg.Labels[clusterv1.ClusterNameLabel]; name != "" {
		return name, nil
	}
	secret := &corev1.Secret{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: cfg.Namespace, Name: cfg.Name}, secret)
	if err == nil {
		return secret.Labels[clusterv1.ClusterNameLabel], nil
	}
	if !apierrors.IsNotFound(err) {
		return "", fmt.Errorf("getting bootstrap data Secret %s/%s: %w", cfg.Namespace, cfg.Name, err)
	}
	return "", nil
}
