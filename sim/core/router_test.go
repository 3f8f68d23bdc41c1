package core

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mpool-dev/mpool/sim/core/coretest"
)

// TestRouter: a request is served by the operation its route names, the
// wrapping and the inner handler applied; one no operation serves is the
// Unknown operation when it is the API's, else NotServed answers it,
// unwrapped.
func TestRouter(t *testing.T) {
	var wrapped []string
	env := FaceEnv{Wrap: func(op string, h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { wrapped = append(wrapped, op); h(w, r) }
	}}
	answer := func(s string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(s)) }
	}
	inner := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { w.Header().Set("X-Inner", "1"); h(w, r) }
	}
	ops := env.WrapOps(inner, map[string]http.HandlerFunc{"get": answer("got"), "unknown": answer("old")},
		map[string]http.HandlerFunc{"unknown": answer("unknown")})
	rt := &Router{Ops: ops, Unknown: "unknown",
		Route: func(r *http.Request) string {
			switch r.URL.Path {
			case "/api/thing":
				return "get"
			case "/api/gone":
				return "deleted" // a name Ops does not hold
			}
			return ""
		},
		IsAPI:     func(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/api/") },
		NotServed: func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "not served", http.StatusNotFound) },
	}
	for _, tt := range []struct {
		path, body, op string
		inner          bool
	}{
		{path: "/api/thing", body: "got", op: "get", inner: true},
		{path: "/api/other", body: "unknown", op: "unknown", inner: true},
		{path: "/api/gone", body: "unknown", op: "unknown", inner: true},
		{path: "/token/other", body: "not served\n"},
	} {
		wrapped = nil
		rec := httptest.NewRecorder()
		rt.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
		op := strings.Join(wrapped, ",")
		if rec.Body.String() != tt.body || op != tt.op || (rec.Header().Get("X-Inner") == "1") != tt.inner {
			t.Errorf("%s: body %q, operation %q, inner %q; want %q, %q, %v", tt.path, rec.Body.String(), op, rec.Header().Get("X-Inner"), tt.body, tt.op, tt.inner)
		}
	}
	// Without IsAPI every request is the API's.
	rt.IsAPI, rt.NotServed = nil, nil
	rec := httptest.NewRecorder()
	rt.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/token/other", nil))
	if rec.Body.String() != "unknown" {
		t.Errorf("without IsAPI: %q, want the unknown operation", rec.Body.String())
	}
}

func TestFaultRetryAfter(t *testing.T) {
	h := http.Header{}
	Fault{Kind: FaultServerError, Status: 503}.SetRetryAfter(h)
	if h.Get("Retry-After") != "" {
		t.Errorf("a server error set Retry-After %q", h.Get("Retry-After"))
	}
	Fault{Kind: FaultThrottle, Status: 429, RetryAfter: 2500 * time.Millisecond}.SetRetryAfter(h)
	if h.Get("Retry-After") != "2" {
		t.Errorf("throttled 2.5s: Retry-After %q, want whole seconds", h.Get("Retry-After"))
	}
}

func TestFaceEnvBaseURL(t *testing.T) {
	env := FaceEnv{BasePath: "/acme"}
	r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8790/acme/x?y=1", nil)
	if got, want := env.BaseURL(r), "http://127.0.0.1:8790/acme"; got != want {
		t.Errorf("BaseURL over plain HTTP = %q, want %q", got, want)
	}
	r = httptest.NewRequest(http.MethodGet, "https://cloud.example:443/acme/x", nil)
	if got, want := env.BaseURL(r), "https://cloud.example:443/acme"; got != want {
		t.Errorf("BaseURL over TLS = %q, want %q", got, want)
	}
}

// TestRouteTable: a route matches by method and every segment, literal
// ones exactly unless the table folds case; it sets the path values it
// names ("{name}", "{name=word}", "{name...}" for the rest), none when no
// route matches, and the first route that matches wins.
func TestRouteTable(t *testing.T) {
	routes := []Route{
		GetRoute("a/{x}/b", "ab"),
		{Path: "a/{x}", Ops: map[string]string{http.MethodGet: "get", http.MethodDelete: "delete"}},
		PostRoute("p/{where=zones}/{loc}", "zone"),
		PostRoute("p/{where=regions}/{loc}", "region"),
		GetRoute("*/w", "any"),
		GetRoute("tags/{arn...}", "tags"),
		GetRoute("a/first/b", "never"),
	}
	tests := []struct {
		fold               bool
		method, path, want string
		values             map[string]string
	}{
		{false, http.MethodGet, "/a/1/b", "ab", map[string]string{"x": "1"}},
		{false, http.MethodGet, "/A/1/b", "", map[string]string{"x": ""}},
		{true, http.MethodGet, "/A/1/B", "ab", map[string]string{"x": "1"}},
		{false, http.MethodGet, "/a/first/b", "ab", map[string]string{"x": "first"}},
		{false, http.MethodDelete, "/a/2", "delete", map[string]string{"x": "2"}},
		{false, http.MethodPut, "/a/2", "", map[string]string{"x": ""}},
		{false, http.MethodGet, "/a/2/b/c", "", nil},
		{false, http.MethodGet, "/a", "", nil},
		{false, http.MethodPost, "/p/regions/r1", "region", map[string]string{"where": "regions", "loc": "r1"}},
		{false, http.MethodPost, "/p/Regions/r1", "", map[string]string{"where": ""}},
		{true, http.MethodPost, "/p/ZONES/z1", "zone", map[string]string{"where": "ZONES", "loc": "z1"}},
		{false, http.MethodPost, "/p/global/g", "", nil},
		{false, http.MethodGet, "/anything/w", "any", nil},
		{false, http.MethodGet, "/tags/arn:x/y", "tags", map[string]string{"arn": "arn:x/y"}},
		{false, http.MethodGet, "/tags", "", nil},
	}
	for _, tt := range tests {
		coretest.CheckRoute(t, RouteTable{Routes: routes, FoldCase: tt.fold}.Route, tt.method, tt.path, tt.want, tt.values)
	}
}
