package scalegroup

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestResultLabel(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{name: "success", err: nil, want: ResultSuccess},
		{name: "not found", err: NewNotFound("g"), want: "not_found"},
		{name: "throttled, wrapped: the label survives wrapping", err: fmt.Errorf("applying g: %w", NewThrottled("slow down", time.Second)), want: "throttled"},
		{name: "quota", err: NewQuotaExceeded("no cores"), want: "quota_exceeded"},
		{name: "transient", err: NewTransient("503", nil), want: "transient"},
		{name: "invalid", err: NewInvalid("bad zone"), want: "invalid"},
		{name: "unclassified", err: errors.New("plain"), want: ResultError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resultLabel(tt.err); got != tt.want {
				t.Fatalf("resultLabel(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}

// TestRetryAfterHistogram checks that the waits a cloud asks for are
// observed by operation and result, and that calls without one are not.
func TestRetryAfterHistogram(t *testing.T) {
	ctx := context.Background()
	throttled := WithMetrics(stub{err: fmt.Errorf("reading g: %w", NewThrottled("slow down", 3*time.Second))}, "test-throttled")
	busy := WithMetrics(stub{err: &Error{Reason: ReasonTransient, Message: "busy", RetryAfter: 1500 * time.Millisecond}}, "test-throttled")
	bare := WithMetrics(stub{err: NewThrottled("no header", 0)}, "test-throttled")
	_, _ = throttled.Get(ctx, "g")
	_, _ = throttled.Get(ctx, "g")
	_, _ = busy.Apply(ctx, "g", GroupSpec{})
	_, _ = bare.Get(ctx, "g")

	want := `
# HELP mpool_scalegroup_retry_after_seconds Waits the cloud asked for before a retry (Retry-After of throttled or busy ScaleGroup calls), by provider, operation and result.
# TYPE mpool_scalegroup_retry_after_seconds histogram
` + histogram(`operation="Apply",provider="test-throttled",result="transient"`, 1.5, 1) +
		histogram(`operation="Get",provider="test-throttled",result="throttled"`, 3, 2)
	if err := testutil.CollectAndCompare(RetryAfterSeconds, strings.NewReader(want), "mpool_scalegroup_retry_after_seconds"); err != nil {
		t.Fatal(err)
	}
	// Throttled calls are counted whether or not the cloud said how long to
	// wait.
	if got := testutil.ToFloat64(RequestsTotal.WithLabelValues("test-throttled", OpGet, "throttled")); got != 3 {
		t.Fatalf("throttled Get calls = %v, want 3", got)
	}
	if problems, err := testutil.CollectAndLint(RetryAfterSeconds); err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %v", problems, err)
	}
}

// histogram renders the text exposition of one series of RetryAfterSeconds
// holding n observations of v seconds each; labels must be sorted by name,
// as testutil compares them.
func histogram(labels string, v float64, n int) string {
	var b strings.Builder
	for _, le := range []float64{0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256} {
		c := 0
		if v <= le {
			c = n
		}
		fmt.Fprintf(&b, "mpool_scalegroup_retry_after_seconds_bucket{%s,le=\"%g\"} %d\n", labels, le, c)
	}
	fmt.Fprintf(&b, "mpool_scalegroup_retry_after_seconds_bucket{%s,le=\"+Inf\"} %d\n", labels, n)
	fmt.Fprintf(&b, "mpool_scalegroup_retry_after_seconds_sum{%s} %g\n", labels, v*float64(n))
	fmt.Fprintf(&b, "mpool_scalegroup_retry_after_seconds_count{%s} %d\n", labels, n)
	return b.String()
}
