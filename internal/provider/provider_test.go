package provider

import (
	"testing"

	"github.com/mpool-dev/mpool/internal/provider/contract/contracttest"
)

// TestEveryProviderKeepsTheContract runs the contract suites on every
// registry entry: a provider is done when they pass.
func TestEveryProviderKeepsTheContract(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range All() {
		t.Run(p.Name, func(t *testing.T) {
			if p.Name != p.Adapter.Kinds().Provider {
				t.Errorf("registry name %q, the adapter's provider %q", p.Name, p.Adapter.Kinds().Provider)
			}
			if seen[p.Adapter.Kinds().Pool] {
				t.Errorf("two providers serve %s", p.Adapter.Kinds().Pool)
			}
			seen[p.Adapter.Kinds().Pool] = true
			contracttest.Adapter(t, p.Adapter)
		})
	}
}
