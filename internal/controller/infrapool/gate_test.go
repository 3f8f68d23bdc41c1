package infrapool

import (
	"context"
	"errors"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// throttlingGroup answers every call with throttle (when set) and counts
// the calls that reached it.
type throttlingGroup struct {
	throttle error
	calls    int
}

func (g *throttlingGroup) Get(context.Context, scalegroup.Ref) (*scalegroup.Group, error) {
	g.calls++
	return &scalegroup.Group{}, g.throttle
}
func (g *throttlingGroup) Apply(context.Context, scalegroup.Ref, scalegroup.GroupSpec) (*scalegroup.Group, error) {
	g.calls++
	return &scalegroup.Group{}, g.throttle
}
func (g *throttlingGroup) DeleteInstances(context.Context, scalegroup.Ref, []string) error {
	g.calls++
	return g.throttle
}
func (g *throttlingGroup) Delete(context.Context, scalegroup.Ref) error {
	g.calls++
	return g.throttle
}
func (g *throttlingGroup) ReplaceInstances(context.Context, scalegroup.Ref, []string) error {
	g.calls++
	return g.throttle
}
func (g *throttlingGroup) Capabilities() scalegroup.Capabilities { return scalegroup.Capabilities{} }

// TestGatedGroupSendsNothingBeforeRetryAfter: once an answer is throttled,
// no call of any kind reaches the cloud until its Retry-After has passed
// (each fails as throttled for the rest of the wait), and calls go again
// after it; an answer without a Retry-After waits Timing.ThrottleRetry.
func TestGatedGroupSendsNothingBeforeRetryAfter(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	cloud := &throttlingGroup{throttle: scalegroup.NewThrottled("429", 2*time.Second)}
	e := &Engine{clock: clk, timing: Timing{ThrottleRetry: 5 * time.Second}}
	e.setScaleGroup(cloud)
	ctx, ref := context.Background(), scalegroup.Ref{Name: "g"}

	if err := e.sg.DeleteInstances(ctx, ref, []string{"i-1"}); err == nil {
		t.Fatal("the throttled answer was not returned")
	}
	calls := []func() error{
		func() error { _, err := e.sg.Get(ctx, ref); return err },
		func() error { _, err := e.sg.Apply(ctx, ref, scalegroup.GroupSpec{}); return err },
		func() error { return e.sg.DeleteInstances(ctx, ref, []string{"i-1"}) },
		func() error { return e.sg.Delete(ctx, ref) },
		func() error { return e.sg.ReplaceInstances(ctx, ref, []string{"i-1"}) },
	}
	cloud.throttle = nil
	clk.SetTime(t0.Add(1500 * time.Millisecond))
	for i, call := range calls {
		after, ok := scalegroup.IsThrottled(call())
		if !ok || after != 500*time.Millisecond {
			t.Errorf("call %d at 1.5s: throttled %v for %v, want throttled for the 500ms left", i, ok, after)
		}
	}
	if cloud.calls != 1 {
		t.Fatalf("%d calls reached the cloud before the Retry-After passed, want only the throttled one", cloud.calls-1)
	}
	clk.SetTime(t0.Add(2 * time.Second))
	for i, call := range calls {
		if err := call(); err != nil {
			t.Errorf("call %d once the Retry-After passed: %v", i, err)
		}
	}
	if cloud.calls != 1+len(calls) {
		t.Fatalf("%d calls reached the cloud after the Retry-After, want %d", cloud.calls-1, len(calls))
	}

	// No Retry-After: Timing.ThrottleRetry.
	cloud.throttle = scalegroup.NewThrottled("429", 0)
	_, _ = e.sg.Get(ctx, ref)
	clk.SetTime(t0.Add(2*time.Second + 4900*time.Millisecond))
	if _, ok := scalegroup.IsThrottled(e.sg.Delete(ctx, ref)); !ok || cloud.calls != 2+len(calls) {
		t.Fatalf("a call 4.9s after a throttled answer without Retry-After reached the cloud (ThrottleRetry 5s)")
	}
}

// TestGatedGroupWithoutReplacer: a group that cannot replace chosen
// instances says so, whatever the gate.
func TestGatedGroupWithoutReplacer(t *testing.T) {
	e := &Engine{clock: clocktesting.NewFakePassiveClock(time.Now())}
	e.setScaleGroup(&cloudGroup{})
	if err := e.sg.ReplaceInstances(context.Background(), scalegroup.Ref{}, []string{"i-1"}); !errors.Is(err, errCannotReplace) {
		t.Fatalf("ReplaceInstances on a group that is no Replacer: %v", err)
	}
}
