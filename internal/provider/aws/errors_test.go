package aws

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/mpool-dev/mpool/internal/scalegroup"
)

func TestCloudError(t *testing.T) {
	apiErr := func(code string, status int, header http.Header) error {
		resp := &smithyhttp.Response{Response: &http.Response{StatusCode: status, Header: header}}
		return &smithy.OperationError{ServiceID: "Auto Scaling", OperationName: "UpdateAutoScalingGroup",
			Err: &smithyhttp.ResponseError{Response: resp, Err: &smithy.GenericAPIError{Code: code, Message: "the message"}}}
	}
	for _, tc := range []struct {
		name   string
		err    error
		reason scalegroup.Reason
		wait   time.Duration
	}{
		{name: "throttling, with Retry-After", err: apiErr("Throttling", 400, http.Header{"Retry-After": {"7"}}), reason: scalegroup.ReasonThrottled, wait: 7 * time.Second},
		{name: "EC2's request limit", err: apiErr("RequestLimitExceeded", 503, nil), reason: scalegroup.ReasonThrottled},
		{name: "validation", err: apiErr("ValidationError", 400, nil), reason: scalegroup.ReasonInvalid},
		{name: "unknown AMI", err: apiErr("InvalidAMIID.NotFound", 400, nil), reason: scalegroup.ReasonInvalid},
		{name: "bad signature", err: apiErr("SignatureDoesNotMatch", 403, nil), reason: scalegroup.ReasonUnauthorized},
		{name: "unknown key", err: apiErr("InvalidClientTokenId", 403, nil), reason: scalegroup.ReasonUnauthorized},
		{name: "EC2 auth failure", err: apiErr("AuthFailure", 401, nil), reason: scalegroup.ReasonUnauthorized},
		{name: "no permission", err: apiErr("UnauthorizedOperation", 403, nil), reason: scalegroup.ReasonUnauthorized},
		{name: "vCPU quota", err: apiErr("VcpuLimitExceeded", 400, nil), reason: scalegroup.ReasonQuotaExceeded},
		{name: "an activity in progress", err: apiErr("ScalingActivityInProgress", 400, nil), reason: scalegroup.ReasonTransient},
		{name: "resource in use", err: apiErr("ResourceInUse", 400, nil), reason: scalegroup.ReasonTransient},
		{name: "server error", err: apiErr("InternalFailure", 500, nil), reason: scalegroup.ReasonTransient},
		{name: "network", err: fmt.Errorf("dial: %w", errors.New("connection refused")), reason: scalegroup.ReasonTransient},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := cloudError(tc.err, scalegroup.Ref{Name: "g", Scope: "us-east-1", Credentials: "AWSClusterStaticIdentity/x"})
			if r := scalegroup.ReasonOf(err); r != tc.reason {
				t.Errorf("%v: reason %s, want %s", err, r, tc.reason)
			}
			if w := scalegroup.RetryAfter(err); w != tc.wait {
				t.Errorf("retry after %s, want %s", w, tc.wait)
			}
		})
	}
}
