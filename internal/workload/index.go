package workload

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// NodeProviderIDIndex is the field index on the Nodes of every workload
// cluster client: client.MatchingFields{NodeProviderIDIndex: id} lists the
// Node with that providerID from the cache.
const NodeProviderIDIndex = "spec.providerID"

// Names of the indexes this package adds to the Node informers directly and
// reads without copying.
const (
	rawProviderIDIndex = "mpool:providerID"
	rawOwnerIndex      = "mpool:owner"
)

var rawIndexers = toolscache.Indexers{
	rawProviderIDIndex: func(obj any) ([]string, error) {
		n, ok := obj.(*corev1.Node)
		if !ok {
			return nil, nil
		}
		return providerIDIndexFunc(n), nil
	},
	rawOwnerIndex: func(obj any) ([]string, error) {
		n, ok := obj.(*corev1.Node)
		if !ok {
			return nil, nil
		}
		return ownerIndexFunc(n), nil
	},
}

// KubeconfigSecretName returns the name of the Secret holding the kubeconfig
// of the Cluster named cluster.
func KubeconfigSecretName(cluster string) string { return cluster + kubeconfigSuffix }

const kubeconfigSuffix = "-kubeconfig"

// ClusterOfKubeconfigSecret returns the Cluster whose kubeconfig Secret o
// is named as (see KubeconfigSecretName), and false when o's name is not
// such a name.
func ClusterOfKubeconfigSecret(o client.Object) (types.NamespacedName, bool) {
	name, ok := strings.CutSuffix(o.GetName(), kubeconfigSuffix)
	if !ok || name == "" {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: o.GetNamespace(), Name: name}, true
}

// IsKubeconfigSecret reports whether o is named as a Cluster's kubeconfig
// Secret: a predicate for watches on Secrets.
func IsKubeconfigSecret(o client.Object) bool {
	_, ok := ClusterOfKubeconfigSecret(o)
	return ok
}

// KubeconfigDataKey is the key of the kubeconfig in the kubeconfig Secret.
const KubeconfigDataKey = "value"

// Owner identifies the management-cluster object (for example a MachinePool)
// that owns a workload-cluster Node.
type Owner struct {
	// ClusterName is the name of the Cluster the owner belongs to.
	ClusterName string
	// Namespace is the namespace of the owner and its Cluster.
	Namespace string
	// Kind is the owner's kind, for example MachinePool.
	Kind string
	// Name is the owner's name.
	Name string
}

// Key identifies o in the Node owner index.
func (o Owner) Key() string { return o.Namespace + "/" + o.Kind + "/" + o.Name }

// Annotations returns the annotations that mark a Node as owned by o.
func (o Owner) Annotations() map[string]string {
	return map[string]string{
		clusterv1.ClusterNameAnnotation:      o.ClusterName,
		clusterv1.ClusterNamespaceAnnotation: o.Namespace,
		clusterv1.OwnerKindAnnotation:        o.Kind,
		clusterv1.OwnerNameAnnotation:        o.Name,
	}
}

// OwnedBy reports whether node carries every annotation of o.
func (o Owner) OwnedBy(node *corev1.Node) bool {
	got, ok := OwnerOf(node)
	return ok && got == o
}

// OwnerOf returns the owner recorded in node's annotations, and false when
// the Node carries no complete owner annotations.
func OwnerOf(node *corev1.Node) (Owner, bool) {
	a := node.GetAnnotations()
	o := Owner{
		ClusterName: a[clusterv1.ClusterNameAnnotation],
		Namespace:   a[clusterv1.ClusterNamespaceAnnotation],
		Kind:        a[clusterv1.OwnerKindAnnotation],
		Name:        a[clusterv1.OwnerNameAnnotation],
	}
	if o.ClusterName == "" || o.Namespace == "" || o.Kind == "" || o.Name == "" {
		return Owner{}, false
	}
	return o, true
}

// providerIDIndexFunc indexes a Node by its spec.providerID.
func providerIDIndexFunc(obj client.Object) []string {
	node, ok := obj.(*corev1.Node)
	if !ok || node.Spec.ProviderID == "" {
		return nil
	}
	return []string{node.Spec.ProviderID}
}

// ownerIndexFunc indexes a Node by the owner recorded in its annotations.
func ownerIndexFunc(obj client.Object) []string {
	node, ok := obj.(*corev1.Node)
	if !ok {
		return nil
	}
	o, ok := OwnerOf(node)
	if !ok {
		return nil
	}
	return []string{o.Key()}
}
