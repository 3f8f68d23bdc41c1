package rollout

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// planCase is one table case for Plan. Unless set, the pool is on model
// current, now is t0, the strategy is the default (surge 1, unavailable 0)
// and the delete policy is Oldest.
type planCase struct {
	name      string // and why the case exists
	desired   int32
	strategy  Strategy
	skip      bool
	paused    bool
	instances []Instance
	maxRemed  *int32 // MaxRemediationsInFlight

	wantTarget  int32
	wantDelete  []string // "id/Reason", in order
	wantWaits   []WaitReason
	wantDone    bool
	wantRequeue time.Duration
}

func runPlanCases(t *testing.T, tests []planCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Input{
				Desired:                 tt.desired,
				Strategy:                tt.strategy,
				ModelHash:               current,
				Instances:               tt.instances,
				SkipModelReconciliation: tt.skip,
				Paused:                  tt.paused,
				Now:                     t0,
				MaxRemediationsInFlight: tt.maxRemed,
			}
			res, err := Plan(in)
			if err != nil {
				t.Fatalf("Plan: %v", err)
			}
			if got := victims(res.Delete); !slices.Equal(got, tt.wantDelete) && (len(got) > 0 || len(tt.wantDelete) > 0) {
				t.Errorf("delete = %v, want %v", got, tt.wantDelete)
			}
			if res.TargetCapacity != tt.wantTarget {
				t.Errorf("target capacity = %d, want %d", res.TargetCapacity, tt.wantTarget)
			}
			if got := waitReasons(res.Waiting); !slices.Equal(got, tt.wantWaits) && (len(got) > 0 || len(tt.wantWaits) > 0) {
				t.Errorf("waiting = %v, want %v (%+v)", got, tt.wantWaits, res.Waiting)
			}
			if res.Done != tt.wantDone {
				t.Errorf("done = %v, want %v", res.Done, tt.wantDone)
			}
			if res.RequeueAfter != tt.wantRequeue {
				t.Errorf("requeue after = %v, want %v", res.RequeueAfter, tt.wantRequeue)
			}
			for _, e := range checkInvariants(in, res) {
				t.Errorf("invariant: %s", e)
			}
		})
	}
}

func TestPlanScale(t *testing.T) {
	runPlanCases(t, []planCase{
		{
			name:       "a converged pool does nothing",
			desired:    3,
			instances:  group("a", 3),
			wantTarget: 3, wantDone: true,
		},
		{
			name:       "scale up from zero asks for desired, no surge",
			desired:    3,
			wantTarget: 3, wantWaits: []WaitReason{WaitAvailable},
		},
		{
			name:       "scale up counts instances still booting",
			desired:    5,
			instances:  concat(group("a", 3), group("b", 1, booting)),
			wantTarget: 5, wantWaits: []WaitReason{WaitAvailable},
		},
		{
			name:       "scale down deletes the oldest by default, even with maxUnavailable 0",
			desired:    2,
			instances:  group("a", 4),
			wantTarget: 2, wantDelete: []string{"a-0/Excess", "a-1/Excess"},
		},
		{
			name:       "scale down with Newest deletes the youngest",
			desired:    2,
			strategy:   Strategy{DeletePolicy: DeletePolicyNewest},
			instances:  group("a", 4),
			wantTarget: 2, wantDelete: []string{"a-3/Excess", "a-2/Excess"},
		},
		{
			name:       "scale down takes not-Ready instances before the policy's choice",
			desired:    1,
			instances:  []Instance{inst("old", 30), inst("mid", 20), inst("young-notready", 10, notReady)},
			wantTarget: 1, wantDelete: []string{"young-notready/Excess", "old/Excess"},
		},
		{
			name:       "scale down prefers stale instances over the policy's choice",
			desired:    2,
			instances:  []Instance{inst("old", 30), inst("mid", 20), inst("young-stale", 10, stale)},
			wantTarget: 2, wantDelete: []string{"young-stale/Stale"},
		},
		{
			name:       "scale down with the skip gate ignores staleness and follows the policy",
			desired:    2,
			skip:       true,
			instances:  []Instance{inst("old", 30), inst("mid", 20), inst("young-stale", 10, stale)},
			wantTarget: 2, wantDelete: []string{"old/Excess"},
		},
		{
			name:       "scale down during a rollout keeps the booting up-to-date instance and removes stale ones",
			desired:    3,
			strategy:   strategy("1", "1"),
			instances:  concat(group("s", 3, stale), group("n", 1, booting)),
			wantTarget: 4, wantDelete: []string{"s-0/Stale"},
			wantWaits: []WaitReason{WaitSurge, WaitBudget, WaitAvailable},
		},
		{
			name:       "scale down below desired+surge drops booting fresh instances when stale ones are held back",
			desired:    3,
			instances:  concat(group("s", 3, stale), group("n", 2, booting)),
			wantTarget: 4, wantDelete: []string{"n-0/Excess"},
			wantWaits: []WaitReason{WaitSurge, WaitBudget, WaitAvailable},
		},
		{
			name:       "an excess available instance held back does not stop a free deletion",
			desired:    3,
			strategy:   Strategy{MinReadySeconds: 60},
			instances:  concat(group("a", 2), group("young", 2, readyFor(10*time.Second))),
			wantTarget: 3, wantDelete: []string{"young-0/Excess"},
			wantWaits: []WaitReason{WaitBudget, WaitAvailable}, wantRequeue: 50 * time.Second,
		},
		{
			name:       "scale to zero deletes everything, whatever the budget",
			desired:    0,
			instances:  concat(group("a", 2), group("s", 1, stale)),
			wantTarget: 0, wantDelete: []string{"s-0/Stale", "a-0/Excess", "a-1/Excess"},
		},
		{
			name:       "an empty pool at zero is done",
			desired:    0,
			wantTarget: 0, wantDone: true,
		},
	})
}

