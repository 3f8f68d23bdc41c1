package metrics

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mpool-dev/mpool/internal/scalegroup"
)

func TestResultLabel(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{name: "success", err: nil, want: ResultSuccess},
		{name: "not found", err: scalegroup.NewNotFound("g"), want: "not_found"},
		{name: "throttled, wrapped: the label survives wrapping", err: fmt.Errorf("applying g: %w", scalegroup.NewThrottled("slow down", time.Second)), want: "throttled"},
		{name: "quota", err: scalegroup.NewQuotaExceeded("no cores"), want: "quota_exceeded"},
		{name: "transient", err: scalegroup.NewTransient("503", nil), want: "transient"},
		{name: "invalid", err: scalegroup.NewInvalid("bad zone"), want: "invalid"},
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
	throttled := WithMetrics(stub{err: fmt.Errorf("reading g: %w", scalegroup.NewThrottled("slow down", 3*time.Second))}, "test-throttled")
	busy := WithMetrics(stub{err: &scalegroup.Error{Reason: scalegroup.ReasonTransient, Message: "busy", RetryAfter: 1500 * time.Millisecond}}, "test-throttled")
	bare := WithMetrics(stub{err: scalegroup.NewThrottled("no header", 0)}, "test-throttled")
	_, _ = throttled.Get(ctx, scalegroup.Ref{Name: "g"})
	_, _ = throttled.Get(ctx, scalegroup.Ref{Name: "g"})
	_, _ = busy.Apply(ctx, scalegroup.Ref{Name: "g"}, scalegroup.GroupSpec{})
	_, _ = bare.Get(ctx, scalegroup.Ref{Name: "g"})

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

// stub answers every call with err; enough to exercise the decorator.
type stub struct{ err error }

func (s stub) Get(context.Context, scalegroup.Ref) (*scalegroup.Group, error) {
	return &scalegroup.Group{}, s.err
}
func (s stub) Apply(context.Context, scalegroup.Ref, scalegroup.GroupSpec) (*scalegroup.Group, error) {
	return &scalegroup.Group{}, s.err
}
func (s stub) DeleteInstances(context.Context, scalegroup.Ref, []string) error { return s.err }
func (s stub) Delete(context.Context, scalegroup.Ref) error                    { return s.err }
func (s stub) Capabilities() scalegroup.Capabilities {
	return scalegroup.Capabilities{CloudRollouts: true}
}

func TestWithMetrics(t *testing.T) {
	ctx := context.Background()
	ok := WithMetrics(stub{}, "test-ok")
	missing := WithMetrics(stub{err: scalegroup.NewNotFound("g")}, "test-missing")
	for range 3 {
		_, _ = ok.Get(ctx, scalegroup.Ref{Name: "g"})
	}
	_, _ = ok.Apply(ctx, scalegroup.Ref{Name: "g"}, scalegroup.GroupSpec{})
	_ = ok.DeleteInstances(ctx, scalegroup.Ref{Name: "g"}, []string{"a"})
	_ = ok.Delete(ctx, scalegroup.Ref{Name: "g"})
	_, _ = missing.Get(ctx, scalegroup.Ref{Name: "g"})

	c := ok.Counts()
	if c.Reads() != 3 || c.Writes() != 3 || c[OpGet][ResultSuccess] != 3 {
		t.Fatalf("counts = %v, want 3 reads and 3 writes", c)
	}
	if got := missing.Counts()[OpGet]["not_found"]; got != 1 {
		t.Fatalf("not_found count = %d, want 1", got)
	}
	var m dto.Metric
	if err := RequestsTotal.WithLabelValues("test-ok", OpGet, ResultSuccess).Write(&m); err != nil {
		t.Fatal(err)
	}
	if got := m.GetCounter().GetValue(); got != 3 {
		t.Fatalf("prometheus counter = %v, want 3", got)
	}
	ok.ResetCounts()
	if c := ok.Counts(); c.Reads() != 0 || c.Writes() != 0 {
		t.Fatalf("after reset: %v", c)
	}
}

// TestWithMetricsForwardsCapabilities: the engine branches on what the
// cloud does by itself; the decorator must not hide it.
func TestWithMetricsForwardsCapabilities(t *testing.T) {
	if !WithMetrics(stub{}, "test-caps").Capabilities().CloudRollouts {
		t.Fatal("the decorator hides the wrapped group's capabilities")
	}
}
