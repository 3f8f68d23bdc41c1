package azure

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// cloudError maps an error of the Azure SDK onto scalegroup's typed errors:
//
//   - ARM 404 → NotFound;
//   - 429 → Throttled, with Retry-After;
//   - 409 OperationNotAllowed about quota → QuotaExceeded;
//   - 400 (InvalidParameter, SkuNotAvailable, PropertyChangeNotAllowed, ...)
//     and other 4xx → Invalid, with ARM's code and message;
//   - 401, 403 and Entra ID refusing the credentials → Unauthorized, saying
//     which identity to check;
//   - other 409s (an operation in progress), 408, 5xx and network errors →
//     Transient, with Retry-After when given.
//
// Messages hold ARM's and Entra's codes and messages, which never echo
// custom data or secrets. Errors already classified, and the context's,
// are returned as they are.
// CloudError maps an error of the Azure SDK onto scalegroup's typed errors
// (ARM's and Entra ID's), for the AKS provider.
func CloudError(err error, ref scalegroup.Ref) error { return cloudError(err, ref) }

func cloudError(err error, ref scalegroup.Ref) error {
	if err == nil || scalegroup.ReasonOf(err) != "" || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var af *azidentity.AuthenticationFailedError
	if errors.As(err, &af) {
		return entraError(af, ref)
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return armError(re, ref)
	}
	return scalegroup.NewTransient("request to Azure failed", err)
}

// armError maps an ARM error response.
func armError(re *azcore.ResponseError, ref scalegroup.Ref) error {
	code, msg := ErrorBody(re)
	text := code
	if msg != "" {
		text += ": " + msg
	}
	resp := re.RawResponse
	status := re.StatusCode
	switch {
	case status == http.StatusNotFound:
		return &scalegroup.Error{Reason: scalegroup.ReasonNotFound, Message: text}
	case status == http.StatusTooManyRequests:
		return scalegroup.NewThrottled(text, retryAfter(resp))
	case status == http.StatusUnauthorized:
		return scalegroup.NewUnauthorized(fmt.Sprintf("Azure Resource Manager refused the token of %s: %s; %s", credentialsName(ref), text, credentialsHint(ref)), nil)
	case status == http.StatusForbidden:
		return scalegroup.NewUnauthorized(fmt.Sprintf("%s may not manage scale sets in %s: %s; give its service principal a role on the resource group (Contributor, or Virtual Machine Contributor)", credentialsName(ref), ref.Scope, text), nil)
	case status == http.StatusConflict && strings.EqualFold(code, "OperationNotAllowed") && strings.Contains(strings.ToLower(msg), "quota"):
		return scalegroup.NewQuotaExceeded(text + " (request a quota increase, use another VM size or region, or lower the replicas)")
	case status == http.StatusConflict && strings.EqualFold(code, "MissingSubscriptionRegistration"):
		return scalegroup.NewInvalid(text + " (register the resource provider Microsoft.Compute in the subscription)")
	case status == http.StatusConflict, status == http.StatusRequestTimeout, status >= 500:
		return &scalegroup.Error{Reason: scalegroup.ReasonTransient, Message: text, RetryAfter: retryAfter(resp)}
	case strings.EqualFold(code, "SkuNotAvailable"):
		return scalegroup.NewInvalid(text + " Change spec.template.vmSize, or the zones (the MachinePool's failureDomains), or the location.")
	default:
		return scalegroup.NewInvalid(text)
	}
}

// ErrorBody returns ARM's error code and message (one line) of a failed
// request or long-running operation: the SDK's code, else the body's, else
// the HTTP status text.
func ErrorBody(re *azcore.ResponseError) (code, msg string) {
	code = re.ErrorCode
	if resp := re.RawResponse; resp != nil {
		if body, err := runtime.Payload(resp); err == nil {
			var e struct {
				Error struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal(body, &e) == nil {
				msg = e.Error.Message
				if code == "" {
					code = e.Error.Code
				}
			}
		}
	}
	if code == "" {
		code = http.StatusText(re.StatusCode)
	}
	return code, kit.OneLine(msg)
}

// entraError maps Microsoft Entra ID refusing a token: throttling and
// server errors are retryable, anything else is the credentials' fault.
func entraError(af *azidentity.AuthenticationFailedError, ref scalegroup.Ref) error {
	resp := af.RawResponse
	if resp == nil {
		// No answer from Entra ID: it could not be reached.
		return scalegroup.NewTransient("requesting a token from Microsoft Entra ID for "+credentialsName(ref), af)
	}
	tenant := ""
	if resp.Request != nil {
		tenant, _, _ = strings.Cut(strings.TrimPrefix(resp.Request.URL.Path, "/"), "/")
	}
	desc := ""
	if body, err := runtime.Payload(resp); err == nil {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if json.Unmarshal(body, &e) == nil {
			desc = e.Error
			if d := kit.OneLine(e.Description); d != "" {
				// Entra appends trace and correlation IDs: keep the reason.
				d, _, _ = strings.Cut(d, " Trace ID:")
				desc += ": " + d
			}
		}
	}
	if desc == "" {
		desc = resp.Status
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		return scalegroup.NewThrottled("Microsoft Entra ID: "+desc, retryAfter(resp))
	case resp.StatusCode >= 500:
		return &scalegroup.Error{Reason: scalegroup.ReasonTransient, Message: "Microsoft Entra ID: " + desc, RetryAfter: retryAfter(resp)}
	}
	return scalegroup.NewUnauthorized(fmt.Sprintf("Microsoft Entra ID refused %s (tenant %s): %s; %s", credentialsName(ref), tenant, desc, credentialsHint(ref)), nil)
}

// credentialsHint says what to check when credentials are refused.
func credentialsHint(ref scalegroup.Ref) string {
	if ref.Credentials == "" {
		return "check the manager's AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET"
	}
	return "check AzureClusterIdentity " + ref.Credentials + "'s tenantID and clientID and the client secret in its Secret"
}

// retryAfter parses the response's retry-after-ms or x-ms-retry-after-ms,
// else its Retry-After (kit.RetryAfter); zero when absent.
func retryAfter(resp *http.Response) time.Duration {
	if resp == nil {
		return 0
	}
	for _, h := range []string{"retry-after-ms", "x-ms-retry-after-ms"} {
		if ms, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get(h))); err == nil && ms > 0 {
			return time.Duration(ms) * time.Millisecond
		}
	}
	return kit.RetryAfter(resp.Header)
}
