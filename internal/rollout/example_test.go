package rollout_test

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/mpool-dev/mpool/internal/rollout"
)

// A pool of three on an old model, rolled with the seeds' strategy
// (maxSurge 25%, maxUnavailable 1): one old instance goes at once and the
// group grows to desired + surge with instances on the new model.
func ExamplePlan() {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	old := func(id string, age time.Duration) rollout.Instance {
		return rollout.Instance{
			ID: id, CreatedAt: now.Add(-age), ModelHash: "v1",
			State: rollout.StateRunning, ReadySince: ptr.To(now.Add(-age / 2)),
		}
	}
	res, err := rollout.Plan(rollout.Input{
		Desired: 3,
		Strategy: rollout.Strategy{
			MaxSurge:       ptr.To(intstr.FromString("25%")),
			MaxUnavailable: ptr.To(intstr.FromInt32(1)),
			DeletePolicy:   rollout.DeletePolicyOldest,
		},
		ModelHash: "v2",
		Instances: []rollout.Instance{old("a", 3*time.Hour), old("b", 2*time.Hour), old("c", time.Hour)},
		Now:       now,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("target capacity:", res.TargetCapacity)
	for _, v := range res.Delete {
		fmt.Println("delete:", v.ID, v.Reason)
	}
	for _, w := range res.Waiting {
		fmt.Println("waiting:", w.Message)
	}
	// Output:
	// target capacity: 4
	// delete: a Stale
	// waiting: surge exhausted: 4 of max 4 instances (desired 3 + maxSurge 1), 1 still to create
	// waiting: budget exhausted: 1 unavailable of max 1, 2 still to delete
	// waiting: waiting for instances to become available: 2
}
