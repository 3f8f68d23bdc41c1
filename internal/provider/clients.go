package provider

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/mpool-dev/mpool/internal/provider/aws"
	"github.com/mpool-dev/mpool/internal/provider/aws/eks"
	"github.com/mpool-dev/mpool/internal/provider/azure"
	"github.com/mpool-dev/mpool/internal/provider/local"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// localScaleGroup builds the simulated cloud's client.
func localScaleGroup(cfg Config, _ ctrl.Manager) (scalegroup.ScaleGroup, error) {
	if cfg.LocalCloudURL == "" {
		return nil, nil
	}
	return local.New(cfg.LocalCloudURL, local.Options{HTTPClient: cfg.HTTPClient})
}

// azureScaleGroup builds the Azure client: its endpoints, its HTTP client
// (trusting cfg.Azure.CAFile), the manager's own credential and the
// resolver of AzureClusterIdentities.
func azureScaleGroup(cfg Config, mgr ctrl.Manager) (scalegroup.ScaleGroup, error) {
	ac := cfg.Azure
	if ac == nil {
		return nil, nil
	}
	hc := cfg.HTTPClient
	if hc == nil && ac.CAFile != "" {
		var err error
		if hc, err = httpClientTrusting(ac.CAFile); err != nil {
			return nil, err
		}
	}
	opts := azure.Options{ResourceManagerEndpoint: ac.ResourceManagerEndpoint, AuthorityHost: ac.AuthorityHost, HTTPClient: hc}
	creds := &azure.IdentityCredentials{Reader: mgr.GetClient(), Options: opts}
	var err error
	secret := ac.ClientSecret
	if secret == "" {
		secret = os.Getenv(azure.EnvClientSecret)
	}
	if ac.TenantID != "" && ac.ClientID != "" && secret != "" {
		creds.Default, err = azure.NewClientSecretCredential(opts, ac.TenantID, ac.ClientID, secret)
	} else {
		creds.Default, err = azure.NewDefaultCredential(opts, os.Getenv)
	}
	if err != nil {
		return nil, err
	}
	opts.Credentials = creds
	return azure.New(opts)
}

// awsScaleGroup builds the AWS client: its endpoint, the manager's own
// credentials and the resolver of AWSClusterStaticIdentities.
func awsScaleGroup(cfg Config, mgr ctrl.Manager) (scalegroup.ScaleGroup, error) {
	ac := cfg.AWS
	if ac == nil {
		return nil, nil
	}
	creds := &aws.IdentityCredentials{Reader: mgr.GetClient(), Namespace: ac.IdentityNamespace}
	region := ac.Region
	if ac.AccessKeyID != "" && ac.SecretAccessKey != "" {
		creds.Default = aws.NewStaticCredentials(ac.AccessKeyID, ac.SecretAccessKey, "")
	} else {
		def, chainRegion, err := aws.NewDefaultCredentials(context.Background())
		if err != nil {
			return nil, err
		}
		creds.Default = def
		if region == "" {
			region = chainRegion
		}
	}
	return aws.New(aws.Options{Endpoint: ac.Endpoint, HTTPClient: cfg.HTTPClient, Credentials: creds, Region: region})
}

// eksScaleGroup builds the EKS client (AWSManagedMachinePools): configured
// with the AWS provider, with its credentials (the manager's own and
// AWSClusterStaticIdentities), EKS at cfg.AWS.EKSEndpoint and EC2 at
// cfg.AWS.Endpoint.
func eksScaleGroup(cfg Config, mgr ctrl.Manager) (scalegroup.ScaleGroup, error) {
	ac := cfg.AWS
	if ac == nil {
		return nil, nil
	}
	creds := &aws.IdentityCredentials{Reader: mgr.GetClient(), Namespace: ac.IdentityNamespace}
	region := ac.Region
	if ac.AccessKeyID != "" && ac.SecretAccessKey != "" {
		creds.Default = aws.NewStaticCredentials(ac.AccessKeyID, ac.SecretAccessKey, "")
	} else {
		def, chainRegion, err := aws.NewDefaultCredentials(context.Background())
		if err != nil {
			return nil, err
		}
		creds.Default = def
		if region == "" {
			region = chainRegion
		}
	}
	return eks.New(eks.Options{Endpoint: ac.EKSEndpoint, EC2Endpoint: ac.Endpoint, HTTPClient: cfg.HTTPClient, Credentials: creds, Region: region})
}

// httpClientTrusting returns an HTTP client that trusts the system's CAs
// and those of the PEM file caFile.
func httpClientTrusting(caFile string) (*http.Client, error) {
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
		Timeout: 60 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
			MaxIdleConnsPerHost: 32,
			IdleConnTimeout:     90 * time.Second,
		},
	}, nil
}
