package kit

import (
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	date := "Wed, 21 Oct 2026 07:28:00 GMT"
	for _, tc := range []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{name: "absent: the engine's backoff applies", header: http.Header{}, want: 0},
		{name: "delay-seconds", header: http.Header{"Retry-After": {" 7 "}}, want: 7 * time.Second},
		{name: "negative seconds are no wait", header: http.Header{"Retry-After": {"-3"}}, want: 0},
		{name: "a date is relative to the response's Date, the cloud's clock", header: http.Header{"Retry-After": {"Wed, 21 Oct 2026 07:28:30 GMT"}, "Date": {date}}, want: 30 * time.Second},
		{name: "a date in the past is no wait", header: http.Header{"Retry-After": {"Wed, 21 Oct 2026 07:27:00 GMT"}, "Date": {date}}, want: 0},
		{name: "a date without Date cannot be placed", header: http.Header{"Retry-After": {date}}, want: 0},
		{name: "garbage", header: http.Header{"Retry-After": {"soon"}}, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RetryAfter(tc.header); got != tc.want {
				t.Errorf("RetryAfter(%v) = %v, want %v", tc.header, got, tc.want)
			}
		})
	}
}

func TestClientCacheBuildsOncePerComparableKey(t *testing.T) {
	type key struct {
		region string
		creds  any
	}
	var c ClientCache[key, int]
	builds := 0
	build := func() (int, error) { builds++; return builds, nil }
	shared := &struct{ id string }{"a"}
	for range 3 {
		if v, _ := c.Get(key{"r1", shared}, build); v != 1 {
			t.Fatalf("got clients %d, want the first ones", v)
		}
	}
	// Credentials of a type that cannot be compared are never cached.
	for range 2 {
		_, _ = c.Get(key{"r1", []string{"x"}}, build)
	}
	if builds != 3 {
		t.Errorf("built %d times, want 3 (once for the pointer, twice for the slice)", builds)
	}
	if _, err := c.Get(key{"r2", shared}, func() (int, error) { return 0, errors.New("boom") }); err == nil {
		t.Error("a failed build returned no error")
	}
	if v, _ := c.Get(key{"r2", shared}, build); v != 4 {
		t.Errorf("a failed build was cached: got %d", v)
	}
}

func TestCredentialCacheRebuildsOnNewVersion(t *testing.T) {
	var c CredentialCache[string]
	builds := 0
	build := func() (string, error) { builds++; return "cred", nil }
	for _, v := range []string{"1/1", "1/1", "1/2", "1/2", "2/2"} {
		if _, err := c.Get("ns/id", v, build); err != nil {
			t.Fatal(err)
		}
	}
	if builds != 3 {
		t.Errorf("built %d times, want 3 (one per identity/Secret version)", builds)
	}
}
