package aws

import (
	"context"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/mpool-dev/mpool/internal/provider/kit"
)

// Clients are the SDK clients of an AWS-family ScaleGroup (C: the set it
// calls, e.g. Auto Scaling and EC2), one set per region and credentials,
// made from one SDK configuration (NewSDKConfig's) by the function given
// to NewClients.
type Clients[C any] struct {
	base  aws.Config
	make  func(aws.Config) C
	cache kit.ClientCache[clientKey, C]
}

// clientKey identifies a region reached with one set of credentials.
type clientKey struct {
	region string
	creds  aws.CredentialsProvider
}

// NewClients returns the clients that makeClients makes from the SDK
// configuration NewSDKConfig(region, hc, extra...) returns, with each
// set's region and credentials.
func NewClients[C any](region string, hc *http.Client, makeClients func(aws.Config) C, extra ...func(*config.LoadOptions) error) (*Clients[C], error) {
	base, err := NewSDKConfig(region, hc, extra...)
	if err != nil {
		return nil, err
	}
	return &Clients[C]{base: base, make: makeClients}, nil
}

// For returns the clients of region reached with creds, made once while
// the credentials resolver returns the same credentials (see
// kit.ClientCache).
func (c *Clients[C]) For(region string, creds aws.CredentialsProvider) C {
	v, _ := c.cache.Get(clientKey{region: region, creds: creds}, func() (C, error) {
		cfg := c.base.Copy()
		cfg.Region, cfg.Credentials = region, creds
		return c.make(cfg), nil
	})
	return v
}

// NewSDKConfig returns the SDK configuration the AWS and EKS providers build
// their clients from: in region ("" for the SDK's resolution), carried by
// hc (nil for the SDK's own client), with extra load options. The SDK's
// retries are off (the engine retries, so one logical call is one
// request) and it has no credentials: each call's are its Ref's, resolved
// per call, never the default chain's by accident.
func NewSDKConfig(region string, hc *http.Client, extra ...func(*config.LoadOptions) error) (aws.Config, error) {
	lo := append([]func(*config.LoadOptions) error{
		// The SDK's own client (AWS_CA_BUNDLE applies to it), bounded.
		config.WithHTTPClient(awshttp.NewBuildableClient().WithTimeout(kit.RequestTimeout)),
		config.WithRetryer(func() aws.Retryer { return aws.NopRetryer{} }),
		config.WithRetryMaxAttempts(1),
		config.WithCredentialsProvider(aws.AnonymousCredentials{}),
	}, extra...)
	if region != "" {
		lo = append(lo, config.WithRegion(region))
	}
	cfg, err := config.LoadDefaultConfig(context.Background(), lo...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("loading the SDK's configuration: %w", err)
	}
	if hc != nil {
		// Set after loading: the caller's client owns its TLS settings
		// (AWS_CA_BUNDLE applies to the SDK's own client only).
		cfg.HTTPClient = hc
	}
	return cfg, nil
}
