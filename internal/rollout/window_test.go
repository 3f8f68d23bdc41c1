package rollout

import (
	"slices"
	"testing"
)

func quarantined(i *Instance) { i.Quarantined = true }

// TestHoldStale: outside a maintenance window no stale instance is
// replaced and no surge is added for them, while what is not a voluntary
// disruption goes on.
func TestHoldStale(t *testing.T) {
	const why = "outside the maintenance window until 2030-01-03T02:00:00Z"
	tests := []struct {
		name       string
		desired    int32
		instances  []Instance
		wantDelete []Victim
		wantCap    int32
	}{{
		name:      "a pending rollout waits at the pool's size",
		desired:   3,
		instances: group("old", 3, stale),
		wantCap:   3,
	}, {
		name:      "the surge of an interrupted replacement stays",
		desired:   3,
		instances: concat(group("old", 3, stale), group("new", 1)),
		wantCap:   4,
	}, {
		name:       "an instance being removed still goes, and nothing replaces it beyond desired",
		desired:    3,
		instances:  concat(group("old", 2, stale), []Instance{inst("gone", 2000, stale, deleting)}, group("new", 1)),
		wantDelete: []Victim{{ID: "gone", Reason: ReasonDeleting}},
		wantCap:    3,
	}, {
		name:       "failed, marked and unhealthy instances still go",
		desired:    3,
		instances:  []Instance{inst("a", 30, stale, failed), inst("b", 20, stale, marked), inst("c", 10, stale, unhealthy), inst("d", 5, stale)},
		wantDelete: []Victim{{ID: "a", Reason: ReasonFailed}, {ID: "c", Reason: ReasonRemediate}},
		wantCap:    4, // maxUnavailable 1 holds b back; b and d kept, two new ones
	}, {
		name:      "a quarantined instance is not held or counted",
		desired:   2,
		instances: concat(group("old", 2, stale), []Instance{inst("q", 2000, stale, quarantined)}),
		wantCap:   2,
	}, {
		name:      "a scale-up creates new instances",
		desired:   5,
		instances: group("old", 3, stale),
		wantCap:   5,
	}, {
		name:       "a scale-down asked by the user still removes instances",
		desired:    2,
		instances:  concat(group("old", 3, stale), []Instance{inst("new", 5)}),
		wantDelete: []Victim{{ID: "old-0", Reason: ReasonExcess}},
		wantCap:    3,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := strategy("1", "1")
			res, err := Plan(Input{Desired: tt.desired, Strategy: s, ModelHash: current, Instances: tt.instances, Now: t0, HoldStale: why})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Delete, tt.wantDelete) {
				t.Errorf("Delete = %v, want %v", res.Delete, tt.wantDelete)
			}
			if res.TargetCapacity != tt.wantCap {
				t.Errorf("TargetCapacity = %d, want %d", res.TargetCapacity, tt.wantCap)
			}
			if res.Done {
				t.Errorf("Done with stale instances held")
			}
			if len(res.Waiting) == 0 || res.Waiting[0].Reason != WaitWindow {
				t.Fatalf("Waiting = %v, want %s first", res.Waiting, WaitWindow)
			}
			for _, v := range res.Delete {
				if v.Reason == ReasonStale {
					t.Errorf("stale victim %s outside the window", v.ID)
				}
			}
		})
	}
}

// TestHoldStaleLifted: the same group without HoldStale replaces.
func TestHoldStaleLifted(t *testing.T) {
	res, err := Plan(Input{Desired: 3, Strategy: strategy("1", "0"), ModelHash: current, Instances: group("old", 3, stale), Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if res.TargetCapacity != 4 {
		t.Errorf("TargetCapacity = %d, want 4 (a surge instance)", res.TargetCapacity)
	}
}

// TestQuarantinedLeftOut: a quarantined instance is neither counted nor
// replaced nor deleted, so the rollout completes without it; marked, it
// is removed like any marked instance.
func TestQuarantinedLeftOut(t *testing.T) {
	in := Input{Desired: 3, Strategy: strategy("1", "0"), ModelHash: current, Now: t0,
		Instances: concat(group("new", 3), []Instance{inst("q", 2000, stale, quarantined)})}
	res, err := Plan(in)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Done || len(res.Delete) != 0 || res.TargetCapacity != 3 {
		t.Errorf("Done %v, Delete %v, TargetCapacity %d: want done, nothing deleted, 3", res.Done, res.Delete, res.TargetCapacity)
	}
	if c := res.Counts; c.Replicas != 3 || c.Stale != 0 || c.Quarantined != 1 {
		t.Errorf("Counts = %+v, want 3 replicas, 0 stale, 1 quarantined", c)
	}
	in.Instances[3].MarkedForDeletion = true
	res, err = Plan(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Victim{{ID: "q", Reason: ReasonMarked}}; !slices.Equal(res.Delete, want) {
		t.Errorf("marked quarantined: Delete = %v, want %v", res.Delete, want)
	}
}
