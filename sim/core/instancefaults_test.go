package core

import (
	"slices"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestSetInstanceFault(t *testing.T) {
	dir := t.TempDir()
	clk := clocktesting.NewFakeClock(t0)
	c := newTestCloud(t, clk, dir, Simulation{})
	g := mustApply(t, c, "pool", GroupSpec{Capacity: 2})
	id, other := g.Instances[0].ID, g.Instances[1].ID

	tests := []struct {
		name     string
		id       string
		fault    InstanceFault
		wantCode ErrorCode
	}{
		{name: "an unknown instance is not found", id: "i-missing", fault: FaultKubeletStopped, wantCode: CodeNotFound},
		{name: "an unknown fault is refused", id: id, fault: "Sleepy", wantCode: CodeInvalid},
		{name: "a fault is set by instance ID", id: id, fault: FaultKubeletStopped},
		{name: "and by providerID", id: ProviderID("pool", other), fault: FaultCloudCheckFailing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := c.SetInstanceFault(tt.id, tt.fault); CodeOf(err) != tt.wantCode || (tt.wantCode == "") != (err == nil) {
				t.Fatalf("SetInstanceFault(%s, %s) = %v, want code %q", tt.id, tt.fault, err, tt.wantCode)
			}
		})
	}
	g = mustGet(t, c, "pool")
	if g.Instances[0].Fault != FaultKubeletStopped || !g.Instances[0].FaultSince.Equal(t0) || g.Instances[1].Fault != FaultCloudCheckFailing {
		t.Fatalf("snapshot faults = %+v", g.Instances)
	}

	// Faults persist with the instances' state.
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	c = newTestCloud(t, clk, dir, Simulation{})
	g = mustGet(t, c, "pool")
	if g.Instances[0].Fault != FaultKubeletStopped || g.Instances[1].Fault != FaultCloudCheckFailing {
		t.Fatalf("after a restart: faults = %+v", g.Instances)
	}
	// FaultNone clears.
	clk.Step(time.Second)
	if err := c.SetInstanceFault(id, FaultNone); err != nil {
		t.Fatal(err)
	}
	if in := mustGet(t, c, "pool").Instances[0]; in.Fault != FaultNone || !in.FaultSince.IsZero() {
		t.Fatalf("cleared: %+v", in)
	}
}

func TestSetInstanceFaultAmbiguousAndScoped(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c := newFacesCloud(t, clk, "")
	// Two groups whose instance IDs are ordinals, as a VMSS's.
	for _, scope := range []string{"111", "222"} {
		if _, err := c.Scope("acme", scope).ApplyGroup("pool", GroupSpec{Capacity: 1}); err != nil {
			t.Fatal(err)
		}
	}
	// acme's IDs are unique; fake a clash through the state, as an Azure
	// face's "0" in two scale sets would be.
	c.mu.Lock()
	for _, g := range c.st.Groups {
		g.Instances[0].ID = "0"
		g.index = nil
	}
	c.mu.Unlock()
	if err := c.SetInstanceFault("0", FaultNodeNotReady); CodeOf(err) != CodeInvalid {
		t.Fatalf("an ID of two groups: %v, want InvalidParameter", err)
	}
	g, err := c.Scope("acme", "222").SetInstanceFault("pool", "0", FaultNodeNotReady)
	if err != nil || g.Instances[0].Fault != FaultNodeNotReady {
		t.Fatalf("Scope.SetInstanceFault: %v, %+v", err, g)
	}
	if _, err := c.Scope("acme", "222").SetInstanceFault("pool", "7", FaultNodeNotReady); CodeOf(err) != CodeNotFound {
		t.Fatalf("an unknown instance of the group: %v, want NotFound", err)
	}
}

