package preview

import (
	"encoding/json"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// AutoRollbackAnnotation on a MachinePool (or its infra pool, which
	// wins): "true" makes the engine undo a change itself when its rollout
	// stops (the progress deadline passed, or replacements kept failing):
	// it restores the previous revision (internal/history) and rolls the
	// pool back to it within the budgets. Unset or anything else: off, the
	// rollout only pauses.
	AutoRollbackAnnotation = "mpool.dev/auto-rollback"
	// RolledBackAnnotation on an infra pool is the engine's record of its
	// last automatic rollback (RollBack, JSON). A model the engine rolled
	// back to is not rolled back again if its own rollout stops: it pauses.
	RolledBackAnnotation = "mpool.dev/rolled-back"
)

// AutoRollback reports whether AutoRollbackAnnotation is on for the pool's
// objects (later ones win: the MachinePool, then the infra pool).
func AutoRollback(objs ...metav1.Object) bool {
	on := false
	for _, o := range objs {
		if o == nil {
			continue
		}
		if v, ok := o.GetAnnotations()[AutoRollbackAnnotation]; ok {
			on = strings.TrimSpace(v) == "true"
		}
	}
	return on
}

// RollBack is the engine's record of an automatic rollback.
type RollBack struct {
	// From is the model whose rollout stopped; To the model restored, of
	// revision Revision.
	From     string `json:"from"`
	To       string `json:"to"`
	Revision int64  `json:"revision"`
	// Reason is why the rollout of From stopped (ProgressDeadlineExceeded,
	// ReplacementsFailing).
	Reason string `json:"reason"`
}

// String encodes the record for the annotation.
func (r RollBack) String() string {
	b, _ := json.Marshal(r)
	return string(b)
}

// ParseRollBack reads the annotation's record; false when there is none.
func ParseRollBack(s string) (RollBack, bool) {
	var r RollBack
	if s == "" || json.Unmarshal([]byte(s), &r) != nil || r.To == "" {
		return RollBack{}, false
	}
	return r, true
}
