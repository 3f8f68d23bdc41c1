package azure

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// The standard environment variables of the manager's own credentials, as
// azidentity's EnvironmentCredential reads them.
const (
	EnvTenantID     = "AZURE_TENANT_ID"
	EnvClientID     = "AZURE_CLIENT_ID"
	EnvClientSecret = "AZURE_CLIENT_SECRET"
)

// IdentityCredentials resolves a scale set's credentials: the
// AzureClusterIdentity its AzureCluster names (a service principal whose
// client secret is in a Secret), or the manager's own when it names none.
// Credentials are built once per identity and rebuilt when the identity or
// its Secret changes, so their tokens are cached meanwhile.
type IdentityCredentials struct {
	// Reader reads AzureClusterIdentities, Secrets and Namespaces (the
	// manager's cached client).
	Reader client.Reader
	// Options give the Entra ID endpoint and HTTP client.
	Options Options
	// Default is the manager's own credential, nil when it has none
	// (NewDefaultCredential builds it from the environment).
	Default azcore.TokenCredential

	cache kit.CredentialCache[azcore.TokenCredential]
}

var _ Credentials = (*IdentityCredentials)(nil)

// TokenCredential implements Credentials.
func (c *IdentityCredentials) TokenCredential(ctx context.Context, ref scalegroup.Ref) (azcore.TokenCredential, error) {
	if ref.Credentials == "" {
		return kit.OwnCredentials(c.Default, fmt.Sprintf("the AzureCluster names no identityRef and the manager has no credentials of its own: "+
			"set the AzureCluster's spec.identityRef, or give the manager %s, %s and %s", EnvTenantID, EnvClientID, EnvClientSecret))
	}
	ns, name, ok := strings.Cut(ref.Credentials, "/")
	if !ok || ns == "" || name == "" {
		return nil, scalegroup.NewInvalid(fmt.Sprintf("credentials %q are not <namespace>/<name> of an AzureClusterIdentity", ref.Credentials))
	}
	id := &infrav1.AzureClusterIdentity{}
	if err := kit.ReadCredentialsObject(ctx, c.Reader, types.NamespacedName{Namespace: ns, Name: name}, id, "AzureClusterIdentity "+ref.Credentials,
		fmt.Sprintf("AzureClusterIdentity %s does not exist: create it, or fix the AzureCluster's spec.identityRef", ref.Credentials)); err != nil {
		return nil, err
	}
	if err := kit.CheckAllowedNamespace(ctx, c.Reader, id.Spec.AllowedNamespaces, fmt.Sprintf("AzureClusterIdentity %s/%s", id.Namespace, id.Name), ref.Namespace); err != nil {
		return nil, err
	}
	switch id.Spec.Type {
	case infrav1.ServicePrincipal, infrav1.ManualServicePrincipal:
	default:
		return nil, scalegroup.NewUnauthorized(fmt.Sprintf("AzureClusterIdentity %s has type %s; mpool authenticates service principals with a client secret (type ServicePrincipal or ManualServicePrincipal)", ref.Credentials, id.Spec.Type), nil)
	}
	secretRef := types.NamespacedName{Namespace: id.Spec.ClientSecret.Namespace, Name: id.Spec.ClientSecret.Name}
	if secretRef.Namespace == "" {
		secretRef.Namespace = ns
	}
	if secretRef.Name == "" {
		return nil, scalegroup.NewUnauthorized(fmt.Sprintf("AzureClusterIdentity %s has no spec.clientSecret: name the Secret that holds its client secret", ref.Credentials), nil)
	}
	secret := &corev1.Secret{}
	if err := kit.ReadCredentialsObject(ctx, c.Reader, secretRef, secret, "the Secret of AzureClusterIdentity "+ref.Credentials,
		fmt.Sprintf("Secret %s of AzureClusterIdentity %s does not exist", secretRef, ref.Credentials)); err != nil {
		return nil, err
	}
	value := secret.Data[infrav1.AzureClusterIdentityClientSecretKey]
	if len(value) == 0 {
		return nil, scalegroup.NewUnauthorized(fmt.Sprintf("Secret %s of AzureClusterIdentity %s has no key %q", secretRef, ref.Credentials, infrav1.AzureClusterIdentityClientSecretKey), nil)
	}

	return c.cache.Get(ref.Credentials, id.ResourceVersion+"/"+secret.ResourceVersion, func() (azcore.TokenCredential, error) {
		cred, err := azidentity.NewClientSecretCredential(id.Spec.TenantID, id.Spec.ClientID, string(value),
			&azidentity.ClientSecretCredentialOptions{ClientOptions: c.Options.identityClientOptions(), DisableInstanceDiscovery: c.Options.disableInstanceDiscovery()})
		if err != nil {
			return nil, scalegroup.NewUnauthorized(fmt.Sprintf("AzureClusterIdentity %s: %v", ref.Credentials, err), err)
		}
		return cred, nil
	})
}