func TestSetGroupInstanceFault(t *testing.T) {
	tests := []struct {
		name     string
		size     int32
		fraction float64
		want     int
	}{
		{name: "half of four is two", size: 4, fraction: 0.5, want: 2},
		{name: "a third of three is one", size: 3, fraction: 0.34, want: 1},
		{name: "a positive fraction hits at least one", size: 3, fraction: 0.01, want: 1},
		{name: "zero is none", size: 3, fraction: 0, want: 0},
		{name: "one is all", size: 5, fraction: 1, want: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestCloud(t, clocktesting.NewFakeClock(t0), "", Simulation{})
			mustApply(t, c, "pool", GroupSpec{Capacity: tt.size})
			got, err := c.Scope(LocalFace, "").SetGroupInstanceFault("pool", tt.fraction, FaultNodeNotReady)
			if err != nil || len(got) != tt.want {
				t.Fatalf("SetGroupInstanceFault = %v, %v; want %d IDs", got, err, tt.want)
			}
			var faulted []string
			for _, in := range mustGet(t, c, "pool").Instances {
				if in.Fault == FaultNodeNotReady {
					faulted = append(faulted, in.ID)
				}
			}
			if !slices.Equal(faulted, got) {
				t.Fatalf("faulted instances %v, want those returned %v", faulted, got)
			}
		})
	}

	t.Run("the choice is seeded and skips instances that have the fault", func(t *testing.T) {
		pick := func() []string {
			c := newTestCloud(t, clocktesting.NewFakeClock(t0), "", Simulation{})
			mustApply(t, c, "pool", GroupSpec{Capacity: 10})
			first, err := c.SetGroupInstanceFault(LocalKey("pool"), 0.3, FaultKubeletStopped)
			if err != nil {
				t.Fatal(err)
			}
			second, err := c.SetGroupInstanceFault(LocalKey("pool"), 0.3, FaultKubeletStopped)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range second {
				if slices.Contains(first, id) {
					t.Fatalf("%s chosen twice", id)
				}
			}
			cleared, err := c.SetGroupInstanceFault(LocalKey("pool"), 1, FaultNone)
			if err != nil || len(cleared) != 6 {
				t.Fatalf("clearing all: %v, %v; want the 6 faulted", cleared, err)
			}
			return first
		}
		if a, b := pick(), pick(); !slices.Equal(a, b) {
			t.Fatalf("same seed, different choices: %v and %v", a, b)
		}
	})

	t.Run("errors", func(t *testing.T) {
		c := newTestCloud(t, clocktesting.NewFakeClock(t0), "", Simulation{})
		mustApply(t, c, "pool", GroupSpec{Capacity: 1})
		if _, err := c.SetGroupInstanceFault(LocalKey("missing"), 1, FaultNodeNotReady); CodeOf(err) != CodeNotFound {
			t.Fatalf("missing group: %v", err)
		}
		if _, err := c.SetGroupInstanceFault(LocalKey("pool"), 1.5, FaultNodeNotReady); CodeOf(err) != CodeInvalid {
			t.Fatalf("fraction 1.5: %v", err)
		}
	})
}

func TestNeverJoins(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c := newTestCloud(t, clk, "", Simulation{})
	g := mustApply(t, c, "pool", GroupSpec{Capacity: 1})
	// Without a node agent nothing joins; play a joined instance.
	c.mu.Lock()
	c.st.Groups[LocalKey("pool")].Instances[0].Join = JoinJoined
	c.mu.Unlock()
	if err := c.SetInstanceFault(g.Instances[0].ID, FaultNeverJoins); CodeOf(err) != CodeInvalid {
		t.Fatalf("NeverJoins on a joined instance: %v, want InvalidParameter", err)
	}
	if ids, err := c.SetGroupInstanceFault(LocalKey("pool"), 1, FaultNeverJoins); err != nil || len(ids) != 0 {
		t.Fatalf("NeverJoins on a group whose instances joined: %v, %v; want none chosen", ids, err)
	}

	// Armed for the group's next instances.
	if _, err := c.SetGroupFaults("pool", GroupFaults{NeverJoins: 1}); err != nil {
		t.Fatal(err)
	}
	g = mustApply(t, c, "pool", GroupSpec{Capacity: 3})
	var faults []InstanceFault
	for _, in := range g.Instances {
		faults = append(faults, in.Fault)
	}
	if want := []InstanceFault{FaultNone, FaultNeverJoins, FaultNone}; !slices.Equal(faults, want) || g.Faults.NeverJoins != 0 {
		t.Fatalf("faults %v (armed %d), want %v", faults, g.Faults.NeverJoins, want)
	}
}

func TestParseInstanceFault(t *testing.T) {
	tests := []struct {
		in      string
		want    InstanceFault
		wantErr bool
	}{
		{in: "kubelet-stopped", want: FaultKubeletStopped},
		{in: "NodeNotReady", want: FaultNodeNotReady},
		{in: "never-joins", want: FaultNeverJoins},
		{in: "cloud-check-failing", want: FaultCloudCheckFailing},
		{in: "none", want: FaultNone},
		{in: "", want: FaultNone},
		{in: "sleepy", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseInstanceFault(tt.in)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Fatalf("ParseInstanceFault(%q) = %q, %v", tt.in, got, err)
			}
		})
	}
}
