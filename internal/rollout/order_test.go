package rollout

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// deletionOrder returns the order in which Plan removes every instance when
// the pool is scaled to zero, where no budget holds anything back: it exposes
// the whole deletion order at once.
func deletionOrder(t *testing.T, policy DeletePolicy, seed int64, skip bool, instances []Instance) []string {
	t.Helper()
	res, err := Plan(Input{
		Desired:                 0,
		Strategy:                Strategy{DeletePolicy: policy},
		ModelHash:               current,
		Instances:               instances,
		SkipModelReconciliation: skip,
		Now:                     t0,
		RandSeed:                seed,
	})
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	ids := make([]string, 0, len(res.Delete))
	for _, v := range res.Delete {
		ids = append(ids, v.ID)
	}
	return ids
}

func TestDeletionOrder(t *testing.T) {
	// A pool with one instance of every kind; "old" means created earlier.
	everyKind := []Instance{
		inst("fresh-old", 90), inst("fresh-young", 10),
		inst("fresh-notready", 50, notReady),
		inst("stale-old", 80, stale), inst("stale-young", 20, stale),
		inst("stale-notready", 40, stale, booting),
		inst("marked-old", 70, marked), inst("marked-notready", 30, marked, notReady),
		inst("failed", 60, failed), inst("deleting", 5, deleting),
	}
	tests := []struct {
		name      string // and why the case exists
		policy    DeletePolicy
		skip      bool
		instances []Instance
		want      []string
	}{
		{
			name:      "the full precedence: gone, marked, stale, then excess; not-Ready first within each",
			policy:    DeletePolicyOldest,
			instances: everyKind,
			want: []string{"deleting", "failed", "marked-notready", "marked-old", "stale-notready",
				"stale-old", "stale-young", "fresh-notready", "fresh-old", "fresh-young"},
		},
		{
			name:      "Newest reverses only the policy part",
			policy:    DeletePolicyNewest,
			instances: everyKind,
			want: []string{"deleting", "failed", "marked-notready", "marked-old", "stale-notready",
				"stale-young", "stale-old", "fresh-notready", "fresh-young", "fresh-old"},
		},
		{
			name:      "with the skip gate stale instances are not preferred",
			policy:    DeletePolicyOldest,
			skip:      true,
			instances: everyKind,
			want: []string{"deleting", "failed", "marked-notready", "marked-old", "fresh-notready",
				"stale-notready", "fresh-old", "stale-old", "stale-young", "fresh-young"},
		},
		{
			name:      "an empty policy is Oldest",
			instances: []Instance{inst("b", 10), inst("a", 20)},
			want:      []string{"a", "b"},
		},
		{
			name:      "instances created at the same time are ordered by ID",
			policy:    DeletePolicyNewest,
			instances: []Instance{inst("c", 10), inst("a", 10), inst("b", 10), inst("z", 5)},
			want:      []string{"z", "a", "b", "c"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := deletionOrder(t, tt.policy, 0, tt.skip, tt.instances)
			if !slices.Equal(got, tt.want) {
				t.Errorf("order = %v\nwant    %v", got, tt.want)
			}
		})
	}
}

func TestDeletionOrderRandom(t *testing.T) {
	pool := group("i", 12)
	ids := make([]string, len(pool))
	for k := range pool {
		ids[k] = pool[k].ID
	}
	first := deletionOrder(t, DeletePolicyRandom, 42, false, pool)

	t.Run("the same seed gives the same order whatever the input order", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		for range 5 {
			shuffled := slices.Clone(pool)
			rng.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
			if got := deletionOrder(t, DeletePolicyRandom, 42, false, shuffled); !slices.Equal(got, first) {
				t.Fatalf("order %v, want %v", got, first)
			}
		}
	})
	t.Run("the order is neither creation order nor ID order", func(t *testing.T) {
		if slices.Equal(first, ids) || slices.Equal(first, slices.Sorted(slices.Values(ids))) {
			t.Errorf("Random order %v looks sorted", first)
		}
	})
	t.Run("another seed gives another order", func(t *testing.T) {
		if got := deletionOrder(t, DeletePolicyRandom, 43, false, pool); slices.Equal(got, first) {
			t.Errorf("seeds 42 and 43 give the same order %v", got)
		}
	})
	t.Run("not-Ready still goes before the random order", func(t *testing.T) {
		withBroken := append(slices.Clone(pool), inst("broken", 1, notReady))
		if got := deletionOrder(t, DeletePolicyRandom, 42, false, withBroken); got[0] != "broken" {
			t.Errorf("order %v does not start with the not-Ready instance", got)
		}
	})
}
