package gcp

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// TestTokenEndpointThrottledSaysWhy: the JWT flow leaves a refusal's
// error and description in the body (RetrieveError's fields empty); a 429
// from the token endpoint is Throttled with Retry-After and the body's
// words, as a 400 is Unauthorized with them.
func TestTokenEndpointThrottledSaysWhy(t *testing.T) {
	body := []byte(`{"error":"rate_limit_exceeded","error_description":"Too many token requests for this client"}`)
	throttled := &oauth2.RetrieveError{Response: &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"7"}}}, Body: body}
	err := cloudError(throttled, scalegroup.Ref{})
	if scalegroup.ReasonOf(err) != scalegroup.ReasonThrottled {
		t.Fatalf("a 429 from the token endpoint is %q (%v), want Throttled", scalegroup.ReasonOf(err), err)
	}
	if !strings.Contains(err.Error(), "rate_limit_exceeded Too many token requests") {
		t.Errorf("throttled message %q does not say the token endpoint's words", err)
	}
	if d := scalegroup.RetryAfter(err); d != 7*time.Second {
		t.Errorf("retry after %v, want 7s", d)
	}

	refused := &oauth2.RetrieveError{Response: &http.Response{StatusCode: http.StatusBadRequest}, Body: []byte(`{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`)}
	if err := cloudError(refused, scalegroup.Ref{}); !strings.Contains(err.Error(), "invalid_grant Invalid JWT Signature.") {
		t.Errorf("refused key: %v", err)
	}
}
