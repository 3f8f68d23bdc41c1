package core

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// newTestCloud starts a cloud on a fake clock; it is stopped with the test.
func newTestCloud(t *testing.T, clk *clocktesting.FakeClock, dir string, sim Simulation) *Cloud {
	t.Helper()
	return startCloud(t, Options{Clock: clk, DataDir: dir, Seed: 42, DefaultSimulation: &sim})
}

// startCloud starts a cloud with opts; it is stopped with the test.
func startCloud(t *testing.T, opts Options) *Cloud {
	t.Helper()
	c, err := NewCloud(context.Background(), opts)
	if err != nil {
		t.Fatalf("NewCloud: %v", err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	return c
}

func mustApply(t *testing.T, c *Cloud, name string, spec GroupSpec) *Group {
	t.Helper()
	g, err := c.ApplyGroup(name, spec)
	if err != nil {
		t.Fatalf("ApplyGroup(%s): %v", name, err)
	}
	return g
}

func mustGet(t *testing.T, c *Cloud, name string) *Group {
	t.Helper()
	g, err := c.GetGroup(name)
	if err != nil {
		t.Fatalf("GetGroup(%s): %v", name, err)
	}
	return g
}

func countStates(g *Group) map[InstanceState]int {
	m := map[InstanceState]int{}
	for _, in := range g.Instances {
		m[in.State]++
	}
	return m
}

func ids(g *Group) []string {
	out := make([]string, len(g.Instances))
	for i, in := range g.Instances {
		out[i] = in.ID
	}
	return out
}

func TestBootDelayAndJitter(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c := newTestCloud(t, clk, "", Simulation{ProvisionDelay: time.Second, BootDelay: 10 * time.Second, BootJitter: 2 * time.Second})
	g := mustApply(t, c, "pool", GroupSpec{Capacity: 50, ModelHash: "a"})
	if got := countStates(g)[StateCreating]; got != 50 {
		t.Fatalf("right after Apply: %d Creating, want 50", got)
	}
	if !g.Operation.isScale() {
		t.Fatalf("right after Apply: operation = %+v, want a Scale operation", g.Operation)
	}

	clk.Step(time.Second) // provisioned
	if got := countStates(mustGet(t, c, "pool"))[StateBooting]; got != 50 {
		t.Fatalf("after the provision delay: %d Booting, want 50", got)
	}
	if op := mustGet(t, c, "pool").Operation; op != nil {
		t.Fatalf("after provisioning the operation should be done, got %+v", op)
	}
	clk.Step(8*time.Second - time.Nanosecond) // just before the earliest possible boot (10s - 2s)
	if got := countStates(mustGet(t, c, "pool"))[StateRunning]; got != 0 {
		t.Fatalf("before delay-jitter: %d Running, want 0", got)
	}
	clk.Step(2*time.Second + time.Nanosecond) // at the nominal delay: jitter spreads boots around it
	mid := countStates(mustGet(t, c, "pool"))
	if mid[StateRunning] == 0 || mid[StateBooting] == 0 {
		t.Fatalf("at the nominal boot delay jitter should leave some booting and some running, got %v", mid)
	}
	clk.Step(2 * time.Second) // delay+jitter: everyone booted
	if got := countStates(mustGet(t, c, "pool"))[StateRunning]; got != 50 {
		t.Fatalf("after delay+jitter: %d Running, want 50", got)
	}
}

func (op *Operation) isScale() bool { return op != nil && op.Type == OperationScale }

func TestZeroDelayBootsAtOnce(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c := newTestCloud(t, clk, "", Simulation{})
	mustApply(t, c, "pool", GroupSpec{Capacity: 3})
	g := mustGet(t, c, "pool")
	if got := countStates(g)[StateRunning]; got != 3 || g.Operation != nil {
		t.Fatalf("zero delays: %v running, operation %+v; want 3 running and no operation", countStates(g), g.Operation)
	}
}

func TestFailureRate(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c := newTestCloud(t, clk, "", Simulation{FailureRate: 0.3})
	mustApply(t, c, "pool", GroupSpec{Capacity: 1000})
	g := mustGet(t, c, "pool")
	st := countStates(g)
	if st[StateFailed] < 250 || st[StateFailed] > 350 || st[StateFailed]+st[StateRunning] != 1000 {
		t.Fatalf("failure rate 0.3 over 1000 instances: %v", st)
	}
	for _, in := range g.Instances {
		if in.State == StateFailed && in.Message == "" {
			t.Fatalf("failed instance %s has no message", in.ID)
		}
	}
	// Failed instances count towards the capacity: nothing is replaced.
	if n := len(mustGet(t, c, "pool").Instances); n != 1000 {
		t.Fatalf("%d instances, want 1000 (failed ones are not replaced by the cloud)", n)
	}
}

func zoneCounts(g *Group) map[string]int {
	m := map[string]int{}
	for _, in := range g.Instances {
		if in.State != StateDeleting {
			m[in.Zone]++
		}
	}
	return m
}

func TestZonesBalanced(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c := newTestCloud(t, clk, "", Simulation{})
	model := Model{Zones: []string{"z1", "z2", "z3"}}
	tests := []struct {
		name     string
		capacity int32
		want     map[string]int
	}{
		{name: "scale out spreads evenly, earlier zones first on ties", capacity: 10, want: map[string]int{"z1": 4, "z2": 3, "z3": 3}},
		{name: "scale in takes from the fullest zone", capacity: 6, want: map[string]int{"z1": 2, "z2": 2, "z3": 2}},
		{name: "scale out again stays balanced", capacity: 8, want: map[string]int{"z1": 3, "z2": 3, "z3": 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustApply(t, c, "pool", GroupSpec{Capacity: tt.capacity, Model: model})
			if got := zoneCounts(mustGet(t, c, "pool")); !mapsEqual(got, tt.want) {
				t.Fatalf("zones = %v, want %v", got, tt.want)
			}
		})
	}

	// Deleting two instances of z1 and scaling back out refills z1.
	g := mustGet(t, c, "pool")
	var z1 []string
	for _, in := range g.Instances {
		if in.Zone == "z1" {
			z1 = append(z1, in.ID)
		}
	}
	if _, err := c.DeleteInstances("pool", z1[:2]); err != nil {
		t.Fatal(err)
	}
	mustApply(t, c, "pool", GroupSpec{Capacity: 8, Model: model})
	if got := zoneCounts(mustGet(t, c, "pool")); got["z1"] != 3 {
		t.Fatalf("after refilling: zones = %v, want z1 refilled to 3", got)
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestScaleInPrefersFailedThenNewest(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c := newTestCloud(t, clk, "", Simulation{})
	mustApply(t, c, "pool", GroupSpec{Capacity: 4})
	rate := 1.0
	if _, err := c.SetSimulation("pool", SimulationPatch{FailureRate: &rate}); err != nil {
		t.Fatal(err)
	}
	mustApply(t, c, "pool", GroupSpec{Capacity: 5}) // the fifth fails
	g := mustGet(t, c, "pool")
	failed := g.Instances[4]
	if failed.State != StateFailed {
		t.Fatalf("fifth instance is %s, want Failed", failed.State)
	}
	// Scale in by 2: the failed one, then the newest healthy one.
	g = mustApply(t, c, "pool", GroupSpec{Capacity: 3})
	var deleting []string
	for _, in := range g.Instances {
		if in.State == StateDeleting {
			deleting = append(deleting, in.ID)
		}
	}
	want := []string{g.Instances[3].ID, failed.ID}
	if !slices.Equal(deleting, want) {
		t.Fatalf("scale-in victims = %v, want %v (failed first, then newest)", deleting, want)
	}
}

func TestDeleteInstances(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c := newTestCloud(t, clk, "", Simulation{DeleteDelay: 5 * time.Second})
	g := mustApply(t, c, "pool", GroupSpec{Capacity: 4})
	victim := g.Instances[1].ID

	g, err := c.DeleteInstances("pool", []string{victim, "i-does-not-exist"})
	if err != nil {
		t.Fatalf("DeleteInstances: %v", err)
	}
	if g.Capacity != 3 {
		t.Fatalf("capacity = %d, want 3 (lowered by the one instance deleted)", g.Capacity)
	}
	if g.Operation == nil {
		t.Fatalf("deleting with a delay should report an operation")
	}
	// Deleting again does not lower the capacity twice.
	g, _ = c.DeleteInstances("pool", []string{victim})
	if g.Capacity != 3 {
		t.Fatalf("capacity after repeating the delete = %d, want 3", g.Capacity)
	}
	if st := countStates(g); st[StateDeleting] != 1 || len(g.Instances) != 4 {
		t.Fatalf("during the delete delay: %v, want 1 Deleting of 4", st)
	}
	clk.Step(5 * time.Second)
	g = mustGet(t, c, "pool")
	if len(g.Instances) != 3 || slices.Contains(ids(g), victim) || g.Operation != nil {
		t.Fatalf("after the delete delay: %v, operation %+v; want the victim gone and no operation", ids(g), g.Operation)
	}
	if _, err := c.DeleteInstances("missing", []string{"x"}); CodeOf(err) != CodeNotFound {
		t.Fatalf("DeleteInstances on a missing group: %v, want NotFound", err)
	}
}

func TestApplyIdempotentAndModelChange(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c := newTestCloud(t, clk, "", Simulation{})
	spec := GroupSpec{Capacity: 2, ModelHash: "a", Model: Model{Image: "img-1", CustomData: []byte("#cloud-config\n")}}
	first := mustApply(t, c, "pool", spec)
	mustGet(t, c, "pool")
	again := mustApply(t, c, "pool", spec)
	if !slices.Equal(ids(first), ids(again)) || again.Operation != nil {
		t.Fatalf("re-applying the same spec changed the group: %v → %v, operation %+v", ids(first), ids(again), again.Operation)
	}
	if again.Model.CustomData != nil {
		t.Fatalf("snapshots must not carry custom data")
	}

	g := mustApply(t, c, "pool", GroupSpec{Capacity: 3, ModelHash: "b", Model: Model{Image: "img-2"}})
	if g.ModelHash != "b" || g.Model.Image != "img-2" {
		t.Fatalf("group model = %s/%s, want b/img-2", g.ModelHash, g.Model.Image)
	}
	var hashes []string
	for _, in := range g.Instances {
		hashes = append(hashes, in.ModelHash)
	}
	if !slices.Equal(hashes, []string{"a", "a", "b"}) {
		t.Fatalf("instance model hashes = %v, want existing instances untouched: [a a b]", hashes)
	}
}

func TestDeleteGroup(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c := newTestCloud(t, clk, "", Simulation{DeleteDelay: time.Second})
	mustApply(t, c, "pool", GroupSpec{Capacity: 2})
	g, err := c.DeleteGroup("pool")
	if err != nil {
		t.Fatalf("DeleteGroup: %v", err)
	}
	if g.Operation == nil || g.Operation.Type != OperationDelete {
		t.Fatalf("operation = %+v, want Delete", g.Operation)
	}
	if _, err := c.ApplyGroup("pool", GroupSpec{Capacity: 1}); CodeOf(err) != CodeConflict {
		t.Fatalf("Apply during deletion: %v, want Conflict", err)
	}
	if _, err := c.DeleteGroup("pool"); err != nil {
		t.Fatalf("DeleteGroup again during deletion: %v", err)
	}
	clk.Step(time.Second)
	if _, err := c.GetGroup("pool"); CodeOf(err) != CodeNotFound {
		t.Fatalf("Get after deletion: %v, want NotFound", err)
	}
	if _, err := c.DeleteGroup("pool"); CodeOf(err) != CodeNotFound {
		t.Fatalf("DeleteGroup after deletion: %v, want NotFound", err)
	}
}

func TestValidation(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c := newTestCloud(t, clk, "", Simulation{})
	tests := []struct {
		name  string
		group string
		spec  GroupSpec
	}{
		{name: "upper-case name", group: "Pool", spec: GroupSpec{Capacity: 1}},
		{name: "slash in name", group: "a/b", spec: GroupSpec{Capacity: 1}},
		{name: "negative capacity", group: "p", spec: GroupSpec{Capacity: -1}},
		{name: "empty zone", group: "p", spec: GroupSpec{Capacity: 1, Model: Model{Zones: []string{""}}}},
		{name: "failure rate above 1", group: "p", spec: GroupSpec{Capacity: 1, Simulation: &SimulationPatch{FailureRate: ptr.To(1.5)}}},
		{name: "negative boot delay", group: "p", spec: GroupSpec{Capacity: 1, Simulation: &SimulationPatch{BootDelay: ptr.To(-time.Second)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := c.ApplyGroup(tt.group, tt.spec); CodeOf(err) != CodeInvalid {
				t.Fatalf("ApplyGroup: %v, want InvalidParameter", err)
			}
		})
	}
}

func TestQuota(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c := startCloud(t, Options{Clock: clk, MaxInstances: 5, DefaultSimulation: &Simulation{}})
	mustApply(t, c, "a", GroupSpec{Capacity: 3})
	if _, err := c.ApplyGroup("b", GroupSpec{Capacity: 3}); CodeOf(err) != CodeQuotaExceeded {
		t.Fatalf("exceeding the quota: %v, want QuotaExceeded", err)
	}
	mustApply(t, c, "b", GroupSpec{Capacity: 2})
}

func TestPersistenceAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	clk := clocktesting.NewFakeClock(t0)
	sim := Simulation{BootDelay: 10 * time.Second}
	c1, err := NewCloud(context.Background(), Options{Clock: clk, DataDir: dir, Seed: 1, DefaultSimulation: &sim})
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, c1, "pool", GroupSpec{Capacity: 3, ModelHash: "h", Model: Model{Zones: []string{"z1", "z2"}, CustomData: []byte("data")}})
	clk.Step(3 * time.Second)
	before := mustGet(t, c1, "pool")
	if st := countStates(before); st[StateBooting] != 3 {
		t.Fatalf("before the restart: %v, want 3 Booting", st)
	}
	if err := c1.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, stateFile)); err != nil {
		t.Fatalf("state file: %v", err)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, stateFile+".tmp-*"))
	if len(matches) != 0 {
		t.Fatalf("temporary files left behind: %v", matches)
	}

	// The cloud process restarts later; the VMs kept booting meanwhile.
	clk.Step(2 * time.Second)
	c2 := newTestCloud(t, clk, dir, Simulation{})
	after := mustGet(t, c2, "pool")
	if !slices.Equal(ids(before), ids(after)) || after.ModelHash != "h" || after.Capacity != 3 {
		t.Fatalf("after the restart: ids %v hash %s capacity %d; want %v h 3", ids(after), after.ModelHash, after.Capacity, ids(before))
	}
	if st := countStates(after); st[StateBooting] != 3 {
		t.Fatalf("after the restart, 5s into a 10s boot: %v, want 3 Booting", st)
	}
	if !mapsEqual(zoneCounts(after), zoneCounts(before)) {
		t.Fatalf("zones changed across the restart: %v → %v", zoneCounts(before), zoneCounts(after))
	}
	clk.Step(5 * time.Second)
	if st := countStates(mustGet(t, c2, "pool")); st[StateRunning] != 3 {
		t.Fatalf("booting resumed: %v, want 3 Running", st)
	}

	// The model the instances were created from, custom data included,
	// survived the restart (a VM keeps its bootstrap data).
	c2.mu.Lock()
	gs := c2.st.Groups[LocalKey("pool")]
	data := string(gs.Models[gs.Instances[0].ModelRef].CustomData)
	c2.mu.Unlock()
	if data != "data" {
		t.Fatalf("custom data after the restart = %q, want %q", data, "data")
	}

	// IDs never repeat, even after a restart and deleting everything.
	if _, err := c2.DeleteInstances("pool", ids(after)); err != nil {
		t.Fatal(err)
	}
	g := mustApply(t, c2, "pool", GroupSpec{Capacity: 3, ModelHash: "h"})
	for _, id := range ids(g) {
		if slices.Contains(ids(before), id) {
			t.Fatalf("instance ID %s was reused", id)
		}
	}
}

