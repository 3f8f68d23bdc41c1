package eks

import (
	"context"

	"github.com/spf13/pflag"

	awsprovider "github.com/mpool-dev/mpool/internal/provider/aws"
	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// Config is how the manager reaches EKS, for AWSManagedMachinePools: on
// with the AWS provider and with its configuration (credentials, region,
// AWSClusterStaticIdentities, EC2 at its endpoint), EKS at Endpoint.
type Config struct {
	// AWS is the AWS provider's configuration, which this one shares.
	AWS *awsprovider.Config
	// Endpoint is the base endpoint of EKS ("" for the SDK's resolution,
	// which honours AWS_ENDPOINT_URL_EKS). EKS is a service of its own: the
	// simulated cloud serves it on a listener of its own, and --aws-endpoint
	// does not reach it.
	Endpoint string
}

var _ kit.Config = (*Config)(nil)

// NewConfig returns the EKS provider's configuration sharing aws, the AWS
// provider's.
func NewConfig(aws *awsprovider.Config) *Config { return &Config{AWS: aws} }

// AddFlags implements kit.Config: --eks-endpoint (the AWS provider's flags
// configure the rest).
func (c *Config) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Endpoint, "eks-endpoint", c.Endpoint, "Base endpoint of EKS, for AWSManagedMachinePools (default: the SDK's resolution, which honours $AWS_ENDPOINT_URL_EKS); their EC2 reads use --aws-endpoint")
}

// ForSimulatedCloud implements kit.Config: the simulated EKS (the AWS
// provider's configuration points at the simulated AWS).
func (c *Config) ForSimulatedCloud(sim kit.Simulated) { c.Endpoint, _, _ = sim.Face(ProviderName) }

// ScaleGroup implements kit.Config: the EKS client, with the AWS provider's
// credentials, EKS at Endpoint and EC2 at the AWS provider's endpoint; nil
// when the AWS provider is off.
func (c *Config) ScaleGroup(ctx context.Context, env kit.Env) (scalegroup.ScaleGroup, error) {
	if c.AWS == nil || c.AWS.Disabled {
		return nil, nil
	}
	creds, region, err := c.AWS.Credentials(ctx, env)
	if err != nil {
		return nil, err
	}
	return New(Options{Endpoint: c.Endpoint, EC2Endpoint: c.AWS.Endpoint, HTTPClient: env.HTTPClient, Credentials: creds, Region: region})
}
