package aks

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/controller/infrapool"
	"github.com/mpool-dev/mpool/internal/events"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/face/azureface"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// TestAKSFailedPoolRetriesOnBackoff: an agent pool AKS left Failed (a
// scale-in whose node no budget lets drain) costs no cloud write and no
// event between retries, however often the pool is reconciled: the same
// PUT is sent again only at the backoff's times (FailedRetry, then twice
// as long), one ScaleGroupChangeFailed event per failure and one
// ScaleGroupApplied per retry, ScaleGroupReady saying "retrying in Xs,
// attempt N". The backoff is recorded on the pool
// (infrapool.ApplyRetryAnnotation): a restarted manager neither retries
// at once nor forgets the attempt count. Once the budget lets the pod
// go, the next retry completes the scale-in and the record goes.
func TestAKSFailedPoolRetriesOnBackoff(t *testing.T) {
	const base = 10 * time.Second
	tune := func(o *manager.Options) { o.EngineTiming.FailedRetry = base }
	f, m := startDrainingCloud(t, tune)
	_, victim, p0 := blockScaleIn(t, f)
	f.WaitPoolCondition(converge, infrav1.ScaleGroupReadyCondition, metav1.ConditionFalse, azureface.AKSCodePodDrainFailure, victim,
		"retrying in 10s", "attempt 1")
	rec := retryRecord(t, f, 0)
	applied, failed := poolEvents(t, f, events.ScaleGroupApplied), poolEvents(t, f, events.ScaleGroupChangeFailed)
	if failed != 1 {
		t.Fatalf("%d %s events for one failure", failed, events.ScaleGroupChangeFailed)
	}

	// Reconciles before the retry is due write nothing to AKS, record no
	// event, and read the agent pool once each (no Apply).
	gets := func() int64 { return f.Ops(azureface.AzureFaceName, azureface.OpAKSAgentPoolsGet) }
	r0, g0 := f.Reconciles(), gets()
	f.PokeUntilReconciled(t, 5)
	if time.Since(rec.FailedAt) < base-time.Second {
		if n := agentPoolPuts(f) - p0; n != 1 {
			t.Fatalf("%d agent pool PUTs before the retry was due; want the failed scale-in only", n)
		}
		if r, g := f.Reconciles()-r0, gets()-g0; g > r+1 {
			t.Fatalf("%d agent pool GETs in %d reconciles before the retry was due; want one each at most (one more in flight)", g, r)
		}
		if a, fl := poolEvents(t, f, events.ScaleGroupApplied), poolEvents(t, f, events.ScaleGroupChangeFailed); a != applied || fl != failed {
			t.Fatalf("events before the retry was due: %s %d → %d, %s %d → %d", events.ScaleGroupApplied, applied, a,
				events.ScaleGroupChangeFailed, failed, fl)
		}
	} else {
		t.Logf("the reconciles took past the retry's time (%s since the failure): not counted", time.Since(rec.FailedAt))
	}

	// The retry, at its time: one PUT, one event; it fails again and
	// waits twice as long.
	testenv.Eventually(t, converge, func() error {
		if n := agentPoolPuts(f) - p0; n < 2 {
			return fmt.Errorf("%d agent pool PUTs; want the retry", n)
		}
		return nil
	})
	if early := rec.FailedAt.Add(base - time.Second); time.Now().Before(early) {
		t.Fatalf("retried before %s", early)
	}
	f.WaitPoolCondition(converge, infrav1.ScaleGroupReadyCondition, metav1.ConditionFalse, azureface.AKSCodePodDrainFailure,
		"retrying in 20s", "attempt 2")
	rec = retryRecord(t, f, 1)
	if n := agentPoolPuts(f) - p0; n != 2 {
		t.Fatalf("%d agent pool PUTs after one retry; want 2", n)
	}
	if a := poolEvents(t, f, events.ScaleGroupApplied); a != applied+1 {
		t.Fatalf("%d %s events after one retry; want %d", a, events.ScaleGroupApplied, applied+1)
	}
	if fl := poolEvents(t, f, events.ScaleGroupChangeFailed); fl != 2 {
		t.Fatalf("%d %s events after the retry failed; want 2", fl, events.ScaleGroupChangeFailed)
	}

	// A restarted manager keeps the backoff and the count.
	m.Stop()
	f.StartManager(tune)
	f.PokeUntilReconciled(t, 3)
	if time.Since(rec.FailedAt) < 2*base-time.Second {
		if n := agentPoolPuts(f) - p0; n != 2 {
			t.Fatalf("%d agent pool PUTs right after the restart; want 2 (the retry waits for its time)", n)
		}
		f.WaitPoolCondition(converge, infrav1.ScaleGroupReadyCondition, metav1.ConditionFalse, "retrying in 20s", "attempt 2")
	}

	// The budget lets the pod go: retry 2 completes the scale-in.
	f.Unguard()
	testenv.Eventually(t, converge+2*base, func() error { return f.Converged(1, version) })
	if n := agentPoolPuts(f) - p0; n != 3 {
		t.Fatalf("%d agent pool PUTs; want the scale-in and 2 retries", n)
	}
	testenv.Eventually(t, converge, func() error {
		if v, ok := poolAnnotations(t, f)[infrapool.ApplyRetryAnnotation]; ok {
			return fmt.Errorf("the retry record %s is still there", v)
		}
		return nil
	})
}

// retryRecord is the pool's retry record, once it counts attempts retries
// and a failure seen since.
func retryRecord(t *testing.T, f *itest.Fixture, attempts int) (r struct {
	Attempts int       `json:"attempts"`
	FailedAt time.Time `json:"failedAt"`
}) {
	t.Helper()
	testenv.Eventually(t, converge, func() error {
		v := poolAnnotations(t, f)[infrapool.ApplyRetryAnnotation]
		if err := json.Unmarshal([]byte(v), &r); err != nil {
			return fmt.Errorf("annotation %s %q: %w", infrapool.ApplyRetryAnnotation, v, err)
		}
		if r.Attempts != attempts || r.FailedAt.IsZero() {
			return fmt.Errorf("annotation %s %s; want %d attempts and a failure", infrapool.ApplyRetryAnnotation, v, attempts)
		}
		return nil
	})
	return r
}

func poolAnnotations(t *testing.T, f *itest.Fixture) map[string]string {
	t.Helper()
	pool := &infrav1.AzureManagedMachinePool{}
	if err := env.Client.Get(f.Ctx, f.Key(itest.AKS.PoolName), pool); err != nil {
		t.Fatal(err)
	}
	return pool.Annotations
}

// poolEvents counts the events of reason on the pool, each repeat of a
// series included.
func poolEvents(t *testing.T, f *itest.Fixture, reason string) int {
	t.Helper()
	list, err := f.CS.EventsV1().Events(f.NS).List(f.Ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range list.Items {
		if ev.Reason != reason || ev.Regarding.Name != itest.AKS.PoolName || !strings.HasPrefix(ev.Regarding.Kind, "AzureManagedMachinePool") {
			continue
		}
		n++
		if ev.Series != nil {
			n += int(ev.Series.Count) - 1
		}
	}
	return n
}
