package rollout

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// candidate is a live instance with what the planner derived from it.
type candidate struct {
	id        string
	createdAt time.Time
	// rank orders instances under DeletePolicyRandom.
	rank   uint64
	marked bool
	// remediate is set when a MachineHealthCheck asks for the instance's
	// remediation.
	remediate bool
	ready     bool
	available bool
	// upToDate is true when the instance runs the current model.
	upToDate bool
}

// sortForDeletion orders candidates so that the first should be deleted first:
// unhealthy (to remediate) first, marked before unmarked, not Ready before Ready, then the delete policy, then
// the ID so that the order never depends on the input's order.
//
// Stale instances are not ranked here: the planner deletes them in a pass of
// their own, before it looks for excess, which is what puts them ahead of the
// delete policy.
func sortForDeletion(cs []candidate, policy DeletePolicy) {
	slices.SortFunc(cs, func(a, b candidate) int {
		return compareForDeletion(&a, &b, policy)
	})
}

func compareForDeletion(a, b *candidate, policy DeletePolicy) int {
	if a.remediate != b.remediate {
		return firstIf(a.remediate)
	}
	if a.marked != b.marked {
		return firstIf(a.marked)
	}
	if a.ready != b.ready {
		return firstIf(!a.ready)
	}
	if c := comparePolicy(a, b, policy); c != 0 {
		return c
	}
	return strings.Compare(a.id, b.id)
}

// comparePolicy orders two instances by the delete policy alone.
func comparePolicy(a, b *candidate, policy DeletePolicy) int {
	switch policy {
	case DeletePolicyNewest:
		return b.createdAt.Compare(a.createdAt)
	case DeletePolicyRandom:
		return cmp.Compare(a.rank, b.rank)
	default:
		return a.createdAt.Compare(b.createdAt)
	}
}

// firstIf returns -1 when the left-hand side should come first, 1 otherwise.
func firstIf(left bool) int {
	if left {
		return -1
	}
	return 1
}

// randomRank derives an instance's place under DeletePolicyRandom from the seed
// and its ID alone, so the order is stable across reconciles for one seed and
// independent of the order instances were listed in.
func randomRank(seed int64, id string) uint64 {
	// FNV-1a, inlined to avoid an allocation per instance.
	h := uint64(14695981039346656037)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	return splitmix64(h ^ uint64(seed))
}

// splitmix64 scrambles x so that nearby inputs give unrelated outputs.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
