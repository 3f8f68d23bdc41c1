package kit

import (
	"fmt"

	"k8s.io/utils/ptr"

	"github.com/mpool-dev/mpool/internal/provider/contract"
)

// OwnerReplicas is the replicas of owner's MachinePool (spec.replicas, 1
// when unset, as CAPI defaults it), 1 without a MachinePool.
func OwnerReplicas(owner contract.Owner) int32 {
	if owner.MachinePool == nil {
		return 1
	}
	return ptr.Deref(owner.MachinePool.Spec.Replicas, 1)
}

// CheckScaling checks a managed pool's spec.scaling bounds (a node group's,
// an agent pool's): minSize no higher than maxSize and, unless the replicas
// are managed externally (an autoscaler), the MachinePool's replicas
// between them. kind names the pool's kind in the error.
func CheckScaling(kind string, replicas, minSize, maxSize int32, external bool) error {
	if minSize > maxSize {
		return fmt.Errorf("spec.scaling.minSize %d is above spec.scaling.maxSize %d", minSize, maxSize)
	}
	if !external && (replicas < minSize || replicas > maxSize) {
		return fmt.Errorf("the MachinePool's replicas %d are outside the %s's [scaling.minSize %d, scaling.maxSize %d]: change the MachinePool's spec.replicas, or spec.scaling",
			replicas, kind, minSize, maxSize)
	}
	return nil
}
