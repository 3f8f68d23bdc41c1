package rollout

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// bgInput is a pool of desired 3 on current with the given instances.
func bgInput(now time.Time, rec *BlueGreenRecord, insts ...Instance) BlueGreenInput {
	return BlueGreenInput{
		Input:    Input{Desired: 3, ModelHash: current, Instances: insts, Now: now},
		Settings: BlueGreenSettings{BatchSoak: 10 * time.Second, PoolSoak: time.Minute},
		Record:   rec,
	}
}

func mustStep(t *testing.T, in BlueGreenInput) BlueGreenStep {
	t.Helper()
	s, err := PlanBlueGreen(in)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func wantPhase(t *testing.T, s BlueGreenStep, phase BlueGreenPhase, own bool) {
	t.Helper()
	if s.Record == nil || s.Record.Phase != phase || s.Own != own {
		t.Fatalf("step = %+v (record %+v), want phase %s own %t", s, s.Record, phase, own)
	}
}

// TestBlueGreenWalk walks a rollout from start to completion: the full
// green set beside the blue one (peak twice the size), the cordon once
// every green instance is available, batches with their soak, the pool
// soak, then the rolling planner deletes the blue set.
func TestBlueGreenWalk(t *testing.T) {
	blue := group("b", 3, stale)
	now := t0

	// Nothing to do on an up-to-date pool.
	if s := mustStep(t, bgInput(now, nil, group("g", 3)...)); s.Record != nil || s.Own {
		t.Fatalf("up-to-date pool: %+v", s)
	}

	s := mustStep(t, bgInput(now, nil, blue...))
	wantPhase(t, s, PhaseCreatingGreen, true)
	if s.TargetCapacity != 6 || len(s.Delete) != 0 || len(s.Cordon) != 0 || len(s.Drain) != 0 {
		t.Fatalf("creating: %+v", s)
	}
	if s.Record.Blue != previous || s.Record.Green != current {
		t.Fatalf("record %+v", s.Record)
	}

	// Two green instances available, one booting: still creating.
	green := append(group("g", 2), inst("g-2", 1, booting))
	all := append(slices.Clone(blue), green...)
	s = mustStep(t, bgInput(now, s.Record, all...))
	wantPhase(t, s, PhaseCreatingGreen, true)
	if s.TargetCapacity != 6 || s.Wait.Reason != WaitReason(PhaseCreatingGreen) {
		t.Fatalf("creating: %+v", s)
	}

	// All green available: cordon the blue set.
	green = group("g", 3)
	all = append(slices.Clone(blue), green...)
	s = mustStep(t, bgInput(now, s.Record, all...))
	wantPhase(t, s, PhaseCordoningBlue, true)
	if !slices.Equal(s.Cordon, []string{"b-0", "b-1", "b-2"}) || s.Record.BlueCount != 3 {
		t.Fatalf("cordoning: %+v", s)
	}
	s.Record.Cordoned(now)

	// Batches of one (the default), oldest first, a soak after each.
	for k, id := range []string{"b-0", "b-1", "b-2"} {
		s = mustStep(t, bgInput(now, s.Record, all...))
		wantPhase(t, s, PhaseDrainingBlue, true)
		if !slices.Equal(s.Drain, []string{id}) || s.TargetCapacity != 6 {
			t.Fatalf("batch %d: %+v", k, s)
		}
		// Still draining: the same batch.
		if again := mustStep(t, bgInput(now.Add(time.Second), s.Record, all...)); !slices.Equal(again.Drain, []string{id}) {
			t.Fatalf("batch %d again: %+v", k, again)
		}
		s.Record.BatchDrained(now)
		if k < 2 {
			// The batch soak holds the next batch.
			held := mustStep(t, bgInput(now.Add(5*time.Second), s.Record, all...))
			if len(held.Drain) != 0 || held.RequeueAfter != 5*time.Second {
				t.Fatalf("batch soak %d: %+v", k, held)
			}
		}
		now = now.Add(10 * time.Second)
	}
	s = mustStep(t, bgInput(now, s.Record, all...))
	wantPhase(t, s, PhaseSoaking, true)
	if s.RequeueAfter != time.Minute || len(s.Drain) != 0 || len(s.Cordon) != 3 {
		t.Fatalf("soaking: %+v", s)
	}
	s = mustStep(t, bgInput(now.Add(30*time.Second), s.Record, all...))
	wantPhase(t, s, PhaseSoaking, true)

	now = now.Add(time.Minute)
	s = mustStep(t, bgInput(now, s.Record, all...))
	wantPhase(t, s, PhaseDeletingBlue, false)

	// The rolling planner deletes the blue set; once gone, complete.
	s = mustStep(t, bgInput(now, s.Record, green...))
	if s.Record != nil || !s.Completed || s.Own {
		t.Fatalf("complete: %+v", s)
	}
}

// TestBlueGreenRollbackInSoak: the pool's model back to the blue one during
// the soak uncordons the blue set and leaves the green set to the rolling
// planner; no blue instance is to be created.
func TestBlueGreenRollbackInSoak(t *testing.T) {
	blue := group("b", 3, stale)
	green := group("g", 3)
	rec := &BlueGreenRecord{Blue: previous, Green: current, Phase: PhaseSoaking, Since: t0, BlueCount: 3, Drained: []string{"b-0", "b-1", "b-2"}}
	in := bgInput(t0, rec, append(blue, green...)...)
	// Back to the blue model: blue instances are up to date, green stale.
	in.ModelHash = previous
	s := mustStep(t, in)
	wantPhase(t, s, PhaseRollingBack, false)
	if !slices.Equal(s.Uncordon, []string{"b-0", "b-1", "b-2"}) || len(s.Cordon) != 0 {
		t.Fatalf("rollback: %+v", s)
	}
	// The rolling planner on the same input deletes the green set and
	// creates nothing.
	plan, err := Plan(in.Input)
	if err != nil {
		t.Fatal(err)
	}
	if plan.TargetCapacity != 3 || len(plan.Delete) != 3 {
		t.Fatalf("rolling plan of the rollback: %+v", plan)
	}
	for _, v := range plan.Delete {
		if v.ID[0] != 'g' {
			t.Fatalf("rollback deletes %s", v.ID)
		}
	}
	// Green gone: the rollback is complete.
	in.Instances = blue
	in.Record = s.Record
	if s := mustStep(t, in); s.Record != nil || !s.Completed {
		t.Fatalf("rolled back: %+v", s)
	}
}

// TestBlueGreenHold: nothing starts, and no new phase starts, while paused
// or outside the maintenance window; a batch in flight goes on draining.
func TestBlueGreenHold(t *testing.T) {
	blue := group("b", 3, stale)
	in := bgInput(t0, nil, blue...)
	in.HoldStale = "the maintenance window opens at 02:00"
	if s := mustStep(t, in); s.Record != nil || s.Own {
		t.Fatalf("held start: %+v", s)
	}
	all := append(slices.Clone(blue), group("g", 3)...)
	in = bgInput(t0, &BlueGreenRecord{Blue: previous, Green: current, Phase: PhaseCreatingGreen, Since: t0}, all...)
	in.Paused = true
	s := mustStep(t, in)
	wantPhase(t, s, PhaseCreatingGreen, true)
	if len(s.Cordon) != 0 {
		t.Fatalf("paused cordons: %+v", s)
	}
	in = bgInput(t0, &BlueGreenRecord{Blue: previous, Green: current, Phase: PhaseDrainingBlue, Since: t0, Batch: []string{"b-1"}}, all...)
	in.HoldStale = "closed"
	s = mustStep(t, in)
	if !slices.Equal(s.Drain, []string{"b-1"}) {
		t.Fatalf("in-flight batch: %+v", s)
	}
	s.Record.BatchDrained(t0)
	in.Record, in.Now = s.Record, t0.Add(time.Hour)
	if s = mustStep(t, in); len(s.Drain) != 0 || s.Record.Phase != PhaseDrainingBlue {
		t.Fatalf("held batch: %+v", s)
	}
	in.Record = &BlueGreenRecord{Blue: previous, Green: current, Phase: PhaseSoaking, Since: t0}
	if s = mustStep(t, in); s.Record.Phase != PhaseSoaking || !s.Own {
		t.Fatalf("held soak: %+v", s)
	}
}

// TestBlueGreenSupersede: a newer change while the green set is created
// deletes the superseded green instances and creates the newest set; the
// blue set keeps serving and the capacity stays blue + desired.
func TestBlueGreenSupersede(t *testing.T) {
	blue := group("b", 3, stale)
	green := group("g", 3)
	in := bgInput(t0, &BlueGreenRecord{Blue: previous, Green: current, Phase: PhaseCreatingGreen, Since: t0}, append(blue, green...)...)
	in.ModelHash = "model-3"
	s := mustStep(t, in)
	wantPhase(t, s, PhaseCreatingGreen, true)
	if s.TargetCapacity != 6 || len(s.Delete) != 3 || s.Record.Green != "model-3" || !slices.Equal(s.Record.Superseded, []string{current}) {
		t.Fatalf("supersede: %+v %+v", s, s.Record)
	}
	for _, v := range s.Delete {
		if v.Reason != ReasonStale || v.ID[0] != 'g' {
			t.Fatalf("supersede deletes %+v", v)
		}
	}
}

// TestBlueGreenSupersedeInSoak: a newer change during the soak makes the
// blue Nodes serve again and drains the superseded green set onto them.
func TestBlueGreenSupersedeInSoak(t *testing.T) {
	blue := group("b", 3, stale)
	green := group("g", 3)
	rec := &BlueGreenRecord{Blue: previous, Green: current, Phase: PhaseSoaking, Since: t0, BlueCount: 3, Drained: []string{"b-0", "b-1", "b-2"}}
	in := bgInput(t0, rec, append(blue, green...)...)
	in.ModelHash = "model-3"
	s := mustStep(t, in)
	wantPhase(t, s, PhaseCreatingGreen, true)
	if !slices.Equal(s.Uncordon, []string{"b-0", "b-1", "b-2"}) || len(s.Cordon) != 0 || len(s.Drain) != 0 || len(s.Delete) != 3 || s.TargetCapacity != 6 {
		t.Fatalf("supersede in soak: %+v", s)
	}
	if len(s.Record.Drained) != 0 || s.Record.Blue != previous {
		t.Fatalf("record %+v", s.Record)
	}
}

// TestBlueGreenVictims: failed, marked and unhealthy instances go in every
// phase the rollout owns, and are replaced within its capacity.
func TestBlueGreenVictims(t *testing.T) {
	insts := append(group("b", 3, stale), inst("g-0", 1), inst("g-1", 1, failed), inst("b-9", 1, stale, marked))
	s := mustStep(t, bgInput(t0, nil, insts...))
	if len(s.Delete) != 2 || s.TargetCapacity != 6 {
		t.Fatalf("victims: %+v", s)
	}
}

func TestBlueGreenBatchCount(t *testing.T) {
	pct := intstr.FromString("50%")
	for _, c := range []struct {
		s    BlueGreenSettings
		blue int32
		want int32
	}{
		{BlueGreenSettings{}, 10, 1},
		{BlueGreenSettings{BatchSize: &pct}, 3, 2},
		{BlueGreenSettings{BatchSize: &pct}, 10, 5},
		{BlueGreenSettings{BatchSize: ptrInt(20)}, 4, 4},
	} {
		if got, err := c.s.BatchCount(c.blue); err != nil || got != c.want {
			t.Errorf("BatchCount(%v, %d) = %d, %v; want %d", c.s.BatchSize, c.blue, got, err, c.want)
		}
	}
}

func ptrInt(n int32) *intstr.IntOrString { v := intstr.FromInt32(n); return &v }
