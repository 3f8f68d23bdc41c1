package core

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// subnetFace gives its instances the first free address of a three-address
// subnet, as a cloud does (NewInstance.AddressInUse).
type subnetFace struct{}

func (subnetFace) Name() string { return "subnet" }

func (subnetFace) InstanceIdentity(in NewInstance) InstanceIdentity {
	ip := "none"
	for i := range 3 {
		if a := fmt.Sprintf("10.1.0.%d", i+1); !in.AddressInUse(a) {
			ip = a
			break
		}
	}
	return InstanceIdentity{PrivateIP: ip, Hostname: "host-" + ip + "-" + in.ID}
}

func (subnetFace) WriteFault(w http.ResponseWriter, _ *http.Request, f Fault) {
	w.WriteHeader(f.Status)
}

func (subnetFace) Handler(FaceEnv) http.Handler { return http.NotFoundHandler() }

// addresses lists the private addresses of the instances of scope s's
// groups, sorted.
func addresses(t *testing.T, s Scope, groups ...string) []string {
	t.Helper()
	var out []string
	for _, name := range groups {
		g, err := s.GetGroup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range g.Instances {
			out = append(out, in.PrivateIP)
		}
	}
	slices.Sort(out)
	return out
}

// TestAddressInUseCountsLiveInstancesOfTheScope: a face sees the addresses
// of the live instances of every group of its scope, not another scope's,
// and an address is free again once its instance is gone.
func TestAddressInUseCountsLiveInstancesOfTheScope(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c := startCloud(t, Options{Clock: clk, Seed: 7, DefaultSimulation: &Simulation{}, Faces: []Face{subnetFace{}}})
	s, other := c.Scope("subnet", "a"), c.Scope("subnet", "b")
	for _, step := range []struct {
		s    Scope
		name string
		n    int32
	}{{s, "one", 2}, {s, "two", 1}, {other, "three", 1}} {
		if _, err := step.s.ApplyGroup(step.name, GroupSpec{Capacity: step.n}); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := addresses(t, s, "one", "two"), []string{"10.1.0.1", "10.1.0.2", "10.1.0.3"}; !slices.Equal(got, want) {
		t.Fatalf("scope a's addresses = %v, want %v", got, want)
	}
	if got, want := addresses(t, other, "three"), []string{"10.1.0.1"}; !slices.Equal(got, want) {
		t.Fatalf("scope b's addresses = %v, want %v", got, want)
	}

	// One instance of "one" goes; "two"'s new instance takes its address.
	if _, err := s.ApplyGroup("one", GroupSpec{Capacity: 1}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(addresses(t, s, "one")) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("group one still has addresses %v", addresses(t, s, "one"))
		}
		clk.Step(time.Second)
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := s.ApplyGroup("two", GroupSpec{Capacity: 2}); err != nil {
		t.Fatal(err)
	}
	if got, want := addresses(t, s, "one", "two"), []string{"10.1.0.1", "10.1.0.2", "10.1.0.3"}; !slices.Equal(got, want) {
		t.Fatalf("after the scale-in and scale-up, scope a's addresses = %v, want %v", got, want)
	}
}
