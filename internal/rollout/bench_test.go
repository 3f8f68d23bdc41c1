package rollout

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/utils/ptr"
)

// BenchmarkPlan1000 plans one step of rolling a 1,000-instance pool with
// maxSurge 25%, maxUnavailable 0: 700 stale instances, 250 up-to-date and
// available, 50 up-to-date booting, 20 failed.
func BenchmarkPlan1000(b *testing.B) {
	for _, policy := range []DeletePolicy{DeletePolicyOldest, DeletePolicyRandom} {
		b.Run(string(policy), func(b *testing.B) {
			in := Input{
				Desired:   1000,
				Strategy:  strategy("25%", "0"),
				ModelHash: current,
				Now:       t0,
				RandSeed:  7,
			}
			in.Strategy.DeletePolicy = policy
			in.Strategy.MinReadySeconds = 30
			add := func(n int, model string, state InstanceState, ready bool) {
				for range n {
					k := len(in.Instances)
					i := Instance{
						ID:        fmt.Sprintf("vm-%05d", k),
						Zone:      fmt.Sprintf("zone-%d", k%3),
						CreatedAt: t0.Add(-time.Duration(10000-k) * time.Second),
						ModelHash: model,
						State:     state,
					}
					if ready {
						i.ReadySince = ptr.To(t0.Add(-time.Hour))
					}
					in.Instances = append(in.Instances, i)
				}
			}
			add(700, previous, StateRunning, true)
			add(250, current, StateRunning, true)
			add(50, current, StatePending, false)
			add(20, current, StateFailed, false)

			b.ReportAllocs()
			for b.Loop() {
				if _, err := Plan(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