func TestBackgroundLoopAdvancesWithoutReads(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c := newTestCloud(t, clk, "", Simulation{BootDelay: time.Second})
	mustApply(t, c, "pool", GroupSpec{Capacity: 2})
	running := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		n := 0
		for _, in := range c.st.Groups[LocalKey("pool")].Instances {
			if in.State == StateRunning {
				n++
			}
		}
		return n
	}
	deadline := time.Now().Add(10 * time.Second)
	for running() != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the simulation loop did not boot the instances on its own")
		}
		clk.Step(100 * time.Millisecond)
		time.Sleep(time.Millisecond)
	}
}

func TestFlushBatchesWrites(t *testing.T) {
	dir := t.TempDir()
	clk := clocktesting.NewFakeClock(t0)
	c := newTestCloud(t, clk, dir, Simulation{})
	for i := range 20 {
		mustApply(t, c, fmt.Sprintf("g%d", i), GroupSpec{Capacity: 5})
	}
	if _, err := os.Stat(filepath.Join(dir, stateFile)); err == nil {
		t.Fatalf("state was written before the flush interval elapsed")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		clk.Step(flushInterval)
		if _, err := os.Stat(filepath.Join(dir, stateFile)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("state not written after the flush interval")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestFlushEncodesOnlyChangedGroups: a flush re-encodes the groups that
// changed since the last one and reuses the others' encoding, and the state
// file still holds every group as it is (a fresh cloud reads it back).
func TestFlushEncodesOnlyChangedGroups(t *testing.T) {
	dir := t.TempDir()
	clk := clocktesting.NewFakeClock(t0)
	c := newTestCloud(t, clk, dir, Simulation{})
	mustApply(t, c, "a", GroupSpec{Capacity: 2, ModelHash: "h1"})
	mustApply(t, c, "b", GroupSpec{Capacity: 3, ModelHash: "h1"})
	settle := func() { // every instance Running: no transition due to change a group behind the test's back
		for _, g := range []string{"a", "b"} {
			if st := countStates(mustGet(t, c, g)); st[StateRunning] != len(mustGet(t, c, g).Instances) {
				t.Fatalf("group %s: %v, want all Running", g, st)
			}
		}
	}
	settle()
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	enc := func(name string) json.RawMessage {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.st.Groups[LocalKey(name)].enc
	}
	a1, b1 := enc("a"), enc("b")
	if a1 == nil || b1 == nil {
		t.Fatalf("after a flush both groups keep their encoding: a %d bytes, b %d bytes", len(a1), len(b1))
	}

	mustApply(t, c, "a", GroupSpec{Capacity: 4, ModelHash: "h2"})
	if enc("a") != nil {
		t.Fatalf("group a changed but kept its old encoding")
	}
	settle()
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	if b2 := enc("b"); &b2[0] != &b1[0] {
		t.Errorf("group b did not change but was encoded again")
	}

	c2 := newTestCloud(t, clk, dir, Simulation{})
	a, b := mustGet(t, c2, "a"), mustGet(t, c2, "b")
	if a.Capacity != 4 || a.ModelHash != "h2" || len(a.Instances) != 4 {
		t.Errorf("group a read back: capacity %d, hash %s, %d instances; want 4, h2, 4", a.Capacity, a.ModelHash, len(a.Instances))
	}
	if b.Capacity != 3 || b.ModelHash != "h1" || len(b.Instances) != 3 {
		t.Errorf("group b read back: capacity %d, hash %s, %d instances; want 3, h1, 3", b.Capacity, b.ModelHash, len(b.Instances))
	}
}

// TestStateFileIsTheMarshalledState checks that the state file, put together
// from each group's kept encoding, is byte for byte json.Marshal of the
// state file struct, with and without face data, and that it loads back.
func TestStateFileIsTheMarshalledState(t *testing.T) {
	for _, faces := range []bool{false, true} {
		t.Run(fmt.Sprintf("face data %t", faces), func(t *testing.T) {
			dir := t.TempDir()
			c := newTestCloud(t, clocktesting.NewFakeClock(t0), dir, Simulation{})
			mustApply(t, c, "b-pool", GroupSpec{Capacity: 2, Model: Model{Zones: []string{"z1"}, CustomData: []byte(`{"quoted":"data"}`)}})
			mustApply(t, c, "a-pool", GroupSpec{Capacity: 1, Model: Model{Zones: []string{"z2"}}})
			c.mu.Lock()
			if faces {
				c.st.FaceData["aws"] = json.RawMessage(`{"launchTemplates":{"lt-1":{"version":2}}}`)
			}
			parts, err := c.st.encodeParts()
			groups := slices.Collect(maps.Values(c.st.Groups))
			slices.SortFunc(groups, func(x, y *groupState) int {
				if x.key().less(y.key()) {
					return -1
				}
				return 1
			})
			want, werr := json.Marshal(stateFileV2{Version: stateVersion, NextSeq: c.st.NextSeq, NextOp: c.st.NextOp, Groups: groups, FaceData: c.st.FaceData})
			c.mu.Unlock()
			if err != nil || werr != nil {
				t.Fatalf("encoding: %v, %v", err, werr)
			}
			if got := parts.join(); string(got) != string(want) {
				t.Fatalf("state file:\n%s\nwant json.Marshal's:\n%s", got, want)
			}
			st := &store{dir: dir}
			if err := st.write(parts.join()); err != nil {
				t.Fatal(err)
			}
			loaded, err := st.load()
			if err != nil {
				t.Fatalf("loading the state file: %v", err)
			}
			if len(loaded.Groups) != 2 || loaded.NextSeq != c.st.NextSeq || (faces && string(loaded.FaceData["aws"]) != `{"launchTemplates":{"lt-1":{"version":2}}}`) {
				t.Fatalf("loaded %d groups, nextSeq %d, face data %s", len(loaded.Groups), loaded.NextSeq, loaded.FaceData)
			}
		})
	}
}

// TestNextFlushWait: a quick write keeps the flush interval; a slow one
// (a large state) stretches the wait so that rewriting the state keeps to
// 1/flushShare of a core, up to maxFlushInterval.
func TestNextFlushWait(t *testing.T) {
	for _, tt := range []struct{ took, want time.Duration }{
		{0, flushInterval},
		{time.Millisecond, flushInterval},
		{10 * time.Millisecond, 400 * time.Millisecond},
		{25 * time.Millisecond, time.Second},
		{time.Second, maxFlushInterval},
	} {
		if got := nextFlushWait(tt.took); got != tt.want {
			t.Errorf("nextFlushWait(%v) = %v, want %v", tt.took, got, tt.want)
		}
	}
}
