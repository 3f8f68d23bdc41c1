package infrapool

import (
	"testing"

	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

func baseModel() scalegroup.Model {
	return scalegroup.Model{
		InstanceType: "Standard_D2s_v3",
		Image:        "ubuntu-2204",
		Zones:        []string{"1", "2"},
		Version:      "v1.31.2",
		CustomData:   []byte("#cloud-config\njoin:\n  token: abcdef.0123456789abcdef\n  kubeletExtraArgs: --max-pods=110\n"),
		Tags:         map[string]string{"team": "a"},
		Provider:     testProviderModel{OSDiskSizeGB: 30, Identity: "system", Extensions: []string{"a"}},
		InPlace:      testInPlace{BootDelay: "1s"},
	}
}

// testProviderModel stands for a provider's typed model fields (Azure's
// disks and identity, ...).
type testProviderModel struct {
	OSDiskSizeGB int      `json:"osDiskSizeGB"`
	Identity     string   `json:"identity,omitempty"`
	Extensions   []string `json:"extensions,omitempty"`
}

// testInPlace stands for a provider's in-place settings.
type testInPlace struct {
	BootDelay string `json:"bootDelay"`
}

func mustModelHash(t *testing.T, m scalegroup.Model) string {
	t.Helper()
	h, err := contract.ModelHash(m)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func mustSpecHash(t *testing.T, m scalegroup.Model) string {
	t.Helper()
	h, err := specHash(m, mustModelHash(t, m))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestModelHashChangesWithEveryInstanceField(t *testing.T) {
	base := mustModelHash(t, baseModel())
	for _, tc := range []struct {
		name   string
		reason string
		change func(*scalegroup.Model)
	}{
		{name: "instance type", reason: "a new size replaces instances (CAPZ misses this)", change: func(m *scalegroup.Model) { m.InstanceType = "Standard_D4s_v5" }},
		{name: "image", reason: "a new image replaces instances", change: func(m *scalegroup.Model) { m.Image = "ubuntu-2404" }},
		{name: "zones added", reason: "instances land elsewhere", change: func(m *scalegroup.Model) { m.Zones = append(m.Zones, "3") }},
		{name: "zones removed", reason: "instances land elsewhere", change: func(m *scalegroup.Model) { m.Zones = m.Zones[:1] }},
		{name: "version", reason: "a Kubernetes upgrade replaces instances", change: func(m *scalegroup.Model) { m.Version = "v1.32.0" }},
		{name: "disk", reason: "the provider's typed fields are part of the model", change: func(m *scalegroup.Model) {
			m.Provider = testProviderModel{OSDiskSizeGB: 60, Identity: "system", Extensions: []string{"a"}}
		}},
		{name: "identity removed", reason: "dropping a provider field changes instances", change: func(m *scalegroup.Model) {
			m.Provider = testProviderModel{OSDiskSizeGB: 30, Extensions: []string{"a"}}
		}},
		{name: "extension added", reason: "a provider's list field is part of the model", change: func(m *scalegroup.Model) {
			m.Provider = testProviderModel{OSDiskSizeGB: 30, Identity: "system", Extensions: []string{"a", "b"}}
		}},
		{name: "no provider fields", reason: "a model without the provider's part is another model", change: func(m *scalegroup.Model) { m.Provider = nil }},
		{name: "bootstrap content", reason: "a changed KubeadmConfig (kubelet arguments, files) rolls the pool", change: func(m *scalegroup.Model) {
			m.CustomData = []byte("#cloud-config\njoin:\n  token: abcdef.0123456789abcdef\n  kubeletExtraArgs: --max-pods=250\n")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := baseModel()
			tc.change(&m)
			if got := mustModelHash(t, m); got == base {
				t.Errorf("hash unchanged (%s)", tc.reason)
			}
		})
	}
}

func TestModelHashIgnoresWhatDoesNotChangeAnInstance(t *testing.T) {
	base := mustModelHash(t, baseModel())
	for _, tc := range []struct {
		name   string
		reason string
		change func(*scalegroup.Model)
	}{
		{name: "bootstrap token", reason: "token rotation must not roll the pool", change: func(m *scalegroup.Model) {
			m.CustomData = []byte("#cloud-config\njoin:\n  token: zzzzzz.fedcba9876543210\n  kubeletExtraArgs: --max-pods=110\n")
		}},
		{name: "tags", reason: "tags are applied in place", change: func(m *scalegroup.Model) { m.Tags["team"] = "b" }},
		{name: "in-place settings", reason: "the provider applies them in place", change: func(m *scalegroup.Model) { m.InPlace = testInPlace{BootDelay: "5s"} }},
		{name: "zone order", reason: "zones are a set", change: func(m *scalegroup.Model) { m.Zones = []string{"2", "1"} }},
		{name: "duplicate zone", reason: "zones are a set", change: func(m *scalegroup.Model) { m.Zones = []string{"1", "2", "2"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := baseModel()
			tc.change(&m)
			if got := mustModelHash(t, m); got != base {
				t.Errorf("hash changed (%s)", tc.reason)
			}
		})
	}
}

func TestSpecHashCoversTagsAndInPlaceSettings(t *testing.T) {
	base := mustSpecHash(t, baseModel())
	for _, tc := range []struct {
		name   string
		change func(*scalegroup.Model)
	}{
		{name: "tags", change: func(m *scalegroup.Model) { m.Tags["team"] = "b" }},
		{name: "in-place settings", change: func(m *scalegroup.Model) { m.InPlace = testInPlace{BootDelay: "5s"} }},
		{name: "model", change: func(m *scalegroup.Model) { m.Image = "ubuntu-2404" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := baseModel()
			tc.change(&m)
			if mustSpecHash(t, m) == base {
				t.Error("spec hash unchanged: the change would never be applied")
			}
		})
	}
	// A rotated token alone is no reason to write to the cloud: the new
	// data goes with the next write that creates instances.
	m := baseModel()
	m.CustomData = []byte("#cloud-config\njoin:\n  token: zzzzzz.fedcba9876543210\n  kubeletExtraArgs: --max-pods=110\n")
	if mustSpecHash(t, m) != base {
		t.Error("a rotated token changes the spec hash: every rotation would write to the cloud")
	}
}

func TestModelHashRefusesWhatCannotBeEncoded(t *testing.T) {
	m := baseModel()
	m.Provider = func() {}
	if _, err := contract.ModelHash(m); err == nil {
		t.Fatal("a provider model that cannot be encoded was hashed")
	}
}
