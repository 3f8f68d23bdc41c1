package infrapool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// throttleGate holds every call to the cloud until the Retry-After of the
// last throttled request has passed. Clouds throttle per account rather
// than per group, so one throttled pool makes all pools of the engine wait,
// including reconciles triggered by events in the meantime.
type throttleGate struct {
	mu    sync.Mutex
	until time.Time
}

// wait returns how long callers must still wait at now.
func (g *throttleGate) wait(now time.Time) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return max(g.until.Sub(now), 0)
}

// hold makes callers wait until now + d, keeping a later deadline.
func (g *throttleGate) hold(now time.Time, d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t := now.Add(d); t.After(g.until) {
		g.until = t
	}
}

// gatedGroup is the engine's only way to the cloud: each call passes the
// throttle gate. While the gate is closed a call is not sent and fails as
// throttled for the rest of the wait; a throttled answer closes it, for
// its Retry-After (retry when it has none). No path of a pass can send
// before the cloud's Retry-After, however it handles the error — the calls
// after a throttled one in the same pass included (a throttled
// DeleteInstances went on to the group's Apply).
type gatedGroup struct {
	scalegroup.ScaleGroup
	// e is the engine whose gate, clock and Timing.ThrottleRetry apply.
	e *Engine
}

// pass returns the throttle error of a call made now while the gate is
// closed, or nil.
func (g *gatedGroup) pass() error {
	if d := g.e.throttle.wait(g.e.clock.Now()); d > 0 {
		return scalegroup.NewThrottled(fmt.Sprintf("not sent: the cloud asked to wait %s more (Retry-After of a throttled request)", d.Round(time.Millisecond)), d)
	}
	return nil
}

// answered closes the gate when err is a throttled answer.
func (g *gatedGroup) answered(err error) error {
	if after, ok := g.e.throttled(err); ok {
		g.e.throttle.hold(g.e.clock.Now(), after) // from the answer, not from the call
	}
	return err
}

// Get implements scalegroup.ScaleGroup.
func (g *gatedGroup) Get(ctx context.Context, ref scalegroup.Ref) (*scalegroup.Group, error) {
	if err := g.pass(); err != nil {
		return nil, err
	}
	grp, err := g.ScaleGroup.Get(ctx, ref)
	return grp, g.answered(err)
}

// Apply implements scalegroup.ScaleGroup.
func (g *gatedGroup) Apply(ctx context.Context, ref scalegroup.Ref, spec scalegroup.GroupSpec) (*scalegroup.Group, error) {
	if err := g.pass(); err != nil {
		return nil, err
	}
	grp, err := g.ScaleGroup.Apply(ctx, ref, spec)
	return grp, g.answered(err)
}

// DeleteInstances implements scalegroup.ScaleGroup.
func (g *gatedGroup) DeleteInstances(ctx context.Context, ref scalegroup.Ref, ids []string) error {
	if err := g.pass(); err != nil {
		return err
	}
	return g.answered(g.ScaleGroup.DeleteInstances(ctx, ref, ids))
}

// Delete implements scalegroup.ScaleGroup.
func (g *gatedGroup) Delete(ctx context.Context, ref scalegroup.Ref) error {
	if err := g.pass(); err != nil {
		return err
	}
	return g.answered(g.ScaleGroup.Delete(ctx, ref))
}

// errCannotReplace: the cloud's scale group is not a scalegroup.Replacer.
var errCannotReplace = errors.New("the scale group cannot replace chosen instances")

// ReplaceInstances implements scalegroup.Replacer for a group that does.
func (g *gatedGroup) ReplaceInstances(ctx context.Context, ref scalegroup.Ref, ids []string) error {
	r, ok := g.ScaleGroup.(scalegroup.Replacer)
	if !ok {
		return errCannotReplace
	}
	if err := g.pass(); err != nil {
		return err
	}
	return g.answered(r.ReplaceInstances(ctx, ref, ids))
}
