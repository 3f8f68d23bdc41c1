package azure

import (
	"context"
	"os"

	"github.com/spf13/pflag"

	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// EnvManagerClientSecret holds the client secret of the manager's own
// service principal named by --azure-tenant-id and --azure-client-id
// (never a flag: flags show in ps).
const EnvManagerClientSecret = "MPOOL_AZURE_CLIENT_SECRET"

// Config is how the manager reaches Azure: Azure's public cloud by
// default, or other endpoints (a sovereign cloud, the simulated Azure).
// Pools are reached with their AzureCluster's identity, else with the
// manager's own credentials: TenantID, ClientID and ClientSecret when set,
// else the AZURE_* environment variables.
type Config struct {
	// Disabled turns the Azure provider off (--azure-disabled).
	Disabled bool
	// ResourceManagerEndpoint is ARM's URL ("" for Azure's public cloud).
	ResourceManagerEndpoint string
	// AuthorityHost is Microsoft Entra ID's URL ("" for Azure's public
	// cloud).
	AuthorityHost string
	// CAFile is a PEM file of extra CAs to trust (the simulated cloud's).
	CAFile string
	// TenantID, ClientID and ClientSecret are the manager's own service
	// principal; empty reads the AZURE_* environment variables.
	TenantID, ClientID, ClientSecret string
}

var _ kit.Config = (*Config)(nil)

// AddFlags implements kit.Config: --azure-disabled and the endpoints and
// principal flags; the principal's secret is read from
// $MPOOL_AZURE_CLIENT_SECRET.
func (c *Config) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&c.Disabled, "azure-disabled", c.Disabled, "Do not start the Azure provider (AzureMachinePools)")
	fs.StringVar(&c.ResourceManagerEndpoint, "azure-resource-manager-endpoint", c.ResourceManagerEndpoint, "Azure Resource Manager's URL (default: Azure's public cloud, https://management.azure.com)")
	fs.StringVar(&c.AuthorityHost, "azure-authority-host", c.AuthorityHost, "Microsoft Entra ID's URL (default: Azure's public cloud, https://login.microsoftonline.com/)")
	fs.StringVar(&c.CAFile, "azure-ca-file", c.CAFile, "PEM file of extra CAs to trust for Azure's endpoints (the simulated cloud's ca.crt)")
	fs.StringVar(&c.TenantID, "azure-tenant-id", c.TenantID, "The manager's own service principal's tenant, for AzureClusters without identityRef (default: $AZURE_TENANT_ID)")
	fs.StringVar(&c.ClientID, "azure-client-id", c.ClientID, "The manager's own service principal's client ID (default: $AZURE_CLIENT_ID; its secret: $MPOOL_AZURE_CLIENT_SECRET, else $AZURE_CLIENT_SECRET)")
	c.ClientSecret = os.Getenv(EnvManagerClientSecret)
}

// ForSimulatedCloud implements kit.Config: the simulated Azure's ARM and
// Entra ID (one face), trusting its CA, with its default principal when it
// has one. AzureMachinePools in AzureClusters of its subscription run on
// it, authenticated with their AzureClusterIdentity, else that principal.
func (c *Config) ForSimulatedCloud(sim kit.Simulated) {
	u, acct, ok := sim.Face(ProviderName)
	if !ok {
		*c = Config{Disabled: true}
		return
	}
	*c = Config{ResourceManagerEndpoint: u, AuthorityHost: u + "/", CAFile: sim.CAFile,
		TenantID: acct.Tenant, ClientID: acct.ID, ClientSecret: acct.Secret}
}

// ScaleGroup implements kit.Config: the Azure client with its endpoints,
// its HTTP client (trusting CAFile), the manager's own credential and the
// resolver of AzureClusterIdentities; nil when Disabled.
func (c *Config) ScaleGroup(_ context.Context, env kit.Env) (scalegroup.ScaleGroup, error) {
	if c.Disabled {
		return nil, nil
	}
	opts, err := c.Options(env)
	if err != nil {
		return nil, err
	}
	return New(opts)
}

// Options are the Options of c's endpoints, HTTP client and credentials
// (the manager's own, and AzureClusterIdentities through env's reader),
// which the AKS provider shares.
func (c *Config) Options(env kit.Env) (Options, error) {
	hc, err := env.HTTPClientTrusting(c.CAFile)
	if err != nil {
		return Options{}, err
	}
	opts := Options{ResourceManagerEndpoint: c.ResourceManagerEndpoint, AuthorityHost: c.AuthorityHost, HTTPClient: hc}
	creds := &IdentityCredentials{Reader: env.Reader, Options: opts}
	secret := c.ClientSecret
	if secret == "" {
		secret = os.Getenv(EnvClientSecret)
	}
	if c.TenantID != "" && c.ClientID != "" && secret != "" {
		creds.Default, err = NewClientSecretCredential(opts, c.TenantID, c.ClientID, secret)
	} else {
		creds.Default, err = NewDefaultCredential(opts, os.Getenv)
	}
	if err != nil {
		return Options{}, err
	}
	opts.Credentials = creds
	return opts, nil
}
