package cli

import (
	"context"
	"fmt"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1beta1 "github.com/mpool-dev/mpool/api/core/v1beta1"
	"github.com/mpool-dev/mpool/internal/localenv"
	"github.com/mpool-dev/mpool/internal/workload"
)

// localClusterName is the Cluster `mpool up` registers for its own API
// server, in namespace default.
const localClusterName = "local"

// registerLocalCluster makes the embedded API server its own workload
// cluster: a Cluster "local" whose controlPlaneEndpoint is this API server,
// with the <cluster>-kubeconfig and <cluster>-ca Secrets Cluster API
// providers read. Existing objects are left as they are.
func registerLocalCluster(ctx context.Context, c client.Client, cp *localenv.ControlPlane) error {
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
	labels := map[string]string{corev1beta1.ClusterNameLabel: localClusterName}
	objs := []client.Object{
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: workload.KubeconfigSecretName(localClusterName), Labels: labels},
			Type:       corev1beta1.ClusterSecretType,
			Data:       map[string][]byte{"value": kc},
		},
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: localClusterName + "-ca", Labels: labels},
			Type:       corev1beta1.ClusterSecretType,
			Data:       map[string][]byte{"tls.crt": cp.CAData()},
		},
		&corev1beta1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: localClusterName},
			Spec: corev1beta1.ClusterSpec{
				ControlPlaneEndpoint: corev1beta1.APIEndpoint{Host: u.Hostname(), Port: int32(port)},
			},
		},
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("registering the local cluster: creating %T %s: %w", o, o.GetName(), err)
		}
	}
	return nil
}
