package gcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// Config is how the manager reaches Compute Engine: the SDK's endpoint by
// default, or Endpoint (the simulated Compute Engine); pools are reached
// with their GCPCluster's credentialsRef, else with the manager's own
// credentials: CredentialsFile (or CredentialsJSON) when set, else
// application default credentials.
type Config struct {
	// Disabled turns the GCP provider off (--gcp-disabled).
	Disabled bool
	// Endpoint is Compute Engine's base URL ("" for the SDK's).
	Endpoint string
	// CredentialsFile is a service account key file of the manager's own.
	CredentialsFile string
	// CredentialsJSON is the manager's own service account key, when it
	// is not in a file (the simulated cloud's default account).
	CredentialsJSON []byte
	// CAFile is a PEM file of CAs to trust besides the system's (the
	// simulated cloud's).
	CAFile string
}

var _ kit.Config = (*Config)(nil)

// AddFlags implements kit.Config: --gcp-disabled, --gcp-endpoint,
// --gcp-credentials-file and --gcp-ca-file.
func (c *Config) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&c.Disabled, "gcp-disabled", c.Disabled, "Do not start the GCP provider (GCPMachinePools)")
	fs.StringVar(&c.Endpoint, "gcp-endpoint", c.Endpoint, "Base URL of Compute Engine (default: the SDK's)")
	fs.StringVar(&c.CredentialsFile, "gcp-credentials-file", c.CredentialsFile, "Service account key file of the manager's own GCP credentials (default: application default credentials, which honour $GOOGLE_APPLICATION_CREDENTIALS)")
	fs.StringVar(&c.CAFile, "gcp-ca-file", c.CAFile, "PEM file of CAs to trust for Compute Engine and the token endpoint besides the system's")
}

// ForSimulatedCloud implements kit.Config: the simulated Compute Engine,
// trusting the cloud's CA, with its default service account's key (its
// token URI the face's) as the manager's own credentials.
func (c *Config) ForSimulatedCloud(sim kit.Simulated) {
	u, acct, ok := sim.Face(ProviderName)
	if !ok {
		*c = Config{Disabled: true}
		return
	}
	*c = Config{Endpoint: u, CAFile: sim.CAFile}
	if acct.ID != "" && acct.Secret != "" {
		c.CredentialsJSON = KeyFile(acct.Tenant, acct.ID, acct.Secret, strings.TrimSuffix(u, "/")+"/token")
	}
}

// KeyFile is a service account key file (JSON) of the account email in
// project, with its private key (PEM) and token URI.
func KeyFile(project, email, privateKeyPEM, tokenURI string) []byte {
	b, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": project, "client_email": email,
		"private_key": privateKeyPEM, "token_uri": tokenURI,
	})
	return b
}

// ScaleGroup implements kit.Config: the managed instance groups reached at
// Endpoint with the manager's own credentials; nil when Disabled.
func (c *Config) ScaleGroup(_ context.Context, env kit.Env) (scalegroup.ScaleGroup, error) {
	if c.Disabled {
		return nil, nil
	}
	base, err := env.HTTPClientTrusting(c.CAFile)
	if err != nil {
		return nil, fmt.Errorf("GCP provider: %w", err)
	}
	if base == nil {
		base = &http.Client{Timeout: kit.RequestTimeout}
	}
	key := c.CredentialsJSON
	if c.CredentialsFile != "" {
		if key, err = os.ReadFile(c.CredentialsFile); err != nil {
			return nil, fmt.Errorf("GCP provider: reading --gcp-credentials-file: %w", err)
		}
	}
	return New(Options{Endpoint: c.Endpoint, Credentials: &Credentials{Reader: env.Reader, Base: base, DefaultKey: key}}), nil
}
