package cli

import (
	"context"
	"fmt"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/internal/kubeenv"
	"github.com/mpool-dev/mpool/internal/workload"
)

// localClusterName is the Cluster `mpool up` registers for its own API
// server, in namespace default.
const localClusterName = "local"

// registerLocalCluster makes the embedded API server its own workload
// cluster: a Cluster "local" in namespace default (see registerCluster).
// Existing objects are left as they are.
func registerLocalCluster(ctx context.Context, c client.Client, cp *kubeenv.ControlPlane) error {
	return registerCluster(ctx, c, cp, "default", localClusterName)
}

// registerCluster makes the embedded API server the workload cluster of
// the Cluster namespace/name: its controlPlaneEndpoint is this API server
// (the Cluster is created when missing), with the <cluster>-kubeconfig and
// <cluster>-ca Secrets Cluster API providers read. Existing Secrets are
// left as they are.
func registerCluster(ctx context.Context, c client.Client, cp *kubeenv.ControlPlane, namespace, name string) error {
	kc, err := cp.Kubeconfig()
	if err != nil {
		return err
	}
	u, err := url.Parse(cp.Host())
	if err != nil {
		return err
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return fmt.Errorf("API server port in %s: %w", cp.Host(), err)
	}
	endpoint := corev1beta1.APIEndpoint{Host: u.Hostname(), Port: int32(port)}
	labels := map[string]string{corev1beta1.ClusterNameLabel: name}
	objs := []client.Object{
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: workload.KubeconfigSecretName(name), Labels: labels},
			Type:       corev1beta1.ClusterSecretType,
			Data:       map[string][]byte{"value": kc},
		},
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name + "-ca", Labels: labels},
			Type:       corev1beta1.ClusterSecretType,
			Data:       map[string][]byte{"tls.crt": cp.CAData()},
		},
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("registering Cluster %s/%s: creating %T %s: %w", namespace, name, o, o.GetName(), err)
		}
	}
	cl := &corev1beta1.Cluster{}
	switch err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, cl); {
	case apierrors.IsNotFound(err):
		cl = &corev1beta1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Spec: corev1beta1.ClusterSpec{ControlPlaneEndpoint: endpoint}}
		if err := c.Create(ctx, cl); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("registering Cluster %s/%s: %w", namespace, name, err)
		}
		return nil
	case err != nil:
		return err
	}
	if cl.Spec.ControlPlaneEndpoint == endpoint {
		return nil
	}
	before := cl.DeepCopy()
	cl.Spec.ControlPlaneEndpoint = endpoint
	if err := c.Patch(ctx, cl, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("registering Cluster %s/%s: setting its controlPlaneEndpoint: %w", namespace, name, err)
	}
	return nil
}

// sandboxClusters makes the embedded API server the workload cluster of
// every Cluster created in it that has no kubeconfig Secret of its own
// (examples/azure/cluster.yaml's capz, a `mpool generate` cluster): `mpool
// up` is their control plane. It writes the <cluster>-kubeconfig and
// <cluster>-ca Secrets and points spec.controlPlaneEndpoint at this API
// server, where the simulated VMs join. Only `mpool up` runs it: against
// a real management cluster the control plane provider does this.
type sandboxClusters struct {
	c  client.Client
	cp *kubeenv.ControlPlane
}

// Reconcile implements reconcile.Reconciler.
func (r *sandboxClusters) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cl := &corev1beta1.Cluster{}
	if err := r.c.Get(ctx, req.NamespacedName, cl); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cl.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	err := r.c.Get(ctx, types.NamespacedName{Namespace: cl.Namespace, Name: workload.KubeconfigSecretName(cl.Name)}, &corev1.Secret{})
	if !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err // it has one (nil), or the read failed
	}
	ctrl.LoggerFrom(ctx).Info("Making this API server the Cluster's workload cluster")
	return ctrl.Result{}, registerCluster(ctx, r.c, r.cp, cl.Namespace, cl.Name)
}

// setupSandboxClusters registers sandboxClusters with mgr.
func setupSandboxClusters(mgr ctrl.Manager, cp *kubeenv.ControlPlane) error {
	return ctrl.NewControllerManagedBy(mgr).Named("sandboxcluster").For(&corev1beta1.Cluster{}).
		Complete(&sandboxClusters{c: mgr.GetClient(), cp: cp})
}
