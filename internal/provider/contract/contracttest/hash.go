package contracttest

import (
	"testing"

	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// ModelHash is the engine's hash of m (contract.ModelHash), failing t when
// m cannot be hashed: what a provider's tests compare to tell whether a
// field of its pool rolls the pool's instances.
func ModelHash(t testing.TB, m scalegroup.Model) string {
	t.Helper()
	h, err := contract.ModelHash(m)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
