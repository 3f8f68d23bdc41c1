package core

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// newFacesCloud starts a cloud with the acme face on a fake clock; it is
// stopped with the test.
func newFacesCloud(t *testing.T, clk *clocktesting.FakeClock, dir string) *Cloud {
	t.Helper()
	return startCloud(t, Options{Clock: clk, DataDir: dir, Seed: 7, DefaultSimulation: &Simulation{BootDelay: 10 * time.Second}, Faces: []Face{acmeFace{}}})
}

func TestScopesAreSeparateGroups(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c := newFacesCloud(t, clk, "")
	a, b := c.Scope("acme", "111"), c.Scope("acme", "222")
	mustApply(t, c, "pool", GroupSpec{Capacity: 1})
	for _, tt := range []struct {
		s    Scope
		size int32
	}{{a, 2}, {b, 3}} {
		if _, err := tt.s.ApplyGroup("pool", GroupSpec{Capacity: tt.size}); err != nil {
			t.Fatalf("ApplyGroup in scope %s: %v", tt.s.Name(), err)
		}
	}

	want := []GroupKey{{Face: "acme", Scope: "111", Name: "pool"}, {Face: "acme", Scope: "222", Name: "pool"}, LocalKey("pool")}
	if got := c.Groups(); !slices.Equal(got, want) {
		t.Fatalf("Groups() = %v, want %v", got, want)
	}
	for _, tt := range []struct {
		name string
		s    Scope
		want []string
	}{
		{"the local face lists only its own group", c.Scope(LocalFace, ""), []string{"pool"}},
		{"scope 111", a, []string{"pool"}},
		{"a scope without groups", c.Scope("acme", "333"), nil},
	} {
		if got := tt.s.ListGroups(); !slices.Equal(got, tt.want) {
			t.Errorf("%s: ListGroups() = %v, want %v", tt.name, got, tt.want)
		}
	}
	if got := c.ListGroups(); !slices.Equal(got, []string{"pool"}) {
		t.Errorf("Cloud.ListGroups() = %v, want the local group only", got)
	}

	// Changing one scope's group leaves the others alone.
	if _, err := a.DeleteGroup("pool"); err != nil {
		t.Fatal(err)
	}
	gb, err := b.GetGroup("pool")
	if err != nil || gb.Capacity != 3 || len(gb.Instances) != 3 || gb.Scope != "222" || gb.Face != "acme" {
		t.Fatalf("scope 222 after deleting scope 111's group: %+v, %v", gb, err)
	}
	if g := mustGet(t, c, "pool"); g.Capacity != 1 {
		t.Fatalf("local group after deleting scope 111's group: capacity %d, want 1", g.Capacity)
	}
	if _, err := c.Scope("acme", "333").GetGroup("pool"); CodeOf(err) != CodeNotFound {
		t.Fatalf("a group in another scope: %v, want NotFound", err)
	}
	// The local face's name rule is its own; other faces pass names through.
	if _, err := a.ApplyGroup("Web_Pool", GroupSpec{}); err != nil {
		t.Fatalf("an acme name the local face would refuse: %v", err)
	}
	if _, err := c.ApplyGroup("Web_Pool", GroupSpec{}); CodeOf(err) != CodeInvalid {
		t.Fatalf("the same name on the local face: %v, want InvalidParameter", err)
	}
	if _, err := c.Scope("nope", "").ApplyGroup("pool", GroupSpec{}); CodeOf(err) != CodeInvalid {
		t.Fatalf("a group of an unregistered face: %v, want InvalidParameter", err)
	}
}

func TestFaceIdentityAndMetadataPersist(t *testing.T) {
	dir := t.TempDir()
	clk := clocktesting.NewFakeClock(t0)
	c := newFacesCloud(t, clk, dir)
	s := c.Scope("acme", "111")
	if _, err := s.ApplyGroup("web", GroupSpec{Capacity: 2, Model: Model{Zones: []string{"moon-1a", "moon-1b"}}, Payload: json.RawMessage(`{"launchTemplate":"lt-1"}`)}); err != nil {
		t.Fatal(err)
	}
	mustApply(t, c, "pool", GroupSpec{Capacity: 1, Model: Model{Zones: []string{"z1"}}})
	clk.Step(10 * time.Second)

	check := func(when string, c *Cloud) {
		t.Helper()
		g, err := c.Scope("acme", "111").GetGroup("web")
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		for _, in := range g.Instances {
			wantMeta := map[string]string{
				MetaInstanceID: in.ID, MetaLocalHostname: in.Hostname, MetaLocalIPv4: in.PrivateIP,
				MetaAvailabilityZone: in.Zone, MetaRegion: acmeRegion, "account_id": "111",
			}
			switch {
			case !strings.HasPrefix(in.ID, "a-"):
				t.Errorf("%s: instance ID %q is not the face's", when, in.ID)
			case in.ProviderID != "acme://111/"+in.ID:
				t.Errorf("%s: providerID %q, want acme://111/%s", when, in.ProviderID, in.ID)
			case !strings.HasSuffix(in.Hostname, ".acme.internal") || !strings.HasPrefix(in.PrivateIP, "10.9."):
				t.Errorf("%s: host name %q, IP %q are not the face's", when, in.Hostname, in.PrivateIP)
			case !maps.Equal(in.Metadata, wantMeta):
				t.Errorf("%s: metadata %v, want %v", when, in.Metadata, wantMeta)
			case string(in.Payload) != `{"launchTemplate":"lt-1"}`:
				t.Errorf("%s: instance payload %s", when, in.Payload)
			case in.State != StateRunning:
				t.Errorf("%s: instance %s is %s, want Running", when, in.ID, in.State)
			}
		}
		if len(g.Instances) != 2 || string(g.Payload) != `{"launchTemplate":"lt-1"}` {
			t.Fatalf("%s: %d instances, payload %s", when, len(g.Instances), g.Payload)
		}
		// The local face's identities are today's.
		in := mustGet(t, c, "pool").Instances[0]
		wantMeta := map[string]string{MetaInstanceID: in.ID, MetaLocalHostname: "pool-" + in.ID, MetaLocalIPv4: in.PrivateIP, MetaAvailabilityZone: "z1"}
		if in.ProviderID != ProviderID("pool", in.ID) || in.Hostname != "pool-"+in.ID || !maps.Equal(in.Metadata, wantMeta) {
			t.Errorf("%s: local instance %+v", when, in)
		}
	}
	check("before the restart", c)
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	check("after the restart", newFacesCloud(t, clk, dir))
}

