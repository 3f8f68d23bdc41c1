package scalegroup

import (
	"errors"
	"fmt"
	"testing"
	"time"
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

func TestPending(t *testing.T) {
	var g *Group
	if g.Pending() || !(&Group{Operation: &Operation{}}).Pending() || (&Group{}).Pending() {
		t.Fatalf("Pending is wrong")
	}
}
