package core

import (
	"testing"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestSetCapacity(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c := startCloud(t, Options{Clock: clk, MaxInstances: 5, DefaultSimulation: &Simulation{}})
	mustApply(t, c, "pool", GroupSpec{Capacity: 2, ModelHash: "m1", Model: Model{Image: "img", CustomData: []byte("data")}})

	tests := []struct {
		name     string
		group    string
		capacity int32
		code     ErrorCode // "" for success
		live     int
	}{
		{name: "scale out keeps the model", group: "pool", capacity: 4, live: 4},
		{name: "beyond the quota is refused", group: "pool", capacity: 6, code: CodeQuotaExceeded, live: 4},
		{name: "scale in: the cloud picks victims", group: "pool", capacity: 1, live: 1},
		{name: "negative", group: "pool", capacity: -1, code: CodeInvalid, live: 1},
		{name: "missing group", group: "missing", capacity: 1, code: CodeNotFound, live: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.SetCapacity(tt.group, tt.capacity)
			if CodeOf(err) != tt.code || (tt.code != "") != (err != nil) {
				t.Fatalf("SetCapacity(%s, %d) = %v, want code %q", tt.group, tt.capacity, err, tt.code)
			}
			g := mustGet(t, c, "pool")
			live := 0
			for _, in := range g.Instances {
				if in.State != StateDeleting {
					live++
					if in.ModelHash != "m1" {
						t.Errorf("instance %s has model %q, want m1", in.ID, in.ModelHash)
					}
				}
			}
			if live != tt.live || int(g.Capacity) != tt.live || g.ModelHash != "m1" || g.Model.Image != "img" {
				t.Fatalf("group: capacity %d, %d live, model %s %+v; want %d", g.Capacity, live, g.ModelHash, g.Model, tt.live)
			}
		})
	}

	// Instances created after SetCapacity run the group's custom data.
	c.mu.Lock()
	gs := c.st.Groups[LocalKey("pool")]
	for _, in := range gs.Instances {
		if m := gs.Models[in.ModelRef]; m == nil || string(m.CustomData) != "data" {
			t.Errorf("instance %s lost its custom data", in.ID)
		}
	}
	c.mu.Unlock()

	if _, err := c.DeleteGroup("pool"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetCapacity("pool", 3); CodeOf(err) != CodeConflict && CodeOf(err) != CodeNotFound {
		t.Fatalf("SetCapacity on a deleted group: %v, want Conflict or NotFound", err)
	}
}

func TestWrongTokensCountDownAndPersist(t *testing.T) {
	dir := t.TempDir()
	clk := clocktesting.NewFakeClock(t0)
	c := newTestCloud(t, clk, dir, Simulation{})
	mustApply(t, c, "pool", GroupSpec{Capacity: 1})
	if _, err := c.SetGroupFaults("missing", GroupFaults{WrongTokens: 1}); CodeOf(err) != CodeNotFound {
		t.Fatalf("SetGroupFaults on a missing group: %v, want NotFound", err)
	}
	if _, err := c.SetGroupFaults("pool", GroupFaults{WrongTokens: -1}); CodeOf(err) != CodeInvalid {
		t.Fatalf("negative wrongTokens: %v, want InvalidParameter", err)
	}
	g, err := c.SetGroupFaults("pool", GroupFaults{WrongTokens: 2})
	if err != nil || g.Faults.WrongTokens != 2 {
		t.Fatalf("SetGroupFaults: %v, %+v", err, g)
	}
	g = mustApply(t, c, "pool", GroupSpec{Capacity: 4})
	var wrong []bool
	for _, in := range g.Instances {
		wrong = append(wrong, in.WrongToken)
	}
	if want := []bool{false, true, true, false}; !equalBools(wrong, want) || g.Faults.WrongTokens != 0 {
		t.Fatalf("wrong tokens %v (left %d), want %v and 0 left: the next two instances only", wrong, g.Faults.WrongTokens, want)
	}

	// The fault survives a restart of the cloud, armed or spent.
	if _, err := c.SetGroupFaults("pool", GroupFaults{WrongTokens: 1}); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	c2 := newTestCloud(t, clk, dir, Simulation{})
	g = mustGet(t, c2, "pool")
	if g.Faults.WrongTokens != 1 || !g.Instances[1].WrongToken || g.Instances[0].WrongToken {
		t.Fatalf("after a restart: faults %+v, instances %+v", g.Faults, g.Instances)
	}
}

func equalBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
