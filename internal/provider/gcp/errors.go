package gcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"

	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// cloudError maps an error of the Compute Engine client onto scalegroup's
// typed errors, by the googleapi error's status and reason:
//
//   - rateLimitExceeded, userRateLimitExceeded (403 or 429) and other 429s,
//     the token endpoint's too → Throttled, with the response's Retry-After;
//   - quotaExceeded (403) → QuotaExceeded, with the quota Compute Engine
//     names;
//   - 401 and other 403s, and the token endpoint's refusals of the key
//     (invalid_grant) → Unauthorized, naming the credentials to check;
//   - 400 (invalid, required, resourceNotReady excepted) → Invalid, with
//     Compute Engine's message (and, for a machine type a zone does not
//     offer, the fields to change);
//   - resourceNotReady, resourceInUseByAnotherResource, 409, 5xx and
//     network failures → Transient.
//
// Compute Engine's messages never echo metadata values (the user-data).
// Errors already classified, and the context's, are returned as they are.
func cloudError(err error, ref scalegroup.Ref) error {
	if err == nil || scalegroup.ReasonOf(err) != "" || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		code, desc := tokenError(re)
		switch {
		case re.Response != nil && re.Response.StatusCode == http.StatusTooManyRequests:
			return scalegroup.NewThrottled(strings.TrimSpace("the token endpoint throttled: "+code+" "+kit.OneLine(desc)), kit.RetryAfter(re.Response.Header))
		case re.Response != nil && re.Response.StatusCode >= 500:
			return scalegroup.NewTransient("the token endpoint failed", err)
		}
		return scalegroup.NewUnauthorized(fmt.Sprintf("Google refused %s: %s %s; check the service account key (is it deleted or disabled?)",
			credentialsName(ref), code, kit.OneLine(desc)), nil)
	}
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		return scalegroup.NewTransient("request to Compute Engine failed", err)
	}
	reason := ""
	if len(ge.Errors) > 0 {
		reason = ge.Errors[0].Reason
	}
	msg := kit.OneLine(ge.Message)
	text := fmt.Sprintf("%d %s: %s", ge.Code, reason, msg)
	switch {
	case reason == "rateLimitExceeded" || reason == "userRateLimitExceeded" || ge.Code == http.StatusTooManyRequests:
		return scalegroup.NewThrottled(text, kit.RetryAfter(ge.Header))
	case reason == "quotaExceeded":
		return scalegroup.NewQuotaExceeded(msg + ": raise the project's quota, or lower the pool's replicas or machine type")
	case ge.Code == http.StatusUnauthorized || ge.Code == http.StatusForbidden:
		return scalegroup.NewUnauthorized(fmt.Sprintf("Compute Engine refused %s: %s", credentialsName(ref), text), nil)
	case reason == "resourceNotReady" || reason == "resourceInUseByAnotherResource" || ge.Code == http.StatusConflict || ge.Code >= 500:
		return scalegroup.NewTransient(text, err)
	case ge.Code == http.StatusNotFound:
		return scalegroup.NewInvalid(msg)
	case strings.Contains(msg, "Machine type with name"):
		return scalegroup.NewInvalid(msg + " Change spec.instanceType to a machine type every zone of the pool offers, or spec.zones to zones that offer it.")
	case ge.Code >= 400:
		return scalegroup.NewInvalid(msg)
	}
	return scalegroup.NewTransient(text, err)
}

// isNotFound reports whether err is Compute Engine's 404.
func isNotFound(err error) bool {
	var ge *googleapi.Error
	return errors.As(err, &ge) && ge.Code == http.StatusNotFound
}

// isAlreadyExists reports whether err is Compute Engine's 409 alreadyExists.
func isAlreadyExists(err error) bool {
	var ge *googleapi.Error
	return errors.As(err, &ge) && ge.Code == http.StatusConflict
}

// credentialsName names the credentials of ref in messages.
func credentialsName(ref scalegroup.Ref) string {
	if ref.Credentials == "" {
		return "the manager's own GCP credentials"
	}
	return "the service account key of Secret " + ref.Credentials + " (the GCPCluster's credentialsRef)"
}

// tokenError is the OAuth 2 error code and description of the token
// endpoint's refusal: the JWT flow leaves them unparsed in the body.
func tokenError(re *oauth2.RetrieveError) (code, desc string) {
	if re.ErrorCode != "" {
		return re.ErrorCode, re.ErrorDescription
	}
	var body struct {
		Error            string `json:"error"`
		ErrorDescription string `json:"error_description"`
	}
	if json.Unmarshal(re.Body, &body) != nil || body.Error == "" {
		return "", strings.TrimSpace(string(re.Body))
	}
	return body.Error, body.ErrorDescription
}
