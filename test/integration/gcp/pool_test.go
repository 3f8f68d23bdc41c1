package gcp

import (
	"strings"
	"testing"
	"time"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/sim/face/gcpface"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// converge bounds every wait for a pool to settle.
const converge = 2 * time.Minute

// seedVersion is the version examples/gcp's MachinePool asks for;
// nextVersion the one the tests roll to.
const (
	seedVersion = "v1.30.4"
	nextVersion = "v1.31.2"
)

// TestExamplePool: examples/gcp becomes a Running pool of managed
// instances joined as Nodes named after their instances, with gce://
// providerIDs; at rest a reconcile writes nothing; it scales 2→4; a
// machine type change rolls every instance within maxSurge 1 and
// maxUnavailable 0 (a new instance template, set on the group, the engine
// surging and deleting), and so does a version change (CAPG's image family
// of the new minor); deleting one GCPMachinePoolMachine replaces that
// instance only; deleting the pool leaves no group, instance template,
// Node or object.
func TestExamplePool(t *testing.T) {
	f, m := itest.Start(t, env, itest.GCP, itest.CloudOptions{})
	f.ApplySeed()
	f.WaitConverged(2, seedVersion, converge)

	prefix := "gce://" + gcpface.GCPDefaultProject + "/us-central1-"
	for _, n := range f.PoolNodes() {
		if !strings.HasPrefix(n.Spec.ProviderID, prefix) || !strings.HasSuffix(n.Spec.ProviderID, "/"+n.Name) {
			t.Errorf("Node %s has providerID %s, want %s<zone>/%s", n.Name, n.Spec.ProviderID, prefix, n.Name)
		}
	}
	pool := itest.Pool[*infrav1.GCPMachinePool](f)
	if !strings.HasPrefix(pool.Status.InstanceTemplate, itest.MIG(f)+"-") {
		t.Errorf("status.instanceTemplate %q, want the group's template", pool.Status.InstanceTemplate)
	}

	t.Log("at rest: reads only, one read of the group per reconcile")
	checkAtRest(t, f, m)

	t.Log("scale 2 → 4")
	f.Scale(4)
	f.WaitConverged(4, seedVersion, converge)

	t.Log("a machine type change rolls every instance within the budgets")
	before := f.InstanceIDs()
	w := itest.WatchBudgets(f, 4, 1, 0)
	itest.UpdatePool(f, func(p *infrav1.GCPMachinePool) { p.Spec.InstanceType = "e2-standard-4" })
	f.WaitRolled(before, 4, seedVersion, converge)
	w.AssertHeld()
	for _, in := range f.Group().Instances {
		if !strings.Contains(in.ModelHash, itest.MIG(f)) {
			t.Errorf("instance %s was created from %q", in.ID, in.ModelHash)
		}
	}
	if g := f.Group(); g.Model.InstanceType != "e2-standard-4" {
		t.Errorf("the group's template has machine type %s", g.Model.InstanceType)
	}

	t.Log("a version change rolls every instance within the budgets")
	before = f.InstanceIDs()
	w = itest.WatchBudgets(f, 4, 1, 0)
	f.SetVersion(nextVersion)
	f.WaitRolled(before, 4, nextVersion, converge)
	w.AssertHeld()
	if img := f.Group().Model.Image; !strings.HasSuffix(img, "-v1-31") {
		t.Errorf("after the version change the group's image is %s, want CAPG's v1.31 family", img)
	}

	t.Log("deleting one GCPMachinePoolMachine replaces that instance only")
	f.DeleteOneMachine(4, nextVersion, converge)

	t.Log("deleting the pool leaves nothing")
	deletePoolAndWaitGone(f)
}

// TestUnknownMachineType: a machine type Compute Engine does not offer is
// reported in a condition naming it and what to change; nothing is
// created; the pool recovers once it is fixed.
func TestUnknownMachineType(t *testing.T) {
	f, _ := itest.Start(t, env, itest.GCP, itest.CloudOptions{})
	f.ApplySeed(itest.SetField("GCPMachinePool", "n9-huge-1", "spec", "instanceType"))
	f.WaitCondition(converge, infrav1.InstanceGroupReadyCondition, infrav1.InvalidSpecReason, "n9-huge-1", "does not exist")
	if g := f.Group(); g != nil {
		t.Fatalf("a group exists although its machine type was refused: %+v", g)
	}
	itest.UpdatePool(f, func(p *infrav1.GCPMachinePool) { p.Spec.InstanceType = "n2-standard-2" })
	f.WaitConverged(2, seedVersion, converge)
}
