package contracttest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// ScaleGroupCase is a provider's ScaleGroup under the suite, with what the
// suite needs to drive it against its cloud (or simulated face).
type ScaleGroupCase struct {
	// ScaleGroup is the provider's ScaleGroup, reaching its cloud.
	ScaleGroup scalegroup.ScaleGroup
	// Ref places a group named name where the cloud has room for it.
	Ref func(name string) scalegroup.Ref
	// Spec is a valid spec of capacity instances on a model of hash.
	Spec func(capacity int32, hash string) scalegroup.GroupSpec
	// Advance moves the cloud along (a fake clock's step), nil when it
	// moves by itself.
	Advance func()
	// Throttle, when set, makes the cloud throttle every call until the
	// function it returns is called; the suite then expects a Throttled
	// error from Get.
	Throttle func() (restore func())
	// Timeout bounds each wait (default 30 s).
	Timeout time.Duration
}

// ScaleGroup checks the promises of the scalegroup.ScaleGroup contract
// that every cloud keeps: a group that does not exist is NotFound, and
// deleting it or its instances is no error; Apply creates the group and is
// idempotent; Get returns what Apply asked for; DeleteInstances deletes
// exactly the instances named, lowers the capacity and ignores unknown
// IDs (a cloud that runs its own rollouts may refuse it as Invalid, and is
// scaled in with Apply instead); a group whose Capabilities say
// ReplaceInstances replaces exactly the instance named, its capacity
// unchanged; Capabilities never change; Delete removes the group and may be
// repeated; a throttled call is typed Throttled.
func ScaleGroup(t *testing.T, c ScaleGroupCase) {
	t.Helper()
	ctx := context.Background()
	sg := c.ScaleGroup
	if c.Timeout == 0 {
		c.Timeout = 30 * time.Second
	}
	ref := c.Ref("contract-suite")
	eventually := func(what string, cond func() error) {
		t.Helper()
		deadline := time.Now().Add(c.Timeout)
		var err error
		for time.Now().Before(deadline) {
			if err = cond(); err == nil {
				return
			}
			if c.Advance != nil {
				c.Advance()
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("%s: not within %s: %v", what, c.Timeout, err)
	}

	caps := sg.Capabilities()
	// deleteInstances is DeleteInstances, which a cloud that runs its own
	// rollouts may refuse as Invalid for arbitrary instances (see
	// scalegroup.Capabilities.CloudRollouts): refused reports that.
	deleteInstances := func(ids ...string) (refused bool, err error) {
		err = sg.DeleteInstances(ctx, ref, ids)
		if caps.CloudRollouts && scalegroup.IsInvalid(err) {
			return true, nil
		}
		return false, err
	}
	if _, err := sg.Get(ctx, ref); !scalegroup.IsNotFound(err) {
		t.Fatalf("Get of a group that does not exist: %v, want a NotFound error", err)
	}
	if _, err := deleteInstances("no-such-instance"); err != nil {
		t.Fatalf("DeleteInstances in a group that does not exist: %v, want nil", err)
	}
	if err := sg.Delete(ctx, ref); err != nil {
		t.Fatalf("Delete of a group that does not exist: %v, want nil", err)
	}

	spec := c.Spec(2, "model-a")
	if _, err := sg.Apply(ctx, ref, spec); err != nil {
		t.Fatalf("Apply of a new group: %v", err)
	}
	var g *scalegroup.Group
	live := func() []scalegroup.Instance { return nonDeleting(g.Instances) }
	eventually("the group has its 2 instances on the applied model, at rest", func() (err error) {
		if _, err := sg.Apply(ctx, ref, spec); err != nil { // idempotent, and converges
			return fmt.Errorf("Apply again: %w", err)
		}
		if g, err = sg.Get(ctx, ref); err != nil {
			return err
		}
		if n := len(live()); n != 2 || g.Capacity != 2 || g.Pending() {
			return fmt.Errorf("%d instances, capacity %d, operation %+v", n, g.Capacity, g.Operation)
		}
		for _, in := range live() {
			if in.ID == "" || in.ModelHash != "model-a" {
				return fmt.Errorf("instance %q on model %q", in.ID, in.ModelHash)
			}
		}
		return nil
	})
	if !slices.IsSortedFunc(g.Instances, func(a, b scalegroup.Instance) int { return strings.Compare(a.ID, b.ID) }) {
		t.Errorf("Get's instances are not ordered by ID: %v", ids(g.Instances))
	}
	before := ids(live())
	if _, err := sg.Apply(ctx, ref, spec); err != nil {
		t.Fatalf("Apply of the spec the group has: %v", err)
	}
	if g, err := sg.Get(ctx, ref); err != nil || !slices.Equal(ids(nonDeleting(g.Instances)), before) {
		t.Fatalf("Apply of the same spec changed the instances: %v -> %v (%v)", before, g, err)
	}

	if caps.ReplaceInstances {
		before = replaceOne(t, ctx, c, ref, before, eventually)
	}

	refused, err := deleteInstances("no-such-instance")
	if err != nil {
		t.Fatalf("DeleteInstances of an unknown ID: %v, want nil", err)
	}
	victim, keep := before[0], before[1]
	if refused {
		// The cloud picks the instances to remove: scale in instead.
		if _, err := sg.Apply(ctx, ref, c.Spec(1, "model-a")); err != nil {
			t.Fatalf("Apply of capacity 1: %v", err)
		}
	} else {
		if _, err := deleteInstances(victim); err != nil {
			t.Fatalf("DeleteInstances(%s): %v", victim, err)
		}
		if _, err := deleteInstances(victim); err != nil {
			t.Fatalf("DeleteInstances(%s) again: %v, want nil", victim, err)
		}
	}
	eventually("the deleted instance is gone and not replaced", func() (err error) {
		if g, err = sg.Get(ctx, ref); err != nil {
			return err
		}
		got := ids(live())
		if len(got) != 1 || g.Capacity != 1 || (!refused && got[0] != keep) {
			return fmt.Errorf("instances %v, capacity %d; want one (%s unless the cloud picks), capacity 1", got, g.Capacity, keep)
		}
		return nil
	})
	if sg.Capabilities() != caps {
		t.Errorf("Capabilities changed: %+v, then %+v", caps, sg.Capabilities())
	}

	if c.Throttle != nil {
		restore := c.Throttle()
		_, err := sg.Get(ctx, ref)
		restore()
		if err == nil {
			t.Errorf("Get while the cloud throttles: no error")
		} else if _, ok := scalegroup.IsThrottled(err); !ok {
			t.Errorf("Get while the cloud throttles: %v, want a Throttled error", err)
		}
	}

	if err := sg.Delete(ctx, ref); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	eventually("the deleted group is NotFound", func() error {
		if err := sg.Delete(ctx, ref); err != nil {
			return fmt.Errorf("Delete again: %w", err)
		}
		if _, err := sg.Get(ctx, ref); !scalegroup.IsNotFound(err) {
			return fmt.Errorf("Get: %v", err)
		}
		return nil
	})
}

// replaceOne checks scalegroup.Replacer on a group at rest with the
// instances before: an unknown ID is no error; a replaced instance goes,
// twice asking is no error, and the group launches another, its capacity
// unchanged. It returns the instances after.
func replaceOne(t *testing.T, ctx context.Context, c ScaleGroupCase, ref scalegroup.Ref, before []string, eventually func(string, func() error)) []string {
	t.Helper()
	r, ok := c.ScaleGroup.(scalegroup.Replacer)
	if !ok {
		t.Fatalf("Capabilities say ReplaceInstances, but %T is no scalegroup.Replacer", c.ScaleGroup)
	}
	if err := r.ReplaceInstances(ctx, ref, []string{"no-such-instance"}); err != nil {
		t.Fatalf("ReplaceInstances of an unknown ID: %v, want nil", err)
	}
	victim := before[0]
	for range 2 {
		if err := r.ReplaceInstances(ctx, ref, []string{victim}); err != nil {
			t.Fatalf("ReplaceInstances(%s): %v", victim, err)
		}
	}
	var after []string
	eventually("the replaced instance is gone and another runs in its place, the capacity unchanged", func() error {
		g, err := c.ScaleGroup.Get(ctx, ref)
		if err != nil {
			return err
		}
		after = ids(nonDeleting(g.Instances))
		if len(after) != len(before) || g.Capacity != int32(len(before)) || slices.Contains(after, victim) || g.Pending() {
			return fmt.Errorf("instances %v, capacity %d, operation %+v; want %d without %s", after, g.Capacity, g.Operation, len(before), victim)
		}
		return nil
	})
	return after
}

// ids are the instances' IDs, in their order.
func ids(in []scalegroup.Instance) []string {
	out := make([]string, 0, len(in))
	for _, i := range in {
		out = append(out, i.ID)
	}
	return out
}

// nonDeleting drops the instances being deleted.
func nonDeleting(in []scalegroup.Instance) []scalegroup.Instance {
	return slices.DeleteFunc(slices.Clone(in), func(i scalegroup.Instance) bool { return i.State == scalegroup.StateDeleting })
}
