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
// startGCP starts a simulated cloud serving the GCP face, with an HTTP
// client that trusts its CA.
func startGCP(t *testing.T) (*server.Server, *http.Client) {
	srv := servertest.Start(t, core.Options{}, &GCPFace{})
	pool, err := server.CertPool(srv.CA())
	if err != nil {
		t.Fatal(err)
	}
	return srv, &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}

func TestTokenEndpoint(t *testing.T) {
	srv, hc := startGCP(t)
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

// TestRequestsNotServed: a Compute Engine path no operation serves is
// Compute Engine's 404 notFound, counted as OpGCPUnknown; any other path
// no operation serves is the token server's 404 invalid_request,
// uncounted.
func TestRequestsNotServed(t *testing.T) {
	srv, hc := startGCP(t)
	u := srv.FaceURL(GCPFaceName)
	conf, err := google.JWTConfigFromJSON(GCPDefaultKey(u), "https://www.googleapis.com/auth/cloud-platform")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := conf.TokenSource(contextWith(hc)).Token()
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string, v any) int {
		req, _ := http.NewRequest(http.MethodGet, u+path, nil)
		tok.SetAuthHeader(req)
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if err := json.NewDecoder(res.Body).Decode(v); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		return res.StatusCode
	}
	var apiErr struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Errors  []struct {
				Reason string `json:"reason"`
			} `json:"errors"`
		} `json:"error"`
	}
	if s := get("/compute/v1/projects/mpool-sim/zones/us-central1-a/routers", &apiErr); s != http.StatusNotFound || apiErr.Error.Code != 404 ||
		len(apiErr.Error.Errors) == 0 || apiErr.Error.Errors[0].Reason != "notFound" || !strings.Contains(apiErr.Error.Message, "does not serve GET /compute/v1/") {
		t.Errorf("an unknown Compute Engine path: %d %+v, want 404 notFound", s, apiErr)
	}
	var tokErr struct {
		Error            string `json:"error"`
		ErrorDescription string `json:"error_description"`
	}
	if s := get("/oauth2/v4/certs", &tokErr); s != http.StatusNotFound || tokErr.Error != "invalid_request" ||
		!strings.Contains(tokErr.ErrorDescription, "OAuth 2.0 server does not serve GET /oauth2/v4/certs") {
		t.Errorf("an unknown token server path: %d %+v, want 404 invalid_request", s, tokErr)
	}
	counted := map[string]int64{}
	for _, c := range srv.Stats().Requests {
		if c.Face == GCPFaceName {
			counted[c.Operation] += c.Count
		}
	}
	if counted[OpGCPUnknown] != 1 || len(counted) != 2 || counted[OpGCPToken] != 1 {
		t.Errorf("counted %v, want the token and one %s", counted, OpGCPUnknown)
	}
}
