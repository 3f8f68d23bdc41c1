package cli

import (
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/internal/provider"
	"github.com/mpool-dev/mpool/internal/provider/contract"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
)

// adapterOf returns the adapter of the provider that serves the infra pool
// kind ref names — the only reader of that kind's fields — nil when no
// provider of mpool serves it.
func adapterOf(ref clusterv1.ContractVersionedObjectReference) contract.Adapter {
	if ref.APIGroup != infrav1.GroupVersion.Group {
		return nil
	}
	for _, a := range provider.Adapters() {
		if a.Kinds().Pool == ref.Kind {
			return a
		}
	}
	return nil
}
