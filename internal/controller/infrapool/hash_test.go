package infrapool

import (
	"testing"

	"github.com/mpool-dev/mpool/internal/scalegroup"
)

func baseModel() scalegroup.Model {
	return scalegroup.Model{
		InstanceType: "Standard_D2s_v3",
		Image:        "ubuntu-2204",
		Zones:        []string{"1", "2"},
		CustomData:   []byte("#cloud-config token abcdef.0123456789abcdef"),
		Tags:         map[string]string{"team": "a"},
		Extra:        map[string]string{"version": "v1.31.2", "osDiskSizeGB": "30", "identity": "system", "bootDelay": "1s"},
	}
}

var inPlace = []string{"bootDelay"}

func TestModelHashChangesWithEveryInstanceField(t *testing.T) {
	base := ModelHash(baseModel(), inPlace)
	for _, tc := range []struct {
		name   string
		reason string
		change func(*scalegroup.Model)
	}{
		{name: "instance type", reason: "a new size replaces instances (CAPZ misses this)", change: func(m *scalegroup.Model) { m.InstanceType = "Standard_D4s_v5" }},
		{name: "image", reason: "a new image replaces instances", change: func(m *scalegroup.Model) { m.Image = "ubuntu-2404" }},
		{name: "zones added", reason: "instances land elsewhere", change: func(m *scalegroup.Model) { m.Zones = append(m.Zones, "3") }},
		{name: "zones removed", reason: "instances land elsewhere", change: func(m *scalegroup.Model) { m.Zones = m.Zones[:1] }},
		{name: "version", reason: "a Kubernetes upgrade replaces instances", change: func(m *scalegroup.Model) { m.Extra["version"] = "v1.32.0" }},
		{name: "disk", reason: "provider fields in Extra are part of the model", change: func(m *scalegroup.Model) { m.Extra["osDiskSizeGB"] = "60" }},
		{name: "identity", reason: "provider fields in Extra are part of the model", change: func(m *scalegroup.Model) { m.Extra["identity"] = "user" }},
		{name: "extra key added", reason: "a new provider field changes instances", change: func(m *scalegroup.Model) { m.Extra["acceleratedNetworking"] = "true" }},
		{name: "extra key removed", reason: "dropping a provider field changes instances", change: func(m *scalegroup.Model) { delete(m.Extra, "identity") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := baseModel()
			tc.change(&m)
			if got := ModelHash(m, inPlace); got == base {
				t.Errorf("hash unchanged (%s)", tc.reason)
			}
		})
	}
}

func TestModelHashIgnoresWhatDoesNotChangeAnInstance(t *testing.T) {
	base := ModelHash(baseModel(), inPlace)
	for _, tc := range []struct {
		name   string
		reason string
		change func(*scalegroup.Model)
	}{
		{name: "bootstrap data", reason: "token rotation must not roll the pool", change: func(m *scalegroup.Model) { m.CustomData = []byte("#cloud-config token zzzzzz.0123456789abcdef") }},
		{name: "no bootstrap data", reason: "the hash is known before the bootstrap data", change: func(m *scalegroup.Model) { m.CustomData = nil }},
		{name: "tags", reason: "tags are applied in place", change: func(m *scalegroup.Model) { m.Tags["team"] = "b" }},
		{name: "in-place extra", reason: "adapter-declared in-place settings", change: func(m *scalegroup.Model) { m.Extra["bootDelay"] = "5s" }},
		{name: "zone order", reason: "zones are a set", change: func(m *scalegroup.Model) { m.Zones = []string{"2", "1"} }},
		{name: "duplicate zone", reason: "zones are a set", change: func(m *scalegroup.Model) { m.Zones = []string{"1", "2", "2"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := baseModel()
			tc.change(&m)
			if got := ModelHash(m, inPlace); got != base {
				t.Errorf("hash changed (%s)", tc.reason)
			}
		})
	}
}

func TestSpecHashCoversCustomDataAndTags(t *testing.T) {
	m := baseModel()
	h := ModelHash(m, inPlace)
	base := specHash(m, h)
	for _, tc := range []struct {
		name   string
		change func(*scalegroup.Model)
	}{
		{name: "bootstrap data", change: func(m *scalegroup.Model) { m.CustomData = []byte("other") }},
		{name: "tags", change: func(m *scalegroup.Model) { m.Tags["team"] = "b" }},
		{name: "in-place extra", change: func(m *scalegroup.Model) { m.Extra["bootDelay"] = "5s" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := baseModel()
			tc.change(&m)
			if specHash(m, ModelHash(m, inPlace)) == base {
				t.Error("spec hash unchanged: the change would never be applied")
			}
		})
	}
}
