package gcp

import (
	"testing"

	"github.com/mpool-dev/mpool/sim/face/gcpface"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// ops returns how many requests of operation op the GCP face answered
// with a status below 300.
func ops(f *itest.Fixture, op string) int64 { return f.Ops(gcpface.GCPFaceName, op) }

// templates lists the pool's instance templates at the simulated Compute
// Engine.
func templates(f *itest.Fixture) []string {
	return gcpface.GCPTemplates(f.Cloud.Cloud(), gcpface.GCPDefaultProject, itest.MIG(f)+"-")
}

// deletePoolAndWaitGone deletes the MachinePool and waits until nothing of
// it is left (itest.Fixture.DeletePoolAndWaitGone: the group, Nodes and
// objects), then checks that no instance template of it is left either.
func deletePoolAndWaitGone(f *itest.Fixture) {
	f.T.Helper()
	f.DeletePoolAndWaitGone(converge)
	if g := f.Group(); g != nil {
		f.T.Errorf("the managed instance group is left: %+v", g)
	}
	if left := templates(f); len(left) > 0 {
		f.T.Errorf("instance templates left: %v", left)
	}
}

// checkAtRest: with the pool converged, reconciles write nothing and read
// the group once each, at two requests a read (the group and one page of
// its managed instances).
func checkAtRest(t *testing.T, f *itest.Fixture, m *itest.Manager) {
	t.Helper()
	reconciles := f.SteadyState(t, m, 3)
	reads := m.ScaleGroup.Counts().Reads()
	all, writes := f.Requests()
	t.Logf("at rest: %d reconciles, %d reads of the group, %d Compute Engine requests, %d writes", reconciles, reads, all, writes)
	if writes != 0 {
		t.Errorf("%d writes at rest", writes)
	}
	if reads > reconciles {
		t.Errorf("%d reads of the group in %d reconciles, want one each", reads, reconciles)
	}
	if all != 2*reads {
		t.Errorf("%d Compute Engine requests for %d reads, want 2 each (the group, one page of instances): %v", all, reads, f.Cloud.Stats().Requests)
	}
}