func TestPlanRollout(t *testing.T) {
	runPlanCases(t, []planCase{
		// maxSurge 1, maxUnavailable 0: create first, delete once available.
		{
			name:       "surge 1/unavailable 0 starts by surging one",
			desired:    3,
			strategy:   strategy("1", "0"),
			instances:  group("s", 3, stale),
			wantTarget: 4, wantWaits: []WaitReason{WaitSurge, WaitBudget, WaitAvailable},
		},
		{
			name:       "surge 1/unavailable 0 waits while the surge instance boots",
			desired:    3,
			strategy:   strategy("1", "0"),
			instances:  concat(group("s", 3, stale), group("n", 1, booting)),
			wantTarget: 4, wantWaits: []WaitReason{WaitSurge, WaitBudget, WaitAvailable},
		},
		{
			name:       "surge 1/unavailable 0 deletes the oldest stale once the surge is available, and surges again",
			desired:    3,
			strategy:   strategy("1", "0"),
			instances:  concat(group("s", 3, stale), group("n", 1)),
			wantTarget: 4, wantDelete: []string{"s-0/Stale"},
			wantWaits: []WaitReason{WaitSurge, WaitBudget, WaitAvailable},
		},
		{
			name:       "surge 1/unavailable 0 last step returns to desired",
			desired:    3,
			strategy:   strategy("1", "0"),
			instances:  concat(group("s", 1, stale), group("n", 3)),
			wantTarget: 3, wantDelete: []string{"s-0/Stale"},
		},
		{
			name:       "a stale instance that is not Ready goes at once, it is not available",
			desired:    3,
			strategy:   strategy("1", "0"),
			instances:  concat(group("s", 2, stale), group("sx", 1, stale, notReady)),
			wantTarget: 4, wantDelete: []string{"sx-0/Stale"},
			wantWaits: []WaitReason{WaitSurge, WaitBudget, WaitAvailable},
		},
		// The seeds' 25%/1.
		{
			name:       "25%/1 on 4 replicas spends both budgets at once",
			desired:    4,
			strategy:   strategy("25%", "1"),
			instances:  group("s", 4, stale),
			wantTarget: 5, wantDelete: []string{"s-0/Stale"},
			wantWaits: []WaitReason{WaitSurge, WaitBudget, WaitAvailable},
		},
		{
			name:       "25%/1 on 10 replicas surges 3 (rounded up) and deletes 1",
			desired:    10,
			strategy:   strategy("25%", "1"),
			instances:  group("s", 10, stale),
			wantTarget: 13, wantDelete: []string{"s-0/Stale"},
			wantWaits: []WaitReason{WaitSurge, WaitBudget, WaitAvailable},
		},
		{
			name:       "25%/1 with replacements booting waits, one already unavailable",
			desired:    4,
			strategy:   strategy("25%", "1"),
			instances:  concat(group("s", 3, stale), group("n", 2, booting)),
			wantTarget: 5, wantWaits: []WaitReason{WaitSurge, WaitBudget, WaitAvailable},
		},
		{
			name:       "a large surge creates only as many instances as replacements need",
			desired:    3,
			strategy:   strategy("3", "0"),
			instances:  concat(group("s", 1, stale), group("n", 2)),
			wantTarget: 4, wantWaits: []WaitReason{WaitBudget, WaitAvailable},
		},
		// maxSurge 0, maxUnavailable 1: delete first, then create.
		{
			name:       "surge 0/unavailable 1 deletes before it creates",
			desired:    3,
			strategy:   strategy("0", "1"),
			instances:  group("s", 3, stale),
			wantTarget: 3, wantDelete: []string{"s-0/Stale"},
			wantWaits: []WaitReason{WaitSurge, WaitBudget, WaitAvailable},
		},
		{
			name:       "surge 0/unavailable 1 waits for the replacement before the next deletion",
			desired:    3,
			strategy:   strategy("0", "1"),
			instances:  concat(group("s", 2, stale), group("n", 1, booting)),
			wantTarget: 3, wantWaits: []WaitReason{WaitSurge, WaitBudget, WaitAvailable},
		},
		{
			name:       "failures already use the budget: no stale instance goes",
			desired:    3,
			strategy:   strategy("0", "1"),
			instances:  concat(group("s", 2, stale), group("f", 1, failed)),
			wantTarget: 3, wantDelete: []string{"f-0/Failed"},
			wantWaits: []WaitReason{WaitSurge, WaitBudget, WaitAvailable},
		},
		// minReadySeconds.
		{
			name:       "a surge instance Ready for less than minReadySeconds is not available yet; requeue",
			desired:    3,
			strategy:   Strategy{MinReadySeconds: 60},
			instances:  concat(group("s", 3, stale), group("n", 1, readyFor(20*time.Second))),
			wantTarget: 4, wantWaits: []WaitReason{WaitSurge, WaitBudget, WaitAvailable},
			wantRequeue: 40 * time.Second,
		},
		{
			name:       "a surge instance Ready for exactly minReadySeconds is available",
			desired:    3,
			strategy:   Strategy{MinReadySeconds: 60},
			instances:  concat(group("s", 3, stale), group("n", 1, readyFor(60*time.Second))),
			wantTarget: 4, wantDelete: []string{"s-0/Stale"},
			wantWaits: []WaitReason{WaitSurge, WaitBudget, WaitAvailable},
		},
		{
			name:       "requeue is the soonest of several young instances",
			desired:    2,
			strategy:   Strategy{MinReadySeconds: 30},
			instances:  concat(group("a", 1, readyFor(5*time.Second)), group("b", 1, readyFor(25*time.Second))),
			wantTarget: 2, wantWaits: []WaitReason{WaitAvailable}, wantRequeue: 5 * time.Second,
		},
	})
}

