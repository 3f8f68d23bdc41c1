// Package awstest is what the tests of the simulated AWS's faces (awsface
// and eksface) share: the configuration of their AWS SDK clients and the
// checks of the API errors the faces answer. It imports no face, so a
// face's own tests can use it.
package awstest

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go"
)

// Config is the SDK configuration of a test's clients of the face at url,
// signing in region with the static credentials key and secret. API errors
// come back at once (the tests assert them); a dropped connection is
// retried, as the SDK's standard retryer would.
func Config(url, region, key, secret string) aws.Config {
	return aws.Config{
		Region:       region,
		Credentials:  credentials.NewStaticCredentialsProvider(key, secret, ""),
		BaseEndpoint: aws.String(url),
		Retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = 3
				o.Retryables = []retry.IsErrorRetryable{retry.RetryableConnectionError{}}
			})
		},
	}
}

// APIError fails t unless err is an API error with code, and returns it.
func APIError(t testing.TB, err error, code string) smithy.APIError {
	t.Helper()
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != code {
		t.Fatalf("error %v: want API error %s", err, code)
	}
	return ae
}

// HTTPStatus is the HTTP status of the response err came with, 0 when
// none.
func HTTPStatus(err error) int {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}
