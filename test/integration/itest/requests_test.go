package itest

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestRequestCounterTellsListFromGet(t *testing.T) {
	for _, tc := range []struct {
		method, url, want string
	}{
		{http.MethodGet, "/api/v1/namespaces/kube-system/secrets?labelSelector=a%3Db", "LIST secrets"},
		{http.MethodGet, "/api/v1/namespaces/kube-system/secrets/bootstrap-token-abcdef", "GET secrets"},
		{http.MethodGet, "/api/v1/nodes?watch=true", "WATCH nodes"},
		{http.MethodGet, "/api/v1/nodes", "LIST nodes"},
		{http.MethodGet, "/api/v1/namespaces/ns", "GET namespaces"},
		{http.MethodGet, "/api/v1/namespaces", "LIST namespaces"},
		{http.MethodPatch, "/apis/cluster.x-k8s.io/v1beta2/namespaces/ns/machinepools/p/status", "PATCH machinepools/status"},
		{http.MethodPost, "/apis/events.k8s.io/v1/namespaces/ns/events", "POST events"},
		{http.MethodGet, "/version", "GET /version"},
	} {
		c := NewRequestCounter()
		rt := c.Wrap("m")(roundTripFunc(func(*http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
		}))
		if _, err := rt.RoundTrip(httptest.NewRequest(tc.method, tc.url, nil)); err != nil {
			t.Fatal(err)
		}
		if got := c.Counts()["m "+tc.want]; got != 1 {
			t.Errorf("%s %s: counted as %v, want %q", tc.method, tc.url, c.Counts(), tc.want)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
