package kit

import (
	"k8s.io/apimachinery/pkg/api/meta"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/contract"
)

// ConditionAlias is one of the engine's conditions under a provider's own
// name (CAPZ's ScaleSetRunning, CAPA's ASGReady, ...): Type is the
// provider's condition type; Reasons maps the engine's reasons onto the
// provider's (reasons not in it are kept).
type ConditionAlias struct {
	Type    string
	Reasons map[string]string
}

// MirrorConditions sets on pool, for each of the engine's conditions it
// holds, every alias aliases names for it, with the engine's status,
// message and observed generation; the transition time moves only when
// the status does. Adapters call it from WritePool, which the engine calls
// after setting its conditions.
func MirrorConditions(pool contract.Pool, aliases map[string][]ConditionAlias) {
	conds := pool.GetConditions()
	for _, c := range pool.GetConditions() {
		for _, a := range aliases[c.Type] {
			m := c
			m.Type = a.Type
			if r, ok := a.Reasons[c.Reason]; ok {
				m.Reason = r
			}
			meta.SetStatusCondition(&conds, m)
		}
	}
	pool.SetConditions(conds)
}

// ReadyAlias is the engine's ScaleGroupReady condition under a provider's
// name typ for its group or a part of it (an ASG, its launch template, a
// node group), with the provider's reasons for a group not found, a failed
// provisioning and a deletion; an empty reason keeps the engine's.
func ReadyAlias(typ, notFound, provisionFailed, deleting string) ConditionAlias {
	reasons := map[string]string{}
	for engine, own := range map[string]string{
		infrav1.ScaleGroupNotFoundReason:        notFound,
		infrav1.ScaleGroupProvisionFailedReason: provisionFailed,
		infrav1.ScaleGroupDeletingReason:        deleting,
	} {
		if own != "" {
			reasons[engine] = own
		}
	}
	return ConditionAlias{Type: typ, Reasons: reasons}
}
