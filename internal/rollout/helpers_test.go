package rollout

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// t0 is "now" in the table tests.
var t0 = time.Date(2030, 1, 2, 12, 0, 0, 0, time.UTC)

// Model hashes used by the table tests: the pool is on current.
const (
	current  = "model-2"
	previous = "model-1"
)

// instOpt changes one field of a test instance.
type instOpt func(*Instance)

// inst builds a live, up-to-date instance, Ready for an hour and created
// ageMinutes ago (the age drives the Oldest and Newest policies).
func inst(id string, ageMinutes int, opts ...instOpt) Instance {
	i := Instance{
		ID:         id,
		Zone:       "zone-1",
		CreatedAt:  t0.Add(-time.Duration(ageMinutes) * time.Minute),
		ModelHash:  current,
		ReadySince: ptr.To(t0.Add(-time.Hour)),
		State:      StateRunning,
	}
	for _, o := range opts {
		o(&i)
	}
	return i
}

func stale(i *Instance)     { i.ModelHash = previous }
func marked(i *Instance)    { i.MarkedForDeletion = true }
func unhealthy(i *Instance) { i.Remediate = true }
func notReady(i *Instance)  { i.ReadySince = nil }
func booting(i *Instance)   { i.State, i.ReadySince = StatePending, nil }
func failed(i *Instance)    { i.State = StateFailed }
func deleting(i *Instance)  { i.State = StateDeleting }

// readyFor makes the instance Ready for d at t0.
func readyFor(d time.Duration) instOpt {
	return func(i *Instance) { i.ReadySince = ptr.To(t0.Add(-d)) }
}

// group builds n instances named prefix-0.. with prefix-0 the oldest.
func group(prefix string, n int, opts ...instOpt) []Instance {
	out := make([]Instance, 0, n)
	for k := range n {
		out = append(out, inst(fmt.Sprintf("%s-%d", prefix, k), 1000-k, opts...))
	}
	return out
}

// strategy builds a Strategy from budget strings; "" leaves a budget unset.
func strategy(surge, unavailable string) Strategy {
	var s Strategy
	if surge != "" {
		s.MaxSurge = ptr.To(intstr.Parse(surge))
	}
	if unavailable != "" {
		s.MaxUnavailable = ptr.To(intstr.Parse(unavailable))
	}
	return s
}

// concat joins instance lists.
func concat(lists ...[]Instance) []Instance {
	var out []Instance
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// victims renders a result's deletions as "id/Reason" for compact comparison.
func victims(vs []Victim) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.ID+"/"+string(v.Reason))
	}
	return out
}

// waitReasons lists the reasons of a result's waits.
func waitReasons(ws []Wait) []WaitReason {
	out := make([]WaitReason, 0, len(ws))
	for _, w := range ws {
		out = append(out, w.Reason)
	}
	return out
}

// isAvailable applies the planner's availability rule independently.
func isAvailable(i *Instance, now time.Time, minReadySeconds int32) bool {
	if i.State == StateFailed || i.State == StateDeleting || i.ReadySince == nil {
		return false
	}
	return !now.Before(i.ReadySince.Add(time.Duration(minReadySeconds) * time.Second))
}

// checkInvariants returns every rule a valid Result for in breaks. The fuzz and
// simulation tests share it.
func checkInvariants(in Input, res Result) []string {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }

	surge, unavailable, err := ResolveBudgets(in.Desired, in.Strategy)
	if err != nil {
		return []string{fmt.Sprintf("Plan succeeded but ResolveBudgets fails: %v", err)}
	}
	if res.MaxSurge != surge || res.MaxUnavailable != unavailable {
		fail("budgets %d/%d, want %d/%d", res.MaxSurge, res.MaxUnavailable, surge, unavailable)
	}
	byID := make(map[string]*Instance, len(in.Instances))
	for k := range in.Instances {
		byID[in.Instances[k].ID] = &in.Instances[k]
	}

	isOld := func(i *Instance) bool {
		return i.MarkedForDeletion || i.Remediate || (i.ModelHash != in.ModelHash && !in.SkipModelReconciliation)
	}
	var live, liveVictims, availableBefore, availableDeleted, old, freshDeleted int64
	for k := range in.Instances {
		i := &in.Instances[k]
		if i.State == StateFailed || i.State == StateDeleting {
			continue
		}
		live++
		if isAvailable(i, in.Now, in.Strategy.MinReadySeconds) {
			availableBefore++
		}
		if isOld(i) {
			old++
		}
	}
	seen := map[string]bool{}
	for _, v := range res.Delete {
		i, ok := byID[v.ID]
		if !ok {
			fail("victim %s does not exist", v.ID)
			continue
		}
		if seen[v.ID] {
			fail("victim %s listed twice", v.ID)
		}
		seen[v.ID] = true
		if i.State != StateFailed && i.State != StateDeleting {
			liveVictims++
			if !isOld(i) {
				freshDeleted++
			}
			if isAvailable(i, in.Now, in.Strategy.MinReadySeconds) {
				availableDeleted++
			}
		}
		if v.Reason == ReasonStale && in.SkipModelReconciliation {
			fail("victim %s deleted as stale with SkipModelReconciliation", v.ID)
		}
	}
	if in.Paused {
		if len(res.Delete) > 0 {
			fail("paused but deletes %v", victims(res.Delete))
		}
		if int64(res.TargetCapacity) != live {
			fail("paused but target capacity %d != %d live", res.TargetCapacity, live)
		}
		return errs
	}
	for k := range in.Instances {
		if i := &in.Instances[k]; (i.State == StateFailed || i.State == StateDeleting) && !seen[i.ID] {
			fail("%s instance %s not deleted", i.State, i.ID)
		}
	}
	target := int64(res.TargetCapacity)
	if limit := int64(in.Desired) + int64(surge); target > limit {
		fail("target capacity %d > desired %d + maxSurge %d", target, in.Desired, surge)
	}
	if old == 0 && target > int64(in.Desired) {
		fail("target capacity %d > desired %d with nothing to replace", target, in.Desired)
	}
	kept := live - liveVictims
	if target < kept {
		fail("target capacity %d < %d kept instances: the cloud would pick victims", target, kept)
	}
	if freshKept := live - old - freshDeleted; target-kept > max(0, int64(in.Desired)-freshKept) {
		fail("creates %d instances but only %d are needed to reach desired %d", target-kept, int64(in.Desired)-freshKept, in.Desired)
	}
	if minAvail := int64(in.Desired) - int64(unavailable); availableDeleted > 0 && availableBefore-availableDeleted < minAvail {
		fail("deletes %d available of %d: leaves %d available < desired %d - maxUnavailable %d",
			availableDeleted, availableBefore, availableBefore-availableDeleted, in.Desired, unavailable)
	}
	if res.Done && (len(res.Delete) > 0 || target != int64(in.Desired)) {
		fail("done but deletes %v, target %d", victims(res.Delete), target)
	}
	// Liveness: a plan that is not done must act, or wait for something that
	// time alone brings (an instance booting or reaching minReadySeconds).
	if !res.Done && len(res.Delete) == 0 && target == kept && availableBefore == live {
		fail("stalled: not done, no deletion, no creation, nothing to wait for")
	}
	return errs
}
