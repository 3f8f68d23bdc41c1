package infrapool

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/rollout"
)

// windowScope is a pool of two old instances whose MachinePool has a
// maintenance window opening at 02:00 UTC for two hours, planned at now.
func windowScope(now time.Time) (*Engine, *pass) {
	fx := []fixture{running("a", 2*time.Hour, "old"), running("b", time.Hour, "old")}
	e, s := glueScope(fx, 2, rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(1))})
	e.rec = nopRecorder{}
	s.now = now
	s.owner = &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Name: "mp", Annotations: map[string]string{
		preview.MaintenanceWindowScheduleAnnotation: "0 2 * * *",
		preview.MaintenanceWindowDurationAnnotation: "2h",
	}}}
	return e, s
}

// TestOutsideTheWindowTheRolloutWaits: a change made outside the window
// replaces nothing, adds no surge, says until when, and the progress
// deadline does not run; at the window's opening (the engine's clock, not
// the wall's) the same pool rolls.
func TestOutsideTheWindowTheRolloutWaits(t *testing.T) {
	// t0 is 12:00 UTC: the next window opens at 02:00 the next day.
	e, s := windowScope(t0)
	s.pool.SetAnnotations(map[string]string{preview.RolloutProgressAnnotation: preview.RolloutProgress{
		Model: "new", ProgressAt: t0.Add(-time.Hour), Stale: 2,
	}.String()})
	if err := e.planRollout(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if s.selfPaused != nil {
		t.Fatalf("paused at the progress deadline while waiting for the window: %s", s.selfPaused.Message)
	}
	if len(s.plan.Delete) != 0 || s.plan.TargetCapacity != 2 {
		t.Errorf("outside the window: delete %v, capacity %d; want nothing deleted, capacity 2", s.plan.Delete, s.plan.TargetCapacity)
	}
	opens := time.Date(2030, 1, 2, 2, 0, 0, 0, time.UTC)
	c := rolloutProgressingCondition(s)
	if c.Status != metav1.ConditionFalse || c.Reason != infrav1.OutsideMaintenanceWindowReason || !strings.Contains(c.Message, opens.Format(time.RFC3339)) {
		t.Errorf("RolloutProgressing %s %s %q; want False %s until %s", c.Status, c.Reason, c.Message, infrav1.OutsideMaintenanceWindowReason, opens.Format(time.RFC3339))
	}
	if want := opens.Sub(t0); s.requeue != want {
		t.Errorf("requeue after %s, want %s (the window's opening)", s.requeue, want)
	}

	e, s = windowScope(opens.Add(time.Minute))
	if err := e.planRollout(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if len(s.plan.Delete) == 0 || s.plan.Delete[0].Reason != rollout.ReasonStale {
		t.Errorf("inside the window: delete %v; want a stale instance", s.plan.Delete)
	}
	if want := 2*time.Hour - time.Minute; s.requeue > want {
		t.Errorf("requeue after %s, want at most %s (the window's close)", s.requeue, want)
	}
}

// TestUnreadableWindowHolds: a window the user meant to set but that
// cannot be read holds the rollout and says what to fix.
func TestUnreadableWindowHolds(t *testing.T) {
	e, s := windowScope(t0)
	s.owner.Annotations[preview.MaintenanceWindowScheduleAnnotation] = "0 25 * * *"
	if err := e.planRollout(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if len(s.plan.Delete) != 0 {
		t.Errorf("delete %v with an unreadable window", s.plan.Delete)
	}
	if c := rolloutProgressingCondition(s); !strings.Contains(c.Message, "is not a cron schedule") {
		t.Errorf("RolloutProgressing %q does not say what to fix", c.Message)
	}
}

// TestDrainBlockedPauseSurvivesARestart: the pause a blocked drain set is
// on the pool; a new engine (a restarted manager) keeps it, reports it and
// does not roll back.
func TestDrainBlockedPauseSurvivesARestart(t *testing.T) {
	fx := []fixture{running("a", 2*time.Hour, "old"), running("b", time.Hour, "old"), running("n", time.Minute, "new")}
	e, s := glueScope(fx, 2, rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(1))})
	e.rec = nopRecorder{}
	s.owner = &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Name: "mp", Annotations: map[string]string{preview.AutoRollbackAnnotation: "true"}}}
	e.pauseForDrain(s, "Node node-a of instance a was not drained within nodeDrainTimeout 5s (blocked by PodDisruptionBudget ns/db)")
	annotations := s.pool.GetAnnotations()

	e, s = glueScope(fx, 2, rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(1))})
	e.rec = nopRecorder{}
	s.owner = &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Name: "mp", Annotations: map[string]string{preview.AutoRollbackAnnotation: "true"}}}
	s.pool.SetAnnotations(annotations)
	if err := e.planRollout(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if s.selfPaused == nil || s.selfPaused.Paused != infrav1.DrainBlockedReason || !s.input.Paused {
		t.Fatalf("selfPaused %+v, input paused %v: want the DrainBlocked pause kept", s.selfPaused, s.input.Paused)
	}
	c := rolloutProgressingCondition(s)
	if c.Reason != infrav1.DrainBlockedReason || !strings.Contains(c.Message, "node-a") || !strings.Contains(c.Message, "ns/db") {
		t.Errorf("RolloutProgressing %s %q: want DrainBlocked naming the Node and the PodDisruptionBudget", c.Reason, c.Message)
	}
	if _, ok := s.pool.GetAnnotations()[preview.RolledBackAnnotation]; ok {
		t.Error("rolled back on a blocked drain")
	}
}