func TestPlanMarkedFailedSkipPaused(t *testing.T) {
	runPlanCases(t, []planCase{
		{
			name:       "a marked available instance waits for a replacement with maxUnavailable 0",
			desired:    3,
			instances:  []Instance{inst("a", 30), inst("b", 20, marked), inst("c", 10)},
			wantTarget: 4, wantWaits: []WaitReason{WaitBudget, WaitAvailable},
		},
		{
			name:       "a marked instance goes once its replacement is available",
			desired:    3,
			instances:  []Instance{inst("a", 30), inst("b", 20, marked), inst("c", 10), inst("d", 1)},
			wantTarget: 3, wantDelete: []string{"b/Marked"},
		},
		{
			name:       "a marked instance that is not Ready goes at once",
			desired:    3,
			instances:  []Instance{inst("a", 30), inst("b", 20, marked, notReady), inst("c", 10)},
			wantTarget: 3, wantDelete: []string{"b/Marked"}, wantWaits: []WaitReason{WaitAvailable},
		},
		{
			name:       "marked instances go before stale ones when the budget allows one",
			desired:    3,
			strategy:   strategy("0", "1"),
			instances:  []Instance{inst("s-old", 30, stale), inst("s-mid", 20, stale), inst("s-marked", 10, stale, marked)},
			wantTarget: 3, wantDelete: []string{"s-marked/Marked"},
			wantWaits: []WaitReason{WaitSurge, WaitBudget, WaitAvailable},
		},
		{
			name:       "marked instances are deleted with the skip gate too",
			desired:    3,
			skip:       true,
			instances:  []Instance{inst("a", 30, stale), inst("b", 20, marked), inst("c", 10, stale), inst("d", 1)},
			wantTarget: 3, wantDelete: []string{"b/Marked"},
		},
		{
			name:    "failed and deleting instances are always removed and replaced",
			desired: 3,
			instances: []Instance{inst("ok", 30), inst("gone", 20, deleting), inst("broken", 10, failed),
				inst("boot-failed", 5, booting, failed)},
			wantTarget: 3, wantDelete: []string{"boot-failed/Failed", "broken/Failed", "gone/Deleting"},
			wantWaits: []WaitReason{WaitAvailable},
		},
		{
			name:       "a pool with only a deleting instance left is not done",
			desired:    2,
			instances:  concat(group("a", 2), group("d", 1, deleting)),
			wantTarget: 2, wantDelete: []string{"d-0/Deleting"},
		},
		{
			name:       "skip gate: stale instances are neither replaced nor waited for",
			desired:    3,
			skip:       true,
			instances:  concat(group("s", 2, stale), group("n", 1)),
			wantTarget: 3, wantDone: true,
		},
		{
			name:       "skip gate: scale up adds up-to-date instances without surge",
			desired:    4,
			skip:       true,
			instances:  group("s", 3, stale),
			wantTarget: 4, wantWaits: []WaitReason{WaitAvailable},
		},
		{
			name:       "paused: nothing deleted, capacity unchanged, even failed and stale",
			desired:    1,
			paused:     true,
			instances:  concat(group("s", 2, stale), group("f", 1, failed), group("m", 1, marked)),
			wantTarget: 3, wantWaits: []WaitReason{WaitPaused},
		},
		{
			name:       "paused and converged still reports done",
			desired:    2,
			paused:     true,
			instances:  group("a", 2),
			wantTarget: 2, wantDone: true, wantWaits: []WaitReason{WaitPaused},
		},
	})
}

