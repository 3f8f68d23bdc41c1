package aws

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// Config is how the manager reaches AWS: the SDK's own endpoint resolution
// by default (which honours AWS_ENDPOINT_URL and its per-service
// variants), or Endpoint for Auto Scaling and EC2 (the simulated AWS).
// Pools are reached with their AWSCluster's AWSClusterStaticIdentity, else
// with the manager's own credentials: AccessKeyID and SecretAccessKey when
// set, else the SDK's default chain (environment, shared config and
// credentials files, web identity, instance metadata). The EKS provider
// (package eks) shares it: its credentials, region and EC2 endpoint.
type Config struct {
	// Disabled turns the AWS provider off, and the EKS provider with it
	// (--aws-disabled).
	Disabled bool
	// Endpoint is the base endpoint of Auto Scaling and EC2 ("" for the
	// SDK's resolution).
	Endpoint string
	// Region is the region of the manager's own default chain when it
	// names none ("" for the chain's).
	Region string
	// IdentityNamespace is the manager's namespace, where the Secrets of
	// AWSClusterStaticIdentities live (as CAPA's controller namespace).
	IdentityNamespace string
	// AccessKeyID and SecretAccessKey are the manager's own static key;
	// empty uses the SDK's default chain.
	AccessKeyID, SecretAccessKey string
}

var _ kit.Config = (*Config)(nil)

// AddFlags implements kit.Config: --aws-disabled, --aws-endpoint,
// --aws-region and --aws-identity-namespace (default $POD_NAMESPACE, else
// mpool-system).
func (c *Config) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&c.Disabled, "aws-disabled", c.Disabled, "Do not start the AWS provider (AWSMachinePools)")
	fs.StringVar(&c.Endpoint, "aws-endpoint", c.Endpoint, "Base endpoint of Auto Scaling and EC2 (default: the SDK's resolution, which honours $AWS_ENDPOINT_URL)")
	fs.StringVar(&c.Region, "aws-region", c.Region, "Region of the manager's own credentials when their chain names none (AWSClusters name their own)")
	fs.StringVar(&c.IdentityNamespace, "aws-identity-namespace", kit.EnvOr("POD_NAMESPACE", "mpool-system"), "Namespace of the Secrets of AWSClusterStaticIdentities (the manager's namespace)")
}

// ForSimulatedCloud implements kit.Config: the simulated AWS, its region
// and its default key when it has them; AWSMachinePools in AWSClusters of
// its account run on it, with their static identity (whose Secret is in
// sim.IdentityNamespace), else that key.
func (c *Config) ForSimulatedCloud(sim kit.Simulated) {
	u, acct, ok := sim.Face(ProviderName)
	if !ok {
		*c = Config{Disabled: true}
		return
	}
	*c = Config{Endpoint: u, Region: acct.Region, IdentityNamespace: sim.IdentityNamespace,
		AccessKeyID: acct.ID, SecretAccessKey: acct.Secret}
}

// ScaleGroup implements kit.Config: the AWS client with its endpoint and
// the manager's own credentials; nil when Disabled.
func (c *Config) ScaleGroup(ctx context.Context, env kit.Env) (scalegroup.ScaleGroup, error) {
	if c.Disabled {
		return nil, nil
	}
	creds, region, err := c.Credentials(ctx, env)
	if err != nil {
		return nil, err
	}
	return New(Options{Endpoint: c.Endpoint, HTTPClient: env.HTTPClient, Credentials: creds, Region: region})
}

// Credentials returns the resolver of AWSClusterStaticIdentities with the
// manager's own credentials, and the region of a Ref that names none: the
// AWS and EKS providers' credentials.
func (c *Config) Credentials(ctx context.Context, env kit.Env) (*IdentityCredentials, string, error) {
	creds := &IdentityCredentials{Reader: env.Reader, Namespace: c.IdentityNamespace}
	region := c.Region
	if c.AccessKeyID != "" && c.SecretAccessKey != "" {
		creds.Default = NewStaticCredentials(c.AccessKeyID, c.SecretAccessKey, "")
		return creds, region, nil
	}
	def, chainRegion, err := NewDefaultCredentials(ctx)
	if err != nil {
		return nil, "", err
	}
	creds.Default = def
	if region == "" {
		region = chainRegion
	}
	return creds, region, nil
}
