package kit

import (
	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/provider/contract"
)

// SpecStrategy is the PoolView of a pool kind that rolls by the common
// spec.strategy (infrav1.MachinePoolDeploymentStrategy), at its status's
// observedGeneration: what such an Adapter's ReadPool returns.
func SpecStrategy(s infrav1.MachinePoolDeploymentStrategy, observedGeneration int64) (contract.PoolView, error) {
	strategy, err := preview.Strategy(s)
	if err != nil {
		return contract.PoolView{}, err
	}
	return contract.PoolView{Rollout: contract.RolloutView{Strategy: strategy, Source: "spec.strategy"}, ObservedGeneration: observedGeneration}, nil
}