func TestPlanCountsAndMessages(t *testing.T) {
	in := Input{
		Desired:   3,
		Strategy:  strategy("1", "1"),
		ModelHash: current,
		Now:       t0,
		Instances: []Instance{
			inst("s-0", 50, stale), inst("s-1", 40, stale), inst("n-0", 30), inst("n-1", 20, booting),
			inst("m-0", 10, marked), inst("f-0", 5, failed), inst("d-0", 1, deleting),
		},
	}
	res, err := Plan(in)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	want := Counts{Replicas: 5, UpToDate: 3, Stale: 2, Ready: 4, Available: 4, Unavailable: 0, Failed: 1, Deleting: 1, Marked: 1}
	if res.Counts != want {
		t.Errorf("counts = %+v, want %+v", res.Counts, want)
	}
	// Budget: 4 available, minimum 2: the marked one and the oldest stale go,
	// the other stale is held back; one replacement fills desired+surge exactly.
	if got, wantDel := victims(res.Delete), []string{"d-0/Deleting", "f-0/Failed", "m-0/Marked", "s-0/Stale"}; !slices.Equal(got, wantDel) {
		t.Errorf("delete = %v, want %v", got, wantDel)
	}
	if res.TargetCapacity != 4 || res.SurgeInUse != 1 || res.MaxSurge != 1 || res.MaxUnavailable != 1 {
		t.Errorf("target %d surge in use %d budgets %d/%d, want 4, 1, 1/1",
			res.TargetCapacity, res.SurgeInUse, res.MaxSurge, res.MaxUnavailable)
	}
	if got := waitReasons(res.Waiting); !slices.Equal(got, []WaitReason{WaitBudget, WaitAvailable}) {
		t.Errorf("waiting = %v, want budget and available", got)
	}
	msgs := make([]string, 0, len(res.Waiting))
	for _, w := range res.Waiting {
		msgs = append(msgs, w.Message)
	}
	for _, want := range []string{
		"budget exhausted: 1 unavailable of max 1, 1 still to delete",
		"waiting for instances to become available: 2",
	} {
		if !slices.Contains(msgs, want) {
			t.Errorf("waiting messages %q lack %q", msgs, want)
		}
	}
}

func TestPlanInvalidInput(t *testing.T) {
	valid := func() Input {
		return Input{Desired: 2, ModelHash: current, Now: t0, Instances: group("a", 2)}
	}
	tests := []struct {
		name    string // and why the case exists
		mutate  func(*Input)
		wantErr string
	}{
		{name: "both budgets zero", mutate: func(in *Input) { in.Strategy = strategy("0", "0") }, wantErr: "both be zero"},
		{name: "unparsable budget", mutate: func(in *Input) { in.Strategy = strategy("lots", "") }, wantErr: "maxSurge"},
		{name: "percentage above 100", mutate: func(in *Input) { in.Strategy = strategy("", "101%") }, wantErr: "maxUnavailable"},
		{name: "negative desired", mutate: func(in *Input) { in.Desired = -1 }, wantErr: "negative"},
		{name: "unknown delete policy", mutate: func(in *Input) { in.Strategy.DeletePolicy = "Biggest" }, wantErr: "delete policy"},
		{name: "negative minReadySeconds", mutate: func(in *Input) { in.Strategy.MinReadySeconds = -1 }, wantErr: "minReadySeconds"},
		{name: "empty instance ID", mutate: func(in *Input) { in.Instances[1].ID = "" }, wantErr: "empty ID"},
		{name: "the same instance twice would be deleted twice", mutate: func(in *Input) { in.Instances[1].ID = "a-0" }, wantErr: "listed twice"},
		{name: "unknown state", mutate: func(in *Input) { in.Instances[0].State = "Hibernating" }, wantErr: "unknown state"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := valid()
			tt.mutate(&in)
			_, err := Plan(in)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}
