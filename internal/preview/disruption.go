package preview

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Annotations that bound a rollout's voluntary disruption: what happens to
// a Node that cannot be drained, and when instances may be replaced.
const (
	// UndrainableNodeBehaviorAnnotation on a MachinePool (or its infra pool,
	// which wins) says what the engine does with an instance replaced by a
	// rollout whose Node is still not drained when the MachinePool's
	// nodeDrainTimeout passes (see UndrainableNodeBehavior). Unset:
	// UndrainableDelete.
	UndrainableNodeBehaviorAnnotation = "mpool.dev/undrainable-node-behavior"
	// QuarantinedAnnotation on a per-instance object records (RFC 3339)
	// when the engine left its instance cordoned because its Node could not
	// be drained during a rollout (UndrainableCordon). The planner leaves a
	// quarantined instance out until it is marked for deletion.
	QuarantinedAnnotation = "mpool.dev/quarantined"
	// UpgradeStatusLabel on a Node, with the value Quarantined, marks a
	// Node left cordoned by UndrainableCordon, as AKS labels its own with
	// kubernetes.azure.com/upgrade-status.
	UpgradeStatusLabel = "mpool.dev/upgrade-status"
	// QuarantinedStatus is UpgradeStatusLabel's value.
	QuarantinedStatus = "Quarantined"
	// MaintenanceWindowScheduleAnnotation on a MachinePool (or its infra
	// pool, which wins) restricts the replacement of stale instances to
	// windows that start on this cron schedule (five fields, or a
	// descriptor such as @daily; UTC unless it starts with CRON_TZ=), as a
	// Karpenter disruption budget's schedule. It needs
	// MaintenanceWindowDurationAnnotation.
	MaintenanceWindowScheduleAnnotation = "mpool.dev/maintenance-window-schedule"
	// MaintenanceWindowDurationAnnotation is how long each window lasts: a
	// Go duration such as "4h" or "90m", as a Karpenter budget's duration.
	MaintenanceWindowDurationAnnotation = "mpool.dev/maintenance-window-duration"
)

// UndrainableNodeBehavior is the value of UndrainableNodeBehaviorAnnotation.
// Schedule and Cordon are named after AKS's upgradeSettings
// undrainableNodeBehavior.
type UndrainableNodeBehavior string

const (
	// UndrainableDelete deletes the instance anyway once the drain timed
	// out (a DrainTimeout event), as Cluster API does. The default.
	UndrainableDelete UndrainableNodeBehavior = "Delete"
	// UndrainableSchedule keeps the instance, marks its Node schedulable
	// again (uncordons it) and pauses the rollout, naming the Node and the
	// PodDisruptionBudgets that block it (RolloutProgressing False,
	// DrainBlocked).
	UndrainableSchedule UndrainableNodeBehavior = "Schedule"
	// UndrainableCordon keeps the instance, leaves its Node cordoned and
	// labelled mpool.dev/upgrade-status=Quarantined, leaves it out of the
	// plan (QuarantinedAnnotation) and goes on with the other instances.
	UndrainableCordon UndrainableNodeBehavior = "Cordon"
)

// ReadUndrainableNodeBehavior resolves UndrainableNodeBehaviorAnnotation
// over the pool's objects (later ones win: the MachinePool, then the infra
// pool). An unknown value is returned as an error, with UndrainableDelete.
func ReadUndrainableNodeBehavior(objs ...metav1.Object) (UndrainableNodeBehavior, error) {
	v := lastAnnotation(UndrainableNodeBehaviorAnnotation, objs)
	switch b := UndrainableNodeBehavior(strings.TrimSpace(v)); b {
	case "":
		return UndrainableDelete, nil
	case UndrainableDelete, UndrainableSchedule, UndrainableCordon:
		return b, nil
	default:
		return UndrainableDelete, fmt.Errorf("annotation %s: %q is not one of Delete, Schedule, Cordon; Delete applies", UndrainableNodeBehaviorAnnotation, v)
	}
}

// MaintenanceWindow is when a pool's stale instances may be replaced.
type MaintenanceWindow struct {
	// Schedule is the cron expression windows start on.
	Schedule string
	// Duration is how long each window lasts.
	Duration time.Duration

	sched cron.Schedule
}

