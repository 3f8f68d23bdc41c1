package azure

import (
	"context"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// Azure's public cloud endpoints, the defaults of Options.
const (
	// DefaultResourceManagerEndpoint is Azure Resource Manager's URL.
	DefaultResourceManagerEndpoint = "https://management.azure.com"
	// DefaultAuthorityHost is Microsoft Entra ID's URL.
	DefaultAuthorityHost = "https://login.microsoftonline.com/"
)

// Options configure the Azure provider's ScaleGroup.
type Options struct {
	// ResourceManagerEndpoint is Azure Resource Manager's URL (default
	// DefaultResourceManagerEndpoint); the token audience is the same URL.
	ResourceManagerEndpoint string
	// AuthorityHost is Microsoft Entra ID's URL (default
	// DefaultAuthorityHost).
	AuthorityHost string
	// HTTPClient carries every request, to Entra ID and ARM (a client
	// trusting the simulated cloud's CA; tests count and fault requests
	// with it). nil leaves the SDK its own.
	HTTPClient *http.Client
	// Credentials resolves a scalegroup.Ref's Credentials.
	Credentials Credentials
}

// Credentials resolves the credentials a scale set is reached with.
type Credentials interface {
	// TokenCredential returns the credential for a group: ref.Credentials
	// is "<namespace>/<name>" of an AzureClusterIdentity, or "" for the
	// manager's own; ref.Namespace is the namespace using it, which the
	// identity must allow. It returns the same credential while the
	// identity is unchanged, so that its tokens are cached. Errors say what
	// to fix (a missing identity or Secret, a namespace the identity does
	// not allow).
	TokenCredential(ctx context.Context, ref scalegroup.Ref) (azcore.TokenCredential, error)
}
