package aks

import (
	"context"

	"github.com/spf13/pflag"

	azureprovider "github.com/mpool-dev/mpool/internal/provider/azure"
	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// Config is how the manager reaches AKS, for AzureManagedMachinePools: on
// with the Azure provider and with its configuration (ARM and Entra ID
// endpoints, CA, credentials, AzureClusterIdentities). AKS is a resource
// provider of ARM: it has no endpoint of its own.
type Config struct {
	// Azure is the Azure provider's configuration, which this one shares.
	Azure *azureprovider.Config
}

var _ kit.Config = (*Config)(nil)

// NewConfig returns the AKS provider's configuration sharing azure, the
// Azure provider's.
func NewConfig(azure *azureprovider.Config) *Config { return &Config{Azure: azure} }

// AddFlags implements kit.Config: none (the Azure provider's flags
// configure AKS).
func (c *Config) AddFlags(*pflag.FlagSet) {}

// ForSimulatedCloud implements kit.Config: nothing of its own (the Azure
// provider's configuration points at the simulated Azure, whose ARM serves
// AKS).
func (c *Config) ForSimulatedCloud(kit.Simulated) {}

// ScaleGroup implements kit.Config: the AKS client with the Azure
// provider's options; nil when the Azure provider is off.
func (c *Config) ScaleGroup(_ context.Context, env kit.Env) (scalegroup.ScaleGroup, error) {
	if c.Azure == nil || c.Azure.Disabled {
		return nil, nil
	}
	opts, err := c.Azure.Options(env)
	if err != nil {
		return nil, err
	}
	return New(opts)
}
