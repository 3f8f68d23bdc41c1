package aks

import (
	"testing"
	"time"

	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// TestFailedPutRetries: a Failed agent pool's PUT is due RetryBase after it
// was first seen failed, then twice as long after each failed retry, at
// most RetryMax; a pool that succeeds starts over; a failed DELETE is not
// retried.
func TestFailedPutRetries(t *testing.T) {
	var w writes
	ref := scalegroup.Ref{Name: "pool1", Scope: "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/aks"}
	t0 := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	w.started(ref, methodPut, "tok1")
	if got := w.inFlight(ref); got != "tok1" {
		t.Fatalf("in flight %q", got)
	}
	now := t0
	for i, wait := range []time.Duration{RetryBase, 2 * RetryBase, 4 * RetryBase} {
		if at, n := w.failed(ref, now); n != i+1 || !at.Equal(now.Add(wait)) {
			t.Fatalf("failure %d: retry %d at %v; want retry %d at %v", i+1, n, at, i+1, now.Add(wait))
		}
		if w.inFlight(ref) != "" || w.retryDue(ref, now.Add(wait-time.Second)) || !w.retryDue(ref, now.Add(wait)) {
			t.Fatalf("failure %d: in flight %q, due early %v, due on time %v", i+1, w.inFlight(ref),
				w.retryDue(ref, now.Add(wait-time.Second)), w.retryDue(ref, now.Add(wait)))
		}
		w.retrying(ref)
		w.started(ref, methodPut, "tok")
		now = now.Add(wait + time.Minute)
	}
	if got := retryBackoff(20); got != RetryMax {
		t.Fatalf("backoff after 20 retries %v, want %v", got, RetryMax)
	}
	w.succeeded(ref)
	if at, n := w.failed(ref, now); n != 1 || !at.Equal(now.Add(RetryBase)) {
		t.Fatalf("after a success: retry %d at %v; want 1 at %v", n, at, now.Add(RetryBase))
	}
	w.started(ref, methodDelete, "del")
	if _, n := w.failed(ref, now); n != 0 || w.retryDue(ref, now.Add(time.Hour)) {
		t.Fatalf("a failed DELETE is retried (%d)", n)
	}
}

// TestDrainTimeoutInMinutes: the MachinePool's nodeDrainTimeout is AKS's
// drainTimeoutInMinutes rounded up to whole minutes within 1 and 1440;
// none sends none.
func TestDrainTimeoutInMinutes(t *testing.T) {
	for _, c := range []struct {
		seconds *int32
		want    int32
	}{{nil, 0}, {new(int32), 0}, {ptrTo(1), 1}, {ptrTo(60), 1}, {ptrTo(61), 2}, {ptrTo(1800), 30}, {ptrTo(1 << 30), 1440}} {
		if got := drainTimeoutInMinutes(c.seconds); got != c.want {
			t.Errorf("nodeDrainTimeout %v s: drainTimeoutInMinutes %d, want %d", c.seconds, got, c.want)
		}
	}
}

func ptrTo(n int32) *int32 { return &n }
