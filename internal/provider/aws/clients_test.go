package aws

import (
	"net/http"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"github.com/mpool-dev/mpool/internal/provider/kit"
)

// TestSDKRequestsAreBounded: the SDK's own client has no bound on a
// request; ours carries kit.RequestTimeout, and a client the caller gives
// is used as it is.
func TestSDKRequestsAreBounded(t *testing.T) {
	cfg, err := NewSDKConfig("us-east-1", nil)
	if err != nil {
		t.Fatal(err)
	}
	bc, ok := cfg.HTTPClient.(*awshttp.BuildableClient)
	if !ok {
		t.Fatalf("the SDK's client is a %T, want the SDK's own *BuildableClient (AWS_CA_BUNDLE applies to it)", cfg.HTTPClient)
	}
	if got := bc.GetTimeout(); got != kit.RequestTimeout {
		t.Fatalf("requests time out after %s, want %s", got, kit.RequestTimeout)
	}
	hc := &http.Client{}
	if cfg, err = NewSDKConfig("us-east-1", hc); err != nil {
		t.Fatal(err)
	}
	if cfg.HTTPClient != hc {
		t.Fatalf("the caller's client was replaced by a %T", cfg.HTTPClient)
	}
}
