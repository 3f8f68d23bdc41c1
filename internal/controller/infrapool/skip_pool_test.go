package infrapool

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/mpool-dev/mpool/internal/rollout"
)

// TestPoolSkipModelReconciliation: a pool whose adapter sets
// Desired.SkipModelReconciliation (AWS's refreshPreferences.disable) keeps
// its stale instances as the SkipMachinePoolModelReconciliation gate does,
// for that pool only: a scale-up adds instances, none is replaced, and
// ScaleGroupModelUpdated says why.
func TestPoolSkipModelReconciliation(t *testing.T) {
	takeDown := rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(0)), MaxUnavailable: ptr.To(intstr.FromInt32(1))}
	fx := []fixture{running("a", 3*time.Hour, "old"), running("b", 2*time.Hour, "old")}
	const why = "spec.refreshPreferences.disable is true"
	for _, tc := range []struct {
		name         string
		reason       string
		desired      int32
		skip         string
		wantVictims  bool
		wantCapacity int32
	}{
		{name: "without it stale instances are replaced", reason: "control: the engine rolls the pool", desired: 2, wantVictims: true, wantCapacity: 2},
		{name: "with it they stay", reason: "the pool's switch stops replacement", desired: 2, skip: why, wantCapacity: 2},
		{name: "with it a scale-up only adds", reason: "new instances get the new model, old ones stay", desired: 3, skip: why, wantCapacity: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, s := glueScope(fx, tc.desired, takeDown)
			s.desired.SkipModelReconciliation = tc.skip
			in := e.rolloutInput(s)
			res, err := rollout.Plan(in)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(res.Delete) > 0; got != tc.wantVictims {
				t.Fatalf("victims %v: want some %v (%s)", res.Delete, tc.wantVictims, tc.reason)
			}
			deleted := map[string]bool{}
			for _, v := range res.Delete {
				deleted[v.ID] = true
			}
			if c := capacity(res, in, s.cloud.Instances, deleted); c != tc.wantCapacity {
				t.Fatalf("capacity %d, want %d (%s)", c, tc.wantCapacity, tc.reason)
			}
			s.plan, s.planned = res, true
			c := modelUpdatedCondition(s, false)
			if has := strings.Contains(c.Message, why+": they are not replaced"); has != (tc.skip != "") {
				t.Fatalf("ScaleGroupModelUpdated message %q: want the reason %v", c.Message, tc.skip != "")
			}
		})
	}
}