// cronParser parses what Karpenter's budgets accept: five fields, or a
// descriptor, with an optional CRON_TZ= prefix.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseMaintenanceWindow reads a schedule and a duration. The error says
// what to fix.
func ParseMaintenanceWindow(schedule, duration string) (*MaintenanceWindow, error) {
	schedule, duration = strings.TrimSpace(schedule), strings.TrimSpace(duration)
	switch {
	case schedule == "" && duration == "":
		return nil, nil
	case schedule == "":
		return nil, fmt.Errorf("annotation %s is set but %s is not: set both, e.g. %q and %q", MaintenanceWindowDurationAnnotation, MaintenanceWindowScheduleAnnotation, "0 2 * * *", "4h")
	case duration == "":
		return nil, fmt.Errorf("annotation %s is set but %s is not: set both, e.g. %q and %q", MaintenanceWindowScheduleAnnotation, MaintenanceWindowDurationAnnotation, "0 2 * * *", "4h")
	}
	sched, err := cronParser.Parse(schedule)
	if err != nil {
		return nil, fmt.Errorf("annotation %s: %q is not a cron schedule (minute hour day-of-month month day-of-week, e.g. \"0 2 * * *\", or @daily): %v", MaintenanceWindowScheduleAnnotation, schedule, err)
	}
	d, err := time.ParseDuration(duration)
	if err != nil || d < time.Minute {
		return nil, fmt.Errorf("annotation %s: %q is not a duration of at least a minute, such as \"4h\" or \"90m\"", MaintenanceWindowDurationAnnotation, duration)
	}
	return &MaintenanceWindow{Schedule: schedule, Duration: d, sched: sched}, nil
}

// ReadMaintenanceWindow reads the maintenance window of the pool's objects:
// that of the last one (the MachinePool, then the infra pool) that sets
// either annotation, so an infra pool's window replaces its MachinePool's.
// Nil when none has one: the pool may be disrupted at any time. An
// unreadable window is an error; the caller then holds the rollout rather
// than disrupt outside a window the user meant to set.
func ReadMaintenanceWindow(objs ...metav1.Object) (*MaintenanceWindow, error) {
	var schedule, duration string
	for _, o := range objs {
		if o == nil {
			continue
		}
		a := o.GetAnnotations()
		s, ok1 := a[MaintenanceWindowScheduleAnnotation]
		d, ok2 := a[MaintenanceWindowDurationAnnotation]
		if ok1 || ok2 {
			schedule, duration = s, d
		}
	}
	return ParseMaintenanceWindow(schedule, duration)
}

// At says whether a window is open at now, and when that changes next:
// when the window open now closes (the latest window that started, which
// may overlap the next one, then still open), or when the next one opens.
// A window opens when the schedule fires and stays open for Duration, as a
// Karpenter budget is active.
func (w *MaintenanceWindow) At(now time.Time) (open bool, until time.Time) {
	// The first start after now-Duration is open now if it is not after now.
	start := w.sched.Next(now.Add(-w.Duration))
	if start.IsZero() || start.After(now) {
		return false, start
	}
	for i := 0; i < 10000; i++ {
		next := w.sched.Next(start)
		if next.IsZero() || next.After(now) {
			break
		}
		start = next
	}
	return true, start.Add(w.Duration)
}

// Describe says what the window is, for messages.
func (w *MaintenanceWindow) Describe() string {
	return fmt.Sprintf("schedule %q, duration %s", w.Schedule, w.Duration)
}

// Hold returns the planner's HoldStale for now: empty while the window is
// open, else why stale instances wait and until when.
func (w *MaintenanceWindow) Hold(now time.Time) string {
	if w == nil {
		return ""
	}
	open, until := w.At(now)
	if open {
		return ""
	}
	if until.IsZero() {
		return fmt.Sprintf("outside the maintenance window (%s), which never opens", w.Describe())
	}
	return fmt.Sprintf("outside the maintenance window (%s) until %s", w.Describe(), until.UTC().Format(time.RFC3339))
}

// NodeDrainTimeout is the MachinePool template's nodeDrainTimeout, which
// bounds each drain (the engine's, and what the plan shows); zero, also for
// a nil pool, waits for a drain without bound.
func NodeDrainTimeout(mp *clusterv1.MachinePool) time.Duration {
	if mp == nil || mp.Spec.Template.Spec.Deletion.NodeDrainTimeoutSeconds == nil {
		return 0
	}
	return time.Duration(*mp.Spec.Template.Spec.Deletion.NodeDrainTimeoutSeconds) * time.Second
}

// lastAnnotation returns key's value on the last of objs that has it.
func lastAnnotation(key string, objs []metav1.Object) string {
	var v string
	for _, o := range objs {
		if o == nil {
			continue
		}
		if x, ok := o.GetAnnotations()[key]; ok {
			v = x
		}
	}
	return v
}

// WindowHold returns the planner's HoldStale for a pool with these objects
// (the MachinePool, then the infra pool) at now, and the window read. A
// window that cannot be read holds the rollout: the user meant to restrict
// it, and the error says what to fix.
func WindowHold(now time.Time, objs ...metav1.Object) (hold string, w *MaintenanceWindow, err error) {
	w, err = ReadMaintenanceWindow(objs...)
	if err != nil {
		return fmt.Sprintf("the maintenance window cannot be read (%v); nothing is replaced until it is fixed", err), nil, err
	}
	return w.Hold(now), w, nil
}
