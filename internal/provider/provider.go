package provider

import (
	"github.com/spf13/pflag"

	"github.com/mpool-dev/mpool/internal/provider/aws"
	"github.com/mpool-dev/mpool/internal/provider/aws/eks"
	"github.com/mpool-dev/mpool/internal/provider/azure"
	"github.com/mpool-dev/mpool/internal/provider/azure/aks"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/provider/gcp"
	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/provider/local"
)

// Provider is one cloud in the registry: the infra pool kind it serves,
// through its Adapter, and its own configuration, which says how to reach
// its cloud and builds its ScaleGroup.
type Provider struct {
	// Name labels the provider in metrics, events and logs; the simulated
	// cloud's face for it has the same name.
	Name string
	// Adapter maps the provider's infra pool kind onto the engine.
	Adapter contract.Adapter
	// Config returns the provider's configuration at its defaults; made
	// holds the configurations of the providers listed before it (EKS
	// shares AWS's).
	Config func(made Configs) kit.Config
}

// All is the registry: every provider mpool has, one line each.
func All() []Provider {
	return []Provider{
		{Name: local.ProviderName, Adapter: local.Adapter{}, Config: func(Configs) kit.Config { return &local.Config{} }},
		{Name: azure.ProviderName, Adapter: azure.Adapter{}, Config: func(Configs) kit.Config { return &azure.Config{} }},
		{Name: aws.ProviderName, Adapter: aws.Adapter{}, Config: func(Configs) kit.Config { return &aws.Config{} }},
		{Name: aks.ProviderName, Adapter: aks.Adapter{}, Config: func(c Configs) kit.Config { return aks.NewConfig(c[azure.ProviderName].(*azure.Config)) }},
		{Name: eks.ProviderName, Adapter: eks.Adapter{}, Config: func(c Configs) kit.Config { return eks.NewConfig(c[aws.ProviderName].(*aws.Config)) }},
		{Name: gcp.ProviderName, Adapter: gcp.Adapter{}, Config: func(Configs) kit.Config { return &gcp.Config{} }},
	}
}

// Adapters returns every provider's Adapter: the readers `mpool describe`,
// `mpool rollout` and the metrics see pools and instances through.
func Adapters() []contract.Adapter {
	var out []contract.Adapter
	for _, p := range All() {
		out = append(out, p.Adapter)
	}
	return out
}

// Configs are the configurations of the providers the manager may start,
// by provider name; a provider without one is not started. `mpool manager`
// sets them from its flags (AddFlags), `mpool up` and the integration
// tests point them at the simulated cloud (ForSimulatedCloud).
type Configs map[string]kit.Config

// NewConfigs returns the configurations of the named providers (every
// provider when none is named) at their defaults.
func NewConfigs(names ...string) Configs {
	all := Configs{}
	for _, p := range All() {
		all[p.Name] = p.Config(all)
	}
	if len(names) == 0 {
		return all
	}
	out := Configs{}
	for _, n := range names {
		if c, ok := all[n]; ok {
			out[n] = c
		}
	}
	return out
}

// AddFlags registers every provider's flags on fs.
func (c Configs) AddFlags(fs *pflag.FlagSet) {
	for _, p := range All() {
		if cfg, ok := c[p.Name]; ok {
			cfg.AddFlags(fs)
		}
	}
}

// ForSimulatedCloud points every provider at the simulated cloud sim, and
// returns c.
func (c Configs) ForSimulatedCloud(sim kit.Simulated) Configs {
	for _, p := range All() {
		if cfg, ok := c[p.Name]; ok {
			cfg.ForSimulatedCloud(sim)
		}
	}
	return c
}
