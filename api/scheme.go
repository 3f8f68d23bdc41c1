package api

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	bootstrapv1 "github.com/mpool-dev/mpool/api/bootstrap/v1beta1"
	corev1beta1 "github.com/mpool-dev/mpool/api/core/v1beta1"
	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
)

//go:generate bash ../hack/generate.sh

// AddToScheme registers every mpool API group (cluster.x-k8s.io,
// bootstrap.cluster.x-k8s.io and infrastructure.cluster.x-k8s.io, v1beta1) with s.
func AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{
		corev1beta1.AddToScheme,
		bootstrapv1.AddToScheme,
		infrav1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return fmt.Errorf("adding mpool API types to scheme: %w", err)
		}
	}
	return nil
}