// NewDefaultCredential returns the manager's own credential from the
// standard environment variables (AZURE_TENANT_ID, AZURE_CLIENT_ID and
// AZURE_CLIENT_SECRET, or the certificate variables azidentity reads), or
// nil when they are not set.
func NewDefaultCredential(opts Options, getenv func(string) string) (azcore.TokenCredential, error) {
	if getenv(EnvTenantID) == "" || getenv(EnvClientID) == "" {
		return nil, nil
	}
	cred, err := azidentity.NewEnvironmentCredential(&azidentity.EnvironmentCredentialOptions{
		ClientOptions: opts.identityClientOptions(), DisableInstanceDiscovery: opts.disableInstanceDiscovery(),
	})
	if err != nil {
		return nil, errors.New("the manager's Azure credentials (AZURE_* environment variables): " + err.Error())
	}
	return cred, nil
}

// identityClientOptions are the options of Entra ID credentials: the
// authority host and the HTTP client.
func (o Options) identityClientOptions() azcore.ClientOptions {
	// As for ARM, the engine retries (with backoff): a throttled or
	// failing Entra ID must not hold a reconcile in the SDK's retries.
	co := azcore.ClientOptions{Cloud: o.cloudConfig(), Retry: policy.RetryOptions{MaxRetries: -1, TryTimeout: kit.RequestTimeout}}
	if o.HTTPClient != nil {
		co.Transport = o.HTTPClient
	}
	return co
}

// disableInstanceDiscovery: Entra's instance discovery is Azure's public
// cloud's; another authority host (a sovereign cloud's, the simulated
// Azure) is trusted as configured.
func (o Options) disableInstanceDiscovery() bool {
	return o.AuthorityHost != "" && o.AuthorityHost != DefaultAuthorityHost
}

// cloudConfig is the Azure cloud the options name.
func (o Options) cloudConfig() cloud.Configuration {
	arm := strings.TrimRight(o.ResourceManagerEndpoint, "/")
	if arm == "" {
		arm = DefaultResourceManagerEndpoint
	}
	authority := o.AuthorityHost
	if authority == "" {
		authority = DefaultAuthorityHost
	}
	if !strings.HasSuffix(authority, "/") {
		authority += "/"
	}
	return cloud.Configuration{
		ActiveDirectoryAuthorityHost: authority,
		Services: map[cloud.ServiceName]cloud.ServiceConfiguration{
			cloud.ResourceManager: {Endpoint: arm, Audience: arm},
		},
	}
}

// NewClientSecretCredential returns a service principal's credential with
// a client secret, for the manager's own credentials given as flags.
func NewClientSecretCredential(opts Options, tenantID, clientID, secret string) (azcore.TokenCredential, error) {
	cred, err := azidentity.NewClientSecretCredential(tenantID, clientID, secret,
		&azidentity.ClientSecretCredentialOptions{ClientOptions: opts.identityClientOptions(), DisableInstanceDiscovery: opts.disableInstanceDiscovery()})
	if err != nil {
		return nil, fmt.Errorf("the manager's Azure service principal: %w", err)
	}
	return cred, nil
}
