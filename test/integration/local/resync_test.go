package local

import (
	"fmt"
	"testing"
	"time"

	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/testenv"
)

// TestSyncPeriodLooksAtPoolsAtRest: a pool at rest gets no event, so only
// the manager's --sync-period pass looks at its cloud group again (a change
// made in the cloud alone is seen within that period): it keeps coming,
// one cloud read and no write each.
func TestSyncPeriodLooksAtPoolsAtRest(t *testing.T) {
	f, m := start(t, cloudOptions{}, managerOptions{tune: func(o *manager.Options) { o.SyncPeriod = time.Second }})
	f.createPool(poolSpec{replicas: 2})
	f.waitConverged(2, v1, "", converge)

	m.ScaleGroup.ResetCounts()
	before := f.Reconciles()
	const passes = 6
	testenv.Eventually(t, time.Minute, func() error {
		if n := f.Reconciles() - before; n < passes {
			return fmt.Errorf("%d reconciles of the pool at rest, want %d (one a second)", n, passes)
		}
		return nil
	})
	if c := m.ScaleGroup.Counts(); c.Writes() != 0 || c.Reads() < passes {
		t.Errorf("the passes at rest made %d cloud reads and %d writes, want one read each and no write", c.Reads(), c.Writes())
	}
}
