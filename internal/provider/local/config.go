package local

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// Config is how the manager reaches the simulated cloud's local face: the
// local provider is on when URL is set.
type Config struct {
	// URL is the local face's endpoint (mpool up, mpool cloud); "" turns
	// the local provider off.
	URL string
}

var _ kit.Config = (*Config)(nil)

// AddFlags implements kit.Config: --local-cloud-url.
func (c *Config) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.URL, "local-cloud-url", c.URL, "Endpoint of the simulated cloud for LocalMachinePools (empty: local provider off)")
}

// ForSimulatedCloud implements kit.Config: the local face.
func (c *Config) ForSimulatedCloud(sim kit.Simulated) { c.URL, _, _ = sim.Face(ProviderName) }

// ScaleGroup implements kit.Config: the local face's client, nil without a
// URL.
func (c *Config) ScaleGroup(_ context.Context, env kit.Env) (scalegroup.ScaleGroup, error) {
	if c.URL == "" {
		return nil, nil
	}
	return New(c.URL, Options{HTTPClient: env.HTTPClient})
}
