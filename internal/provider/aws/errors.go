package aws

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// cloudError maps an error of the AWS SDK onto scalegroup's typed errors by
// the API error's code:
//
//   - Throttling, ThrottlingException, RequestLimitExceeded → Throttled,
//     with the response's Retry-After when it has one;
//   - AuthFailure, SignatureDoesNotMatch, InvalidClientTokenId,
//     UnrecognizedClientException, ExpiredToken, AccessDenied,
//     UnauthorizedOperation and other 401/403s → Unauthorized, saying
//     which credentials to check;
//   - VcpuLimitExceeded, InstanceLimitExceeded, LimitExceeded →
//     QuotaExceeded;
//   - ResourceInUse, ScalingActivityInProgress, IncorrectInstanceState,
//     5xx and network failures → Transient;
//   - ValidationError, InvalidAMIID.*, InvalidSubnetID.*,
//     InvalidKeyPair.*, InvalidParameter* and other 4xx → Invalid, with
//     AWS's code and message and what to change.
//
// AWS's messages never echo user data or secrets. Errors already
// classified, and the context's, are returned as they are.
func cloudError(err error, ref scalegroup.Ref) error {
	if err == nil || scalegroup.ReasonOf(err) != "" || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return scalegroup.NewTransient("request to AWS failed", err)
	}
	code, msg := ae.ErrorCode(), kit.OneLine(ae.ErrorMessage())
	text := code
	if msg != "" {
		text += ": " + msg
	}
	status, wait := 0, time.Duration(0)
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) && re.Response != nil {
		status = re.HTTPStatusCode()
		wait = kit.RetryAfter(re.Response.Header)
	}
	switch {
	case code == "Throttling" || code == "ThrottlingException" || code == "RequestLimitExceeded" || status == http.StatusTooManyRequests:
		return scalegroup.NewThrottled(text, wait)
	case isAuthCode(code) || status == http.StatusUnauthorized || status == http.StatusForbidden:
		return scalegroup.NewUnauthorized(fmt.Sprintf("AWS refused %s: %s; %s", credentialsName(ref), text, credentialsHint(ref)), nil)
	case code == "VcpuLimitExceeded" || code == "InstanceLimitExceeded" || code == "LimitExceeded" || code == "InsufficientInstanceCapacity":
		return scalegroup.NewQuotaExceeded(text + " (request a quota increase, use another instance type or region, or lower the replicas)")
	case code == "ResourceInUse" || code == "ScalingActivityInProgress" || code == "IncorrectInstanceState" ||
		code == "ServiceUnavailable" || code == "InternalFailure" || code == "InternalError" || status >= 500 || status == http.StatusRequestTimeout:
		return &scalegroup.Error{Reason: scalegroup.ReasonTransient, Message: text, RetryAfter: wait}
	case strings.HasPrefix(code, "InvalidAMIID."):
		return scalegroup.NewInvalid(text + " (set spec.awsLaunchTemplate.ami.id to an AMI of the region, or fix the AMI lookup)")
	case strings.HasPrefix(code, "InvalidSubnetID.") || strings.HasPrefix(code, "InvalidSubnet"):
		return scalegroup.NewInvalid(text + " (fix spec.subnets, or the AWSCluster's spec.network.subnets)")
	case strings.HasPrefix(code, "InvalidKeyPair."):
		return scalegroup.NewInvalid(text + " (fix spec.awsLaunchTemplate.sshKeyName or the AWSCluster's spec.sshKeyName, or create the key pair)")
	case strings.HasPrefix(code, "InvalidGroup.") || strings.HasPrefix(code, "InvalidSecurityGroupID"):
		return scalegroup.NewInvalid(text + " (fix spec.awsLaunchTemplate.additionalSecurityGroups)")
	default:
		return scalegroup.NewInvalid(text)
	}
}

// CloudError is cloudError for the other AWS services mpool reaches with
// the same credentials (EKS, in this provider's eks package): it maps an
// AWS SDK error onto scalegroup's typed errors by its code and status.
func CloudError(err error, ref scalegroup.Ref) error { return cloudError(err, ref) }

// isAuthCode reports whether an error code says the credentials were
// refused.
func isAuthCode(code string) bool {
	switch code {
	case "AuthFailure", "SignatureDoesNotMatch", "InvalidClientTokenId", "UnrecognizedClientException",
		"ExpiredToken", "ExpiredTokenException", "AccessDenied", "AccessDeniedException", "UnauthorizedOperation",
		"MissingAuthenticationToken", "IncompleteSignature", "OptInRequired":
		return true
	}
	return false
}

// apiCode returns the AWS error code of err, "" when it is not an API
// error.
func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// apiMessage returns AWS's message of err, "" when it is not an API error.
func apiMessage(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorMessage()
	}
	return ""
}

// isTemplateNotFound reports whether err says a launch template (or one of
// its versions) does not exist.
func isTemplateNotFound(err error) bool {
	code := apiCode(err)
	return strings.HasPrefix(code, "InvalidLaunchTemplateName.NotFound") ||
		strings.HasPrefix(code, "InvalidLaunchTemplateId.NotFound") ||
		strings.HasPrefix(code, "InvalidLaunchTemplateId.VersionNotFound") ||
		code == "InvalidLaunchTemplateId.Malformed"
}

// isGroupNotFound reports whether err is Auto Scaling's ValidationError for
// a group (or an instance of it) that does not exist.
func isGroupNotFound(err error) bool {
	if apiCode(err) != "ValidationError" {
		return false
	}
	m := strings.ToLower(apiMessage(err))
	return strings.Contains(m, "not found") || strings.Contains(m, "does not exist") || strings.Contains(m, "no managed instance")
}

// credentialsName names a Ref's credentials in messages.
func credentialsName(ref scalegroup.Ref) string {
	if ref.Credentials == "" {
		return "the manager's own AWS credentials"
	}
	return ref.Credentials
}

// credentialsHint says what to check when credentials are refused.
func credentialsHint(ref scalegroup.Ref) string {
	if ref.Credentials == "" {
		return "check the manager's AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or its profile) and their IAM permissions for Auto Scaling and EC2"
	}
	return "check the access key in the Secret of " + ref.Credentials + " and its IAM permissions for Auto Scaling and EC2"
}
