package core

import (
	"maps"
	"slices"
	"time"
)

// ScaleInKey is what the scale-in policy reads of an instance.
type ScaleInKey struct {
	// Zone is the instance's zone.
	Zone string
	// Failed instances go first.
	Failed bool
	// Stale marks an instance of another model than its group's current
	// one (an older launch template version, an older release): among
	// instances of equally full zones, they go first.
	Stale bool
	// CreatedAt orders the rest: newest first.
	CreatedAt time.Time
}

// PickScaleIn is the simulated cloud's one scale-in policy, the order in
// which a scale group removes instances when its capacity drops (the local
// face's groups, an Auto Scaling group, an EKS node group): failed
// instances first, then from the zone with the most instances (balancing
// zones), there those of another model first, then the newest (on equal
// creation times the later in cands, in the first zone by name). It returns
// at most n of cands, in the order they go. perZone counts the instances of
// each zone, including any that cannot be removed (e.g. protected from
// scale in); nil counts cands. key tells what the policy reads of a
// candidate.
func PickScaleIn[T any](cands []T, n int, perZone map[string]int, key func(T) ScaleInKey) []T {
	keys := make([]ScaleInKey, len(cands))
	for i, c := range cands {
		keys[i] = key(c)
	}
	if perZone == nil {
		perZone = map[string]int{}
		for _, k := range keys {
			perZone[k.Zone]++
		}
	} else {
		perZone = maps.Clone(perZone)
	}
	idx := make([]int, len(cands))
	for i := range idx {
		idx[i] = i
	}
	var out []T
	for ; n > 0 && len(idx) > 0; n-- {
		best := 0
		for j := 1; j < len(idx); j++ {
			if scaleInBefore(keys[idx[j]], keys[idx[best]], perZone) {
				best = j
			}
		}
		k := keys[idx[best]]
		out = append(out, cands[idx[best]])
		perZone[k.Zone]--
		idx = slices.Delete(idx, best, best+1)
	}
	return out
}

// scaleInBefore reports whether a, which comes after b in the candidates,
// goes before b.
func scaleInBefore(a, b ScaleInKey, perZone map[string]int) bool {
	switch {
	case a.Failed != b.Failed:
		return a.Failed
	case perZone[a.Zone] != perZone[b.Zone]:
		return perZone[a.Zone] > perZone[b.Zone]
	case a.Stale != b.Stale:
		return a.Stale
	case !a.CreatedAt.Equal(b.CreatedAt):
		return a.CreatedAt.After(b.CreatedAt)
	case a.Zone != b.Zone:
		return a.Zone < b.Zone
	}
	return true
}
