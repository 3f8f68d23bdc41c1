package fake_test

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mpool-dev/mpool/internal/provider/contract/contracttest"
	"github.com/mpool-dev/mpool/internal/scalegroup"
	"github.com/mpool-dev/mpool/internal/scalegroup/fake"
)

// TestFakeKeepsTheContract: the fake passes the suite every provider's
// ScaleGroup passes, so tests that use it test against the contract.
func TestFakeKeepsTheContract(t *testing.T) {
	f := fake.New(clocktesting.NewFakePassiveClock(time.Unix(0, 0)), scalegroup.Capabilities{})
	contracttest.ScaleGroup(t, contracttest.ScaleGroupCase{
		ScaleGroup: f,
		Ref:        func(name string) scalegroup.Ref { return scalegroup.Ref{Name: name} },
		Spec: func(capacity int32, hash string) scalegroup.GroupSpec {
			return scalegroup.GroupSpec{Capacity: capacity, ModelHash: hash, Model: scalegroup.Model{Zones: []string{"a", "b"}}}
		},
		Throttle: func() func() {
			f.Fail("Get", scalegroup.NewThrottled("slow down", time.Second))
			return func() {}
		},
	})
}
