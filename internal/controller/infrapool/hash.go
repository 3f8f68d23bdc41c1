package infrapool

import (
	"encoding/json"
	"fmt"

	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

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
	return contract.Digest(struct {
		ModelHash string            `json:"modelHash"`
		Tags      map[string]string `json:"tags"`
		InPlace   json.RawMessage   `json:"inPlace"`
	}{modelHash, m.Tags, inPlace}), nil
}
