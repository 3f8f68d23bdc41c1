package contract

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
	return Digest(struct {
		InstanceType string          `json:"instanceType"`
		Image        string          `json:"image"`
		Zones        []string        `json:"zones"`
		Version      string          `json:"version"`
		Provider     json.RawMessage `json:"provider"`
		Bootstrap    string          `json:"bootstrap"`
	}{m.InstanceType, m.Image, zones, m.Version, provider, hex.EncodeToString(bootstrapData[:])}), nil
}

// Digest hashes v's JSON form (maps are encoded with sorted keys) to the
// short hex form ModelHash has; v must always encode (plain structs of
// strings and raw JSON). The engine hashes what else it records of a pool
// with it.
func Digest(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain structs of strings and raw JSON always encode
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:10])
}
