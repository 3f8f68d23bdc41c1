package kit

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// Config is a provider's own configuration: how the manager reaches its
// cloud (endpoints, the manager's own credentials). Each provider package
// has one; the registry holds one per provider, so that `mpool manager`,
// `mpool up` and the tests configure every provider without naming its
// fields.
type Config interface {
	// AddFlags registers the provider's flags on fs (names prefixed with
	// the provider's, e.g. --aws-endpoint) and reads the environment
	// variables that default them.
	AddFlags(fs *pflag.FlagSet)
	// ForSimulatedCloud points the provider at the simulated cloud sim,
	// as `mpool up` and the integration tests run it; a provider whose face
	// sim does not serve is turned off.
	ForSimulatedCloud(sim Simulated)
	// ScaleGroup builds the provider's ScaleGroup, or returns nil when the
	// configuration turns the provider off (its controllers are then not
	// started).
	ScaleGroup(ctx context.Context, env Env) (scalegroup.ScaleGroup, error)
}

// RequestTimeout bounds each request a provider sends its cloud, its
// answer read whole. Every provider's client carries it: the cloud SDKs'
// own clients have no bound, and one request that never answers (a
// connection dropped silently on the way) would hold its pool's reconcile,
// and so the pool, forever. The engine retries a request that timed out,
// as any other transient failure.
const RequestTimeout = 60 * time.Second

// Env is what a provider's ScaleGroup is built with besides its Config.
type Env struct {
	// Reader reads the management cluster: cluster identities and their
	// Secrets (the manager's cached client).
	Reader client.Reader
	// HTTPClient, when set, carries the provider's cloud requests (tests
	// count and fault them with it); nil leaves the provider its own.
	HTTPClient *http.Client
}

// HTTPClientTrusting returns env's HTTPClient when it is set, else, when
// caFile is set, a client that trusts it (HTTPClientTrusting), else nil
// (the provider's own).
func (env Env) HTTPClientTrusting(caFile string) (*http.Client, error) {
	if env.HTTPClient != nil || caFile == "" {
		return env.HTTPClient, nil
	}
	return HTTPClientTrusting(caFile)
}

// Simulated is the simulated cloud as a provider's Config sees it: where
// its faces listen and the accounts they know. It carries no simulator
// type: providers never import the simulated cloud.
type Simulated struct {
	// FaceURL returns the base URL of a face (faces are named as the
	// providers they serve: "local", "azure", "aws", "eks"), or "" when the
	// cloud does not serve it.
	FaceURL func(face string) string
	// CAFile is a PEM file of the CA of the cloud's HTTPS listeners.
	CAFile string
	// IdentityNamespace is the namespace of the Secrets of cluster
	// identities that live in the manager's namespace ("" keeps the
	// provider's default).
	IdentityNamespace string
	// Accounts are the cloud's default accounts by face: a provider given
	// one uses its credentials as the manager's own (none: pools use their
	// cluster identities only) and its region as the default one.
	Accounts map[string]Account
}

// Account is an account of the simulated cloud: a principal (Tenant and ID
// and Secret: Azure's tenant, client ID and client secret; AWS's access
// key ID and secret access key) and a default region.
type Account struct {
	Tenant, ID, Secret string
	Region             string
}

// HTTPClientTrusting returns an HTTP client that trusts the system's CAs
// and those of the PEM file caFile (a cloud's private CA, the simulated
// cloud's).
func HTTPClientTrusting(caFile string) (*http.Client, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("reading the CA file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("the CA file %s holds no PEM certificate", caFile)
	}
	return &http.Client{
		Timeout: RequestTimeout,
		Transport: &http.Transport{
			TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
			MaxIdleConnsPerHost: 32,
			IdleConnTimeout:     90 * time.Second,
		},
	}, nil
}

// EnvOr returns the environment variable k, or def when it is empty: the
// default of a flag that an environment variable may set.
func EnvOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// Face returns the URL of the named face and its default account; ok is
// false when the cloud does not serve the face (the provider is then off).
func (s Simulated) Face(name string) (url string, account Account, ok bool) {
	if s.FaceURL != nil {
		url = s.FaceURL(name)
	}
	return url, s.Accounts[name], url != ""
}