// TestQuarantinedInstanceKeptInTheCapacity: a quarantined instance is out
// of the plan but still in the group: the capacity the engine applies
// counts it, so the cloud never picks a victim to make up for it.
func TestQuarantinedInstanceKeptInTheCapacity(t *testing.T) {
	q := running("q", 3*time.Hour, "old")
	q.objMark = map[string]string{preview.QuarantinedAnnotation: t0.Format(time.RFC3339)}
	fx := []fixture{q, running("n1", time.Hour, "new"), running("n2", time.Hour, "new")}
	e, s := glueScope(fx, 2, rollout.Strategy{MaxSurge: ptr.To(intstr.FromInt32(1))})
	e.rec = nopRecorder{}
	if err := e.planRollout(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if !s.plan.Done || len(s.plan.Delete) != 0 || s.plan.Counts.Quarantined != 1 {
		t.Fatalf("plan %+v: want done, nothing deleted, one quarantined", s.plan)
	}
	if got := capacity(s.plan, s.input, s.cloud.Instances, nil); got != 3 {
		t.Errorf("capacity %d, want 3 (two replicas and the quarantined instance)", got)
	}
	if c := rolloutProgressingCondition(s); !strings.Contains(c.Message, "1 instance quarantined") {
		t.Errorf("RolloutProgressing %q does not mention the quarantined instance", c.Message)
	}
}

// TestKeptInstanceReportedLive: the pass that keeps an undrainable
// instance (quarantined, or its Node schedulable again) reports it Running,
// though the object it read at its start still carries the drain-started
// annotation the pass removed. Reported Deleting, it stayed so until
// something else woke the pool, and a manager stopped in between left it
// to the next one.
func TestKeptInstanceReportedLive(t *testing.T) {
	q := running("q", 3*time.Hour, "old")
	q.ready = true
	q.objMark = map[string]string{preview.DrainStartedAnnotation: t0.Add(-time.Minute).Format(time.RFC3339)}
	e, s := glueScope([]fixture{q}, 1, rollout.Strategy{})
	s.kept = map[string]bool{}
	inst := s.cloud.Instances[0]
	if got := e.instanceReport(s, inst).State; got != contract.InstanceDeleting {
		t.Fatalf("while its removal is recorded: reported %s, want %s", got, contract.InstanceDeleting)
	}
	s.kept["q"] = true
	if got := e.instanceReport(s, inst).State; got != contract.InstanceRunning {
		t.Errorf("kept this pass: reported %s, want %s", got, contract.InstanceRunning)
	}
}
