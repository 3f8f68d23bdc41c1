package gcp

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// CredentialsKey is the key of a credentialsRef Secret that holds the
// service account key (JSON), as CAPG reads it.
const CredentialsKey = "credentials"

// computeScope is the OAuth scope mpool asks for.
const computeScope = "https://www.googleapis.com/auth/cloud-platform"

// Credentials resolves the HTTP client (authenticated, trusting the
// configured CAs) a group's calls go through: the service account key of
// the GCPCluster's credentialsRef Secret, or the manager's own (a key
// file's content, else application default credentials). A Secret's client
// is built once and rebuilt when the Secret changes; tokens are reused
// until they expire.
type Credentials struct {
	// Reader reads the credentialsRef Secrets (the manager's cached
	// client).
	Reader client.Reader
	// Base carries the requests (the token endpoint's and the API's); nil
	// is http.DefaultClient.
	Base *http.Client
	// DefaultKey is the manager's own service account key (JSON); empty
	// uses application default credentials.
	DefaultKey []byte

	def   kit.CredentialCache[*http.Client]
	cache kit.CredentialCache[*http.Client]
}

// client returns the authenticated HTTP client of ref and a key naming it
// (for the SDK client cache).
func (c *Credentials) client(ctx context.Context, ref scalegroup.Ref) (*http.Client, string, error) {
	if ref.Credentials == "" {
		hc, err := c.def.Get("", "", func() (*http.Client, error) { return c.build(ctx, c.DefaultKey) })
		if err != nil {
			return nil, "", scalegroup.NewUnauthorized("the GCPCluster names no credentialsRef and the manager's own GCP credentials cannot be loaded: "+
				"set the GCPCluster's spec.credentialsRef to a Secret holding a service account key, or give the manager --gcp-credentials-file "+
				"(or application default credentials)", err)
		}
		return hc, "", nil
	}
	ns, name, ok := strings.Cut(ref.Credentials, "/")
	if !ok || ns == "" || name == "" {
		return nil, "", scalegroup.NewInvalid(fmt.Sprintf("credentials %q are not <namespace>/<name>", ref.Credentials))
	}
	secret := &corev1.Secret{}
	if err := kit.ReadCredentialsObject(ctx, c.Reader, types.NamespacedName{Namespace: ns, Name: name}, secret, "Secret "+ref.Credentials,
		fmt.Sprintf("Secret %s (the GCPCluster's credentialsRef) does not exist: create it with the service account key under %q", ref.Credentials, CredentialsKey)); err != nil {
		return nil, "", err
	}
	key := secret.Data[CredentialsKey]
	if len(key) == 0 {
		return nil, "", scalegroup.NewUnauthorized(fmt.Sprintf("Secret %s (the GCPCluster's credentialsRef) has no key %q: put the service account key (JSON) there", ref.Credentials, CredentialsKey), nil)
	}
	version := secret.ResourceVersion
	hc, err := c.cache.Get(ref.Credentials, version, func() (*http.Client, error) { return c.build(ctx, key) })
	if err != nil {
		return nil, "", scalegroup.NewUnauthorized(fmt.Sprintf("Secret %s's %q is not a service account key", ref.Credentials, CredentialsKey), err)
	}
	return hc, ref.Credentials + "@" + version, nil
}

// build returns an HTTP client authenticated with the service account key
// (the JWT bearer grant against the key's token_uri), or with application
// default credentials when key is empty.
func (c *Credentials) build(ctx context.Context, key []byte) (*http.Client, error) {
	base := c.Base
	if base == nil {
		base = http.DefaultClient
	}
	tctx := context.WithValue(context.Background(), oauth2.HTTPClient, base)
	var src oauth2.TokenSource
	if len(key) > 0 {
		conf, err := google.JWTConfigFromJSON(key, computeScope)
		if err != nil {
			return nil, err
		}
		src = conf.TokenSource(tctx)
	} else {
		creds, err := google.FindDefaultCredentials(ctx, computeScope)
		if err != nil {
			return nil, err
		}
		src = creds.TokenSource
	}
	return &http.Client{Timeout: base.Timeout, Transport: &oauth2.Transport{Base: base.Transport, Source: oauth2.ReuseTokenSource(nil, src)}}, nil
}
