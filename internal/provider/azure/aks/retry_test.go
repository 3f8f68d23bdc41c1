package aks

import (
	"testing"

	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// TestWrites: the operation mpool started is in flight until the pool is
// seen at rest (failed or not); one recorded by an earlier process is
// taken only when this process knows of none; a deleted pool is
// forgotten.
func TestWrites(t *testing.T) {
	var w writes
	ref := scalegroup.Ref{Name: "pool1", Scope: "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/aks"}
	w.recorded(ref, scalegroup.Operation{ResumeToken: "old"})
	if got := w.inFlight(ref); got != "old" {
		t.Fatalf("in flight %q, want the recorded operation", got)
	}
	w.started(ref, methodPut, "tok1")
	w.recorded(ref, scalegroup.Operation{ResumeToken: "old"})
	if got := w.inFlight(ref); got != "tok1" {
		t.Fatalf("in flight %q, want this process's", got)
	}
	w.settled(ref)
	if got := w.inFlight(ref); got != "" {
		t.Fatalf("in flight %q after the pool was seen Failed", got)
	}
	w.started(ref, methodPut, "tok2")
	w.succeeded(ref)
	if got := w.inFlight(ref); got != "" {
		t.Fatalf("in flight %q after the pool was seen at rest", got)
	}
	w.gone(ref)
	if w.get(ref, false) != nil {
		t.Fatal("a deleted pool is remembered")
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
