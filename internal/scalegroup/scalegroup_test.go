package scalegroup

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

func TestTypedErrorsSurviveWrapping(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		notFound  bool
		throttled bool
		retry     time.Duration
		quota     bool
		transient bool
		invalid   bool
	}{
		{name: "not found", err: NewNotFound("g"), notFound: true},
		{name: "throttled keeps its retry-after", err: NewThrottled("slow down", 3*time.Second), throttled: true, retry: 3 * time.Second},
		{name: "quota", err: NewQuotaExceeded("no cores left"), quota: true},
		{name: "transient wraps its cause", err: NewTransient("server error", errors.New("boom")), transient: true},
		{name: "invalid", err: NewInvalid("bad zone"), invalid: true},
		{name: "unclassified", err: errors.New("plain")},
		{name: "nil", err: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, err := range []error{tt.err, fmt.Errorf("getting scale group g: %w", tt.err)} {
				if tt.err == nil {
					err = nil
				}
				ra, th := IsThrottled(err)
				if IsNotFound(err) != tt.notFound || th != tt.throttled || ra != tt.retry ||
					IsQuotaExceeded(err) != tt.quota || IsTransient(err) != tt.transient || IsInvalid(err) != tt.invalid {
					t.Fatalf("%v: notFound %v throttled %v/%s quota %v transient %v invalid %v", err,
						IsNotFound(err), th, ra, IsQuotaExceeded(err), IsTransient(err), IsInvalid(err))
				}
			}
		})
	}
	cause := errors.New("boom")
	if !errors.Is(fmt.Errorf("x: %w", NewTransient("m", cause)), cause) {
		t.Fatalf("the cause of a transient error is not reachable with errors.Is")
	}
}

// stub answers every call with err; enough to exercise the decorator.
type stub struct{ err error }

func (s stub) Get(context.Context, string) (*Group, error) { return &Group{}, s.err }
func (s stub) Apply(context.Context, string, GroupSpec) (*Group, error) {
	return &Group{}, s.err
}
func (s stub) DeleteInstances(context.Context, string, []string) error { return s.err }
func (s stub) Delete(context.Context, string) error                    { return s.err }

func TestWithMetrics(t *testing.T) {
	ctx := context.Background()
	ok := WithMetrics(stub{}, "test-ok")
	missing := WithMetrics(stub{err: NewNotFound("g")}, "test-missing")
	for range 3 {
		_, _ = ok.Get(ctx, "g")
	}
	_, _ = ok.Apply(ctx, "g", GroupSpec{})
	_ = ok.DeleteInstances(ctx, "g", []string{"a"})
	_ = ok.Delete(ctx, "g")
	_, _ = missing.Get(ctx, "g")

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
	var g *Group
	if g.Pending() || (&Group{Operation: &Operation{}}).Pending() != true {
		t.Fatalf("Pending is wrong")
	}
}
