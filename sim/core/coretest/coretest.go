// Package coretest is test support for the simulated cloud's faces, on
// the core's exported API: checking what a face's routes name.
package coretest

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// CheckRoute routes a request of method and path with route (a Router's
// Route: a face's route table) and fails t unless it names the operation
// want ("" for none) and sets the path values values names.
func CheckRoute(t testing.TB, route func(*http.Request) string, method, path, want string, values map[string]string) {
	t.Helper()
	r := httptest.NewRequest(method, path, nil)
	if got := route(r); got != want {
		t.Errorf("%s %s: operation %q, want %q", method, path, got, want)
	}
	for k, v := range values {
		if got := r.PathValue(k); got != v {
			t.Errorf("%s %s: path value %s = %q, want %q", method, path, k, got, v)
		}
	}
}
