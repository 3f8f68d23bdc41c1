package infrapool

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// ModelHash returns the hash of everything in m that changes what an
// instance is: instance type, image, zones (as a set) and every Extra key
// (disks, identity, Kubernetes version, ...) except those listed in inPlace.
// CustomData (the bootstrap data, whose token rotates) and Tags (applied in
// place) are left out, and so is anything that is not part of the model,
// such as the replica count. Two models with the same hash create the same
// instances; an instance whose recorded hash differs is stale.
func ModelHash(m scalegroup.Model, inPlace []string) string {
	zones := slices.Clone(m.Zones)
	slices.Sort(zones)
	zones = slices.Compact(zones)
	extra := make(map[string]string, len(m.Extra))
	for k, v := range m.Extra {
		if !slices.Contains(inPlace, k) {
			extra[k] = v
		}
	}
	return digest(struct {
		InstanceType string            `json:"instanceType"`
		Image        string            `json:"image"`
		Zones        []string          `json:"zones"`
		Extra        map[string]string `json:"extra"`
	}{m.InstanceType, m.Image, zones, extra})
}

// specHash returns the hash of everything Apply sends: the model with its
// custom data, tags and in-place settings, and the model hash. The engine
// records it on the pool after a successful Apply so that a changed
// bootstrap token or tag is applied once, without a write on every
// reconcile (the cloud does not return custom data).
func specHash(m scalegroup.Model, modelHash string) string {
	zones := m.Zones
	if zones == nil {
		zones = []string{}
	}
	return digest(struct {
		ModelHash    string            `json:"modelHash"`
		InstanceType string            `json:"instanceType"`
		Image        string            `json:"image"`
		Zones        []string          `json:"zones"`
		CustomData   []byte            `json:"customData"`
		Tags         map[string]string `json:"tags"`
		Extra        map[string]string `json:"extra"`
	}{modelHash, m.InstanceType, m.Image, zones, m.CustomData, m.Tags, m.Extra})
}

// digest hashes v's JSON form (maps are encoded with sorted keys).
func digest(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain structs of strings always encode
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:10])
}
