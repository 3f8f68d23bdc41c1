package aws

import (
	"context"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"k8s.io/utils/clock"

	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// Options configure the AWS provider's ScaleGroup.
type Options struct {
	// Endpoint overrides the base endpoint of both services, Auto Scaling
	// and EC2 (the simulated AWS's URL). "" leaves the SDK its own
	// resolution, which honours AWS_ENDPOINT_URL, the per-service
	// AWS_ENDPOINT_URL_AUTO_SCALING and AWS_ENDPOINT_URL_EC2 and the shared
	// config's endpoint settings.
	Endpoint string
	// HTTPClient carries every request (tests count and fault requests with
	// it). nil leaves the SDK its own.
	HTTPClient *http.Client
	// Credentials resolves a scalegroup.Ref's Credentials.
	Credentials Credentials
	// Region is the region of a Ref that names none (its Scope is ""); the
	// AWSMachinePool adapter always names the AWSCluster's.
	Region string
	// Clock stamps the time an instance was first seen (see Get); nil is
	// the real clock.
	Clock clock.PassiveClock
}

// Credentials resolves the credentials an Auto Scaling Group is reached
// with.
type Credentials interface {
	// CredentialsProvider returns the credentials of a group:
	// ref.Credentials is "AWSClusterStaticIdentity/<name>", or "" for the
	// manager's own; ref.Namespace is the namespace using them, which the
	// identity must allow. It returns the same provider while the identity
	// is unchanged. Errors say what to fix (a missing identity or Secret, a
	// namespace the identity does not allow) and are typed
	// (scalegroup.NewUnauthorized).
	CredentialsProvider(ctx context.Context, ref scalegroup.Ref) (aws.CredentialsProvider, error)
}
