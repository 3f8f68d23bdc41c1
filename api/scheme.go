package api

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	bootstrapv1beta1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
)

//go:generate bash ../hack/generate.sh

// AddToScheme registers every API group mpool serves with s: Cluster API's
// core (cluster.x-k8s.io) and kubeadm bootstrap (bootstrap.cluster.x-k8s.io)
// groups in v1beta2 (the hub mpool's controllers use) and v1beta1 (served for
// the seeds' manifests, converted by internal/conversion), both upstream's
// own types; and mpool's infrastructure.cluster.x-k8s.io v1beta1.
func AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{
		clusterv1.AddToScheme,
		clusterv1beta1.AddToScheme,
		bootstrapv1.AddToScheme,
		bootstrapv1beta1.AddToScheme,
		infrav1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return fmt.Errorf("adding mpool API types to scheme: %w", err)
		}
	}
	return nil
}