func TestPayloadsPersist(t *testing.T) {
	dir := t.TempDir()
	clk := clocktesting.NewFakeClock(t0)
	c := newFacesCloud(t, clk, dir)
	s := c.Scope("acme", "111")
	g, err := s.ApplyGroup("web", GroupSpec{Capacity: 1, Payload: json.RawMessage(`{"v":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	id := g.Instances[0].ID
	bump := func(old json.RawMessage) (json.RawMessage, error) {
		var p struct{ V int }
		if err := json.Unmarshal(old, &p); err != nil {
			return nil, err
		}
		return json.Marshal(map[string]int{"v": p.V + 1})
	}
	for _, tt := range []struct {
		name string
		do   func() error
		code ErrorCode
	}{
		{name: "read-modify-write of the group's payload", do: func() error { _, err := s.UpdateGroupPayload("web", bump); return err }},
		{name: "an instance's payload", do: func() error {
			_, err := s.UpdateInstancePayload("web", id, func(json.RawMessage) (json.RawMessage, error) { return json.RawMessage(`{"v":7}`), nil })
			return err
		}},
		{name: "the face's own data", do: func() error {
			_, err := c.UpdateFaceData("acme", func(json.RawMessage) (json.RawMessage, error) {
				return json.RawMessage(`{"launchTemplates":{"lt-1":{"versions":2}}}`), nil
			})
			return err
		}},
		{name: "a payload that is not JSON is refused: it could not be saved", code: CodeInvalid, do: func() error {
			_, err := s.UpdateGroupPayload("web", func(json.RawMessage) (json.RawMessage, error) { return json.RawMessage(`{`), nil })
			return err
		}},
		{name: "so is one in a spec", code: CodeInvalid, do: func() error {
			_, err := s.ApplyGroup("web", GroupSpec{Capacity: 1, Payload: json.RawMessage(`nope`)})
			return err
		}},
		{name: "an error of the face's function changes nothing", code: "", do: func() error {
			_, err := s.UpdateGroupPayload("web", func(json.RawMessage) (json.RawMessage, error) { return nil, errors.New("boom") })
			if err == nil || err.Error() != "boom" {
				return errors.New("the function's error was not returned")
			}
			return nil
		}},
		{name: "an unknown instance", code: CodeNotFound, do: func() error {
			_, err := s.UpdateInstancePayload("web", "a-nope", bump)
			return err
		}},
	} {
		if err := tt.do(); CodeOf(err) != tt.code || tt.code == "" && err != nil {
			t.Errorf("%s: %v, want code %q", tt.name, err, tt.code)
		}
	}
	// A nil payload in a spec keeps the group's.
	if _, err := s.ApplyGroup("web", GroupSpec{Capacity: 1}); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}

	c2 := newFacesCloud(t, clk, dir)
	g, err = c2.Scope("acme", "111").GetGroup("web")
	if err != nil {
		t.Fatal(err)
	}
	if string(g.Payload) != `{"v":2}` || string(g.Instances[0].Payload) != `{"v":7}` {
		t.Fatalf("after the restart: group payload %s, instance payload %s", g.Payload, g.Instances[0].Payload)
	}
	if d := c2.FaceData("acme"); string(d) != `{"launchTemplates":{"lt-1":{"versions":2}}}` {
		t.Fatalf("face data after the restart: %s", d)
	}
	// Snapshots are copies.
	g.Payload[0] = 'X'
	if g2, _ := c2.Scope("acme", "111").GetGroup("web"); string(g2.Payload) != `{"v":2}` {
		t.Fatalf("changing a snapshot changed the core: %s", g2.Payload)
	}
}

// TestLoadStateV1 loads testdata/state-v1.json, written by the cloud before
// faces existed: its groups are the local face's, with today's identities.
func TestLoadStateV1(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("testdata/state-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, stateFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	// The fixture was saved at t0+11s; its instances boot in 10s.
	clk := clocktesting.NewFakeClock(t0.Add(11 * time.Second))
	c := newFacesCloud(t, clk, dir)
	if got := c.Groups(); !slices.Equal(got, []GroupKey{LocalKey("other.pool"), LocalKey("pool")}) {
		t.Fatalf("groups %v", got)
	}
	g := mustGet(t, c, "pool")
	if g.Capacity != 3 || g.ModelHash != "h2" || g.Faults.WrongTokens != 1 || g.Model.InstanceType != "m2" {
		t.Fatalf("pool: %+v", g)
	}
	if got, want := ids(g), []string{"i-00000001", "i-00000002", "i-00000003", "i-00000004"}; !slices.Equal(got, want) {
		t.Fatalf("pool instances %v, want %v", got, want)
	}
	for _, in := range g.Instances {
		if in.ProviderID != "local:///pool/"+in.ID || in.Hostname != "pool-"+in.ID || in.Metadata[MetaLocalHostname] != in.Hostname || in.Metadata[MetaInstanceID] != in.ID {
			t.Errorf("instance %+v", in)
		}
	}
	other := mustGet(t, c, "other.pool")
	if in := other.Instances[0]; in.ProviderID != "local:///other.pool/i-00000005" || in.Hostname != "other-pool-i-00000005" || in.State != StateBooting {
		t.Fatalf("other.pool instance %+v", in)
	}
	clk.Step(10 * time.Second)
	if st := countStates(mustGet(t, c, "other.pool")); st[StateRunning] != 1 {
		t.Fatalf("booting resumed: %v", st)
	}
	// New instances continue the sequence; the file is rewritten as v2.
	g = mustApply(t, c, "pool", GroupSpec{Capacity: 4, ModelHash: "h2", Model: Model{InstanceType: "m2", Zones: []string{"z1", "z2"}}})
	if last := g.Instances[len(g.Instances)-1].ID; last != "i-00000006" {
		t.Fatalf("next instance %s, want i-00000006", last)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Version int }
	if err := json.Unmarshal(b, &v); err != nil || v.Version != stateVersion {
		t.Fatalf("rewritten state file: version %d, %v", v.Version, err)
	}
	c2 := newFacesCloud(t, clk, dir)
	if got := ids(mustGet(t, c2, "pool")); !slices.Equal(got, ids(g)) {
		t.Fatalf("after a second restart: %v, want %v", got, ids(g))
	}
}

func TestStateFileOfUnknownVersion(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, stateFile), []byte(`{"version":99}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := NewCloud(context.Background(), Options{DataDir: dir})
	if err == nil || !strings.Contains(err.Error(), "version 99") {
		t.Fatalf("NewCloud: %v, want a version error", err)
	}
}

func TestScopeQuota(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	c := newFacesCloud(t, clk, "")
	a := c.Scope("acme", "111")
	if err := a.SetMaxInstances(3); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		s    Scope
		grp  string
		size int32
		code ErrorCode
	}{
		{name: "within the scope's quota", s: a, grp: "a", size: 2},
		{name: "the scope's quota counts its other groups", s: a, grp: "b", size: 2, code: CodeQuotaExceeded},
		{name: "another scope has its own", s: c.Scope("acme", "222"), grp: "b", size: 5},
		{name: "so has the local face", s: c.Scope(LocalFace, ""), grp: "b", size: 5},
		{name: "up to the quota", s: a, grp: "b", size: 1},
	} {
		if _, err := tt.s.ApplyGroup(tt.grp, GroupSpec{Capacity: tt.size}); CodeOf(err) != tt.code {
			t.Errorf("%s: %v, want code %q", tt.name, err, tt.code)
		}
	}
	// The global quota still counts every face.
	if err := c.SetMaxInstances(13); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Scope("acme", "222").SetCapacity("b", 6); CodeOf(err) != CodeQuotaExceeded {
		t.Fatalf("over the global quota: %v", err)
	}
	if a.MaxInstances() != 3 || c.Scope("acme", "222").MaxInstances() != 0 {
		t.Fatalf("scope quotas %d, %d", a.MaxInstances(), c.Scope("acme", "222").MaxInstances())
	}
}

func TestAgentKeyRoundTrip(t *testing.T) {
	for _, k := range []GroupKey{LocalKey("pool"), {Face: "acme", Scope: "a/b:c", Name: "x/y"}, {Face: "azure", Scope: "/subscriptions/s/resourceGroups/rg", Name: "vmss"}} {
		got, id, ok := parseAgentKey(agentKey(k, "i-1"))
		if !ok || got != k || id != "i-1" {
			t.Errorf("%v: round trip gave %v %q %v", k, got, id, ok)
		}
	}
	if got := agentKey(LocalKey("pool"), "i-1"); got != "pool/i-1" {
		t.Errorf("local key %q, want pool/i-1", got)
	}
}
