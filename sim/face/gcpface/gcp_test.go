package gcpface

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/server"
	"github.com/mpool-dev/mpool/sim/server/servertest"
)

// TestSuffixesAreDistinct: instance name suffixes do not repeat within
// 36^4 consecutive instances, and start with a letter.
func TestSuffixesAreDistinct(t *testing.T) {
	seen := map[string]bool{}
	for seq := range uint64(200000) {
		s := suffix(seq)
		if seen[s] || s[0] < 'a' || s[0] > 'z' {
			t.Fatalf("suffix %q of %d repeats or starts with a digit", s, seq)
		}
		seen[s] = true
	}
}

// TestTokenEndpoint: the default key's JWT bearer grant, as Google's
// library sends it, gets a token the compute API accepts; a key the face
// does not know (a deleted one) is invalid_grant; no token is 401 authError.
func TestTokenEndpoint(t *testing.T) {
	srv := servertest.Start(t, core.Options{}, &GCPFace{})
	pool, err := server.CertPool(srv.CA())
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	u := srv.FaceURL(GCPFaceName)
	list := u + "/compute/v1/projects/mpool-sim/zones/us-central1-a/machineTypes"

	res, err := hc.Get(list)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Error struct {
			Code   int `json:"code"`
			Errors []struct {
				Reason string `json:"reason"`
			} `json:"errors"`
		} `json:"error"`
	}
	_ = json.NewDecoder(res.Body).Decode(&body)
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized || len(body.Error.Errors) == 0 || body.Error.Errors[0].Reason != "authError" {
		t.Fatalf("no token: %d %+v, want 401 authError", res.StatusCode, body)
	}

	conf, err := google.JWTConfigFromJSON(GCPDefaultKey(u), "https://www.googleapis.com/auth/cloud-platform")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := conf.TokenSource(contextWith(hc)).Token()
	if err != nil {
		t.Fatalf("the default key's grant: %v", err)
	}
	req, _ := http.NewRequest(http.MethodGet, list, nil)
	tok.SetAuthHeader(req)
	if res, err = hc.Do(req); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("listing machine types with the token: %s", res.Status)
	}
	res.Body.Close()

	if err := GCPDeleteKey(srv.Cloud(), GCPDefaultKeyID); err != nil {
		t.Fatal(err)
	}
	_, err = conf.TokenSource(contextWith(hc)).Token()
	if err == nil || !strings.Contains(err.Error(), "invalid_grant") {
		t.Fatalf("a deleted key's grant: %v, want invalid_grant", err)
	}
	res, err = hc.PostForm(u+"/token", url.Values{"grant_type": {"client_credentials"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusBadRequest {
		t.Fatalf("another grant: %s, want 400", res.Status)
	}
	res.Body.Close()
}

// contextWith is a context whose OAuth 2 requests go through hc.
func contextWith(hc *http.Client) context.Context {
	return context.WithValue(context.Background(), oauth2.HTTPClient, hc)
}
