package provider

import (
	"net/http"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/mpool-dev/mpool/internal/provider/aws"
	"github.com/mpool-dev/mpool/internal/provider/aws/eks"
	"github.com/mpool-dev/mpool/internal/provider/azure"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/provider/local"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// Config is what the manager knows about the clouds: endpoints and
// credentials. A provider whose part is empty is not configured, and its
// controllers are not started.
type Config struct {
	// LocalCloudURL is the simulated cloud's local face (mpool up, mpool
	// cloud); empty disables the local provider.
	LocalCloudURL string
	// Azure configures the Azure provider; nil disables it.
	Azure *AzureConfig
	// AWS configures the AWS provider; nil disables it.
	AWS *AWSConfig
	// HTTPClient, when set, carries every provider's cloud requests (tests
	// count and fault them with it); nil leaves each provider its own.
	HTTPClient *http.Client
}

// AzureConfig is how the manager reaches Azure: Azure's public cloud by
// default, or other endpoints (a sovereign cloud, the simulated Azure).
// Pools are reached with their AzureCluster's identity, else with the
// manager's own credentials: TenantID, ClientID and ClientSecret when set,
// else the AZURE_* environment variables.
type AzureConfig struct {
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

// AWSConfig is how the manager reaches AWS: the SDK's own endpoint
// resolution by default (which honours AWS_ENDPOINT_URL and its
// per-service variants), or Endpoint for both services (the simulated
// AWS). Pools are reached with their AWSCluster's AWSClusterStaticIdentity,
// else with the manager's own credentials: AccessKeyID and
// SecretAccessKey when set, else the SDK's default chain (environment,
// shared config and credentials files, web identity, instance metadata).
type AWSConfig struct {
	// Endpoint is the base endpoint of Auto Scaling and EC2 ("" for the
	// SDK's resolution).
	Endpoint string
	// EKSEndpoint is the base endpoint of EKS, for AWSManagedMachinePools
	// ("" for the SDK's resolution, which honours AWS_ENDPOINT_URL_EKS).
	// EKS is a service of its own: the simulated cloud serves it on a
	// listener of its own, and --aws-endpoint does not reach it. Their EC2
	// reads use Endpoint.
	EKSEndpoint string
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

// Provider is one cloud in the registry: the infra pool kind it serves,
// through its Adapter, and how to reach its scale groups.
type Provider struct {
	// Name labels the provider in metrics, events and logs.
	Name string
	// Adapter maps the provider's infra pool kind onto the engine.
	Adapter contract.Adapter
	// ScaleGroup returns the cloud's ScaleGroup for cfg, or nil when cfg
	// does not configure this provider. mgr gives it the API server (to
	// read identities and their Secrets).
	ScaleGroup func(cfg Config, mgr ctrl.Manager) (scalegroup.ScaleGroup, error)
}

// All is the registry: every provider mpool has, one line each.
func All() []Provider {
	return []Provider{
		{Name: local.ProviderName, Adapter: local.Adapter{}, ScaleGroup: localScaleGroup},
		{Name: azure.ProviderName, Adapter: azure.Adapter{}, ScaleGroup: azureScaleGroup},
		{Name: aws.ProviderName, Adapter: aws.Adapter{}, ScaleGroup: awsScaleGroup},
		{Name: eks.ProviderName, Adapter: eks.Adapter{}, ScaleGroup: eksScaleGroup},
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
