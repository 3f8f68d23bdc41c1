// Package fake is an in-memory ScaleGroup that keeps every promise of the
// scalegroup contract: the reference the contract suite
// (internal/provider/contract/contracttest) is checked against, and a
// ScaleGroup for tests of the engine's logic that need no cloud. Instances
// are created Running at once, with IDs that are never reused; faults are
// injected with Fail.
package fake

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"k8s.io/utils/clock"

	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// ScaleGroup is an in-memory scalegroup.ScaleGroup, safe for concurrent
// use. The zero value is not usable: call New.
type ScaleGroup struct {
	clock clock.PassiveClock
	caps  scalegroup.Capabilities

	mu     sync.Mutex
	groups map[string]*group
	next   int
	// fail, when set, is returned by the next calls of the methods it
	// names ("Get", "Apply", "DeleteInstances", "Delete"), once each.
	fail map[string]error
	// calls counts the calls by method.
	calls map[string]int
}

// group is one group's state.
type group struct {
	capacity  int32
	modelHash string
	instances []scalegroup.Instance
	zones     []string
}

var _ scalegroup.ScaleGroup = (*ScaleGroup)(nil)

// New returns an empty fake cloud whose instances are created at clk's
// time, with the capabilities caps.
func New(clk clock.PassiveClock, caps scalegroup.Capabilities) *ScaleGroup {
	return &ScaleGroup{clock: clk, caps: caps, groups: map[string]*group{}, fail: map[string]error{}, calls: map[string]int{}}
}

// Fail makes the next call of method return err (a typed error from
// scalegroup's constructors, for the engine to branch on).
func (f *ScaleGroup) Fail(method string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail[method] = err
}

// Calls returns how many times method was called.
func (f *ScaleGroup) Calls(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

// call counts a call of method and returns the fault injected for it.
func (f *ScaleGroup) call(method string) error {
	f.calls[method]++
	err := f.fail[method]
	delete(f.fail, method)
	return err
}

// Get implements scalegroup.ScaleGroup.
func (f *ScaleGroup) Get(_ context.Context, ref scalegroup.Ref) (*scalegroup.Group, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Get"); err != nil {
		return nil, err
	}
	g, ok := f.groups[ref.Name]
	if !ok {
		return nil, scalegroup.NewNotFound(ref.Name)
	}
	return g.view(ref.Name), nil
}

// Apply implements scalegroup.ScaleGroup: the group reaches its capacity
// at once, new instances on the spec's model, spread over its zones; a
// capacity below the instances removes the newest.
func (f *ScaleGroup) Apply(_ context.Context, ref scalegroup.Ref, spec scalegroup.GroupSpec) (*scalegroup.Group, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Apply"); err != nil {
		return nil, err
	}
	if spec.Capacity < 0 {
		return nil, scalegroup.NewInvalid(fmt.Sprintf("capacity %d is negative", spec.Capacity))
	}
	g, ok := f.groups[ref.Name]
	if !ok {
		g = &group{}
		f.groups[ref.Name] = g
	}
	g.capacity, g.modelHash, g.zones = spec.Capacity, spec.ModelHash, slices.Clone(spec.Model.Zones)
	for int32(len(g.instances)) < g.capacity {
		f.next++
		id := fmt.Sprintf("i-%06d", f.next)
		zone := ""
		if len(g.zones) > 0 {
			zone = g.zones[f.next%len(g.zones)]
		}
		g.instances = append(g.instances, scalegroup.Instance{
			ID: id, ProviderID: "fake:///" + ref.Name + "/" + id, Zone: zone,
			State: scalegroup.StateRunning, CreatedAt: f.clock.Now(), ModelHash: spec.ModelHash,
		})
	}
	if int32(len(g.instances)) > g.capacity {
		g.instances = g.instances[:g.capacity]
	}
	return g.view(ref.Name), nil
}

// DeleteInstances implements scalegroup.ScaleGroup.
func (f *ScaleGroup) DeleteInstances(_ context.Context, ref scalegroup.Ref, ids []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("DeleteInstances"); err != nil {
		return err
	}
	g, ok := f.groups[ref.Name]
	if !ok {
		return nil
	}
	g.instances = slices.DeleteFunc(g.instances, func(in scalegroup.Instance) bool {
		if slices.Contains(ids, in.ID) {
			g.capacity--
			return true
		}
		return false
	})
	return nil
}

// Capabilities implements scalegroup.ScaleGroup.
func (f *ScaleGroup) Capabilities() scalegroup.Capabilities { return f.caps }

// Delete implements scalegroup.ScaleGroup.
func (f *ScaleGroup) Delete(_ context.Context, ref scalegroup.Ref) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.call("Delete"); err != nil {
		return err
	}
	delete(f.groups, ref.Name)
	return nil
}

// view is the group as Get returns it: a copy.
func (g *group) view(name string) *scalegroup.Group {
	return &scalegroup.Group{Name: name, Capacity: g.capacity, ModelHash: g.modelHash, Instances: slices.Clone(g.instances)}
}
