package infrapool

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mpool-dev/mpool/internal/bootstrap"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// ModelHash returns the hash of everything in m that changes what an
// instance is: instance type, image, zones (as a set), the Kubernetes
// version, the provider's typed part of the model (m.Provider, by its JSON
// encoding) and the bootstrap data with its bootstrap tokens masked — a
// changed KubeadmConfig (files, kubelet arguments, commands) rolls the pool
// within its budgets, a rotated token rolls nothing. Tags and the in-place
// settings (m.InPlace) are left out, and so is anything that is not part of
// the model, such as the replica count. Two models with the same hash create
// the same instances; an instance whose recorded hash differs is stale.
//
// It fails only when m.Provider cannot be encoded as JSON, a provider bug.
func ModelHash(m scalegroup.Model) (string, error) {
	zones := slices.Clone(m.Zones)
	slices.Sort(zones)
	zones = slices.Compact(zones)
	if zones == nil {
		zones = []string{}
	}
	provider, err := json.Marshal(m.Provider)
	if err != nil {
		return "", fmt.Errorf("encoding the provider's model (%T): %w", m.Provider, err)
	}
	bootstrapData := sha256.Sum256(bootstrap.MaskBootstrapTokens(m.CustomData))
	return digest(struct {
		InstanceType string          `json:"instanceType"`
		Image        string          `json:"image"`
		Zones        []string        `json:"zones"`
		Version      string          `json:"version"`
		Provider     json.RawMessage `json:"provider"`
		Bootstrap    string          `json:"bootstrap"`
	}{m.InstanceType, m.Image, zones, m.Version, provider, hex.EncodeToString(bootstrapData[:])}), nil
}

// specHash returns the hash of what Apply sends besides the capacity and the
// bootstrap data: the model hash, the tags and the in-place settings. The
// engine records it on the pool after a successful Apply, so that a changed
// tag or in-place setting is applied once, without a write on every
// reconcile.
//
// The bootstrap data is left out on purpose (see "Bootstrap data" in the
// package doc): its content is in the model hash, and a new bootstrap token
// alone reaches the cloud only with the next write that creates instances
// from it, so a token rotation on a pool at rest costs no cloud write.
func specHash(m scalegroup.Model, modelHash string) (string, error) {
	inPlace, err := json.Marshal(m.InPlace)
	if err != nil {
		return "", fmt.Errorf("encoding the provider's in-place settings (%T): %w", m.InPlace, err)
	}
	return digest(struct {
		ModelHash string            `json:"modelHash"`
		Tags      map[string]string `json:"tags"`
		InPlace   json.RawMessage   `json:"inPlace"`
	}{modelHash, m.Tags, inPlace}), nil
}

// digest hashes v's JSON form (maps are encoded with sorted keys).
func digest(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain structs of strings and raw JSON always encode
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:10])
}
