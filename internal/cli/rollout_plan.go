package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/internal/capi"
	"github.com/mpool-dev/mpool/internal/history"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/rollout"
)

// planComputedFrom says, in every plan, what it is computed from.
const planComputedFrom = "the state last reported to the API server (MachinePool, infrastructure pool, " +
	"per-instance objects, Machines) and the workload cluster's Nodes; the cloud is not read"

// maxProjectedSteps bounds the projected steps the text output lists.
const maxProjectedSteps = 10

// RolloutPlanView is the view of `mpool rollout plan NAME`: what the rollout
// engine would do next to a MachinePool, and how the rollout would go on.
type RolloutPlanView struct {
	// Namespace of the MachinePool.
	Namespace string `json:"namespace"`
	// Name of the MachinePool.
	Name string `json:"name"`
	// ComputedFrom says what the plan is computed from: the last reported
	// state, not the cloud.
	ComputedFrom string `json:"computedFrom"`
	// Paused is true when the rollout is paused; the plan is what the
	// engine would do once resumed.
	Paused bool `json:"paused"`
	// SkipModelReconciliation is true when the plan assumes the manager's
	// SkipMachinePoolModelReconciliation feature gate.
	SkipModelReconciliation bool `json:"skipModelReconciliation"`
	// BudgetFrom names the infrastructure pool's fields the budgets below
	// come from and what they mean (spec.strategy; an AWSMachinePool's
	// refreshPreferences; an EKS node group's updateConfig).
	BudgetFrom string `json:"budgetFrom"`
	// CloudRollouts is true when the cloud replaces out-of-date instances
	// itself (an EKS node group): the engine picks no victims for drift.
	CloudRollouts bool `json:"cloudRollouts,omitempty"`
	// Desired is the MachinePool's spec.replicas.
	Desired int32 `json:"desired"`
	// DeletePolicy is the strategy's deletePolicy (Oldest, Newest, Random).
	DeletePolicy string `json:"deletePolicy"`
	// MinReadySeconds is the MachinePool's spec.minReadySeconds.
	MinReadySeconds int32 `json:"minReadySeconds"`
	// MaxSurge is the strategy's maxSurge resolved against Desired.
	MaxSurge int32 `json:"maxSurge"`
	// MaxUnavailable is the strategy's maxUnavailable resolved against Desired.
	MaxUnavailable int32 `json:"maxUnavailable"`
	// Replicas is the number of live instances: neither failed nor being removed.
	Replicas int32 `json:"replicas"`
	// UpToDate is the number of live instances on the current model.
	UpToDate int32 `json:"upToDate"`
	// Stale is the number of live instances on an older model.
	Stale int32 `json:"stale"`
	// Ready is the number of live instances whose Node is Ready.
	Ready int32 `json:"ready"`
	// Available is the number of live instances Ready for minReadySeconds.
	Available int32 `json:"available"`
	// Unavailable is max(0, desired - available).
	Unavailable int32 `json:"unavailable"`
	// SurgeInUse is max(0, replicas - desired) now.
	SurgeInUse int32 `json:"surgeInUse"`
	// Failed is the number of failed instances.
	Failed int32 `json:"failed"`
	// Deleting is the number of instances whose removal has started.
	Deleting int32 `json:"deleting"`
	// Marked is the number of live instances marked for deletion.
	Marked int32 `json:"marked"`
	// Next is what the engine would do on the current state.
	Next PlanStepView `json:"next"`
	// Then are the steps after Next, projected by assuming that every new
	// instance becomes available and every removal completes.
	Then []PlanStepView `json:"then,omitempty"`
	// Converges is true when the projection ends with the rollout complete.
	Converges bool `json:"converges"`
	// Quarantined is the number of instances left out of the plan: their
	// Nodes could not be drained and were left cordoned.
	Quarantined int32 `json:"quarantined,omitempty"`
	// PausedBy is the engine's own pause of the rollout ("DrainBlocked:
	// Node ... blocked by PodDisruptionBudget ..."), empty when none.
	PausedBy string `json:"pausedBy,omitempty"`
	// MaintenanceWindow is the pool's maintenance window, nil when it has
	// none (stale instances are replaced at any time).
	MaintenanceWindow *PlanWindowView `json:"maintenanceWindow,omitempty"`
	// UndrainableNodeBehavior is what the rollout does with a Node not
	// drained within NodeDrainTimeout: Delete, Schedule or Cordon.
	UndrainableNodeBehavior string `json:"undrainableNodeBehavior"`
	// NodeDrainTimeout is the MachinePool's nodeDrainTimeout, empty when
	// unset (drains are not bounded, and the behavior never applies).
	NodeDrainTimeout string `json:"nodeDrainTimeout,omitempty"`
	// Draining are the instances whose Node is being drained, and what
	// happens when their drain times out.
	Draining []PlanDrainView `json:"draining,omitempty"`
	// BlueGreen is the pool's blue-green rollout (the BlueGreen strategy),
	// nil for a rolling update.
	BlueGreen *PlanBlueGreenView `json:"blueGreen,omitempty"`
	// Revision is the pool's current revision, nil before the engine has
	// recorded one.
	Revision *PlanRevisionView `json:"revision,omitempty"`
	// Revisions is how many revisions the history holds.
	Revisions int `json:"revisions,omitempty"`
	// Stops says when the rollout stops itself and what it does then.
	Stops *PlanStopsView `json:"stops,omitempty"`
	// Notes say what may make the plan differ from what the engine does.
	Notes []string `json:"notes,omitempty"`
}

// PlanRevisionView is one revision of a pool's history.
type PlanRevisionView struct {
	// Number is the revision's number ('mpool rollout history').
	Number int64 `json:"number"`
	// ModelHash is the model it records.
	ModelHash string `json:"modelHash"`
}

// PlanStopsView is when a rollout stops itself, and what follows.
type PlanStopsView struct {
	// ProgressDeadline is the progress deadline, "off" when none.
	ProgressDeadline string `json:"progressDeadline"`
	// MaxFailedReplacements is the limit of consecutive failed new-model
	// instances, 0 when off.
	MaxFailedReplacements int `json:"maxFailedReplacements"`
	// AutoRollback is true when the engine undoes the change itself.
	AutoRollback bool `json:"autoRollback"`
	// RollbackTo is the revision an automatic rollback restores, nil when
	// there is none (the history has no other model, or the current model is
	// itself a rollback, which is not rolled back again).
	RollbackTo *PlanRevisionView `json:"rollbackTo,omitempty"`
}

// PlanBlueGreenView is a pool's blue-green rollout: the one in progress, or
// what a model change would do.
type PlanBlueGreenView struct {
	// Phase is the phase in progress, empty when none is.
	Phase string `json:"phase,omitempty"`
	// Since is when the phase (or, while draining, the batch) started.
	Since *metav1.Time `json:"since,omitempty"`
	// BlueModel and GreenModel are the models of the old and new sets, in
	// progress.
	BlueModel  string `json:"blueModel,omitempty"`
	GreenModel string `json:"greenModel,omitempty"`
	// Blue is the size of the blue set: the stale instances, or, with
	// nothing in progress, every replica (what a model change replaces).
	Blue int32 `json:"blue"`
	// PeakInstances is the most instances the rollout has at once: the
	// blue set and the pool's size of green ones.
	PeakInstances int32 `json:"peakInstances"`
	// QuotaNeed is how many instances the cloud's quota must allow beyond
	// the pool's live instances now.
	QuotaNeed int32 `json:"quotaNeed"`
	// BatchSize is how many blue Nodes are drained at once.
	BatchSize int32 `json:"batchSize"`
	// BatchSoak and PoolSoak are the soaks.
	BatchSoak string `json:"batchSoak"`
	PoolSoak  string `json:"poolSoak"`
	// Phases are the phases to come, in order, with what each does.
	Phases []string `json:"phases"`
}

// PlanWindowView is a pool's maintenance window at the time of the plan.
type PlanWindowView struct {
	// Schedule is the cron schedule windows start on.
	Schedule string `json:"schedule"`
	// Duration is how long each window lasts.
	Duration string `json:"duration"`
	// Open is true when a window is open now.
	Open bool `json:"open"`
	// Until is when the open window closes, or when the next one opens.
	Until *metav1.Time `json:"until,omitempty"`
}

// PlanDrainView is one instance whose Node is being drained.
type PlanDrainView struct {
	// Name of the per-instance object.
	Name string `json:"name"`
	// Started is when its drain started.
	Started metav1.Time `json:"started"`
	// TimesOutAt is when nodeDrainTimeout passes; nil without one.
	TimesOutAt *metav1.Time `json:"timesOutAt,omitempty"`
	// Then is what the engine does if the Node is not drained by then.
	Then string `json:"then"`
}

// PlanStepView is one step of a rollout plan.
type PlanStepView struct {
	// TargetCapacity is how many live instances the group should have once
	// this step's victims are gone, counting surge.
	TargetCapacity int32 `json:"targetCapacity"`
	// Create is how many instances are created, on the current model.
	Create int32 `json:"create"`
	// Delete are the instances to drain and delete, in order.
	Delete []PlannedDeletionView `json:"delete,omitempty"`
	// Waiting is what the step waits for.
	Waiting []PlanWaitView `json:"waiting,omitempty"`
	// Done is true when there is nothing to do: the rollout is complete.
	Done bool `json:"done,omitempty"`
}

// PlannedDeletionView is one instance a step deletes.
type PlannedDeletionView struct {
	// Name of the per-instance object; empty for an instance the plan
	// expects to create first (New).
	Name string `json:"name,omitempty"`
	// InstanceID is the instance's ID within its scale group.
	InstanceID string `json:"instanceID,omitempty"`
	// Zone the instance runs in.
	Zone string `json:"zone,omitempty"`
	// New is true for an instance an earlier step creates.
	New bool `json:"new,omitempty"`
	// Reason is the planner's reason: Failed, Deleting, Marked, Stale or Excess.
	Reason string `json:"reason"`
	// Why explains Reason.
	Why string `json:"why"`
}

// PlanWaitView is one thing a step waits for.
type PlanWaitView struct {
	// Reason is the machine-readable kind of wait (SurgeExhausted,
	// BudgetExhausted, WaitingForAvailable).
	Reason string `json:"reason"`
	// Message explains it with numbers.
	Message string `json:"message"`
}

// PlanOptions tune PlanRollout.
type PlanOptions struct {
	// SkipModelReconciliation plans as a manager with the
	// SkipMachinePoolModelReconciliation feature gate does.
	SkipModelReconciliation bool
	// Now is the time availability is measured against.
	Now time.Time
}

type rolloutPlanOptions struct {
	skip   bool
	output *outputFormat
	color  *colorMode
}

func newRolloutPlanCommand(cf *clientFlags, clk clock.PassiveClock) *cobra.Command {
	o := rolloutPlanOptions{}
	cmd := &cobra.Command{
		Use:   "plan NAME",
		Short: "Show what the rollout engine would do next to a MachinePool (a dry run)",
		Long: `Run the rollout planner — the one the engine runs — on a MachinePool and show,
without changing anything, how many instances it would create and which instances it
would drain and delete next, and why: failed, already being removed, marked with
cluster.x-k8s.io/delete-machine, on a stale model, or above the desired replicas
(scale down). Then it shows how the rollout would go on if every new instance became
available and every removal completed, and what each step waits for.

The plan is computed from the state last reported to the API server: the
MachinePool's replicas and minReadySeconds, the infrastructure pool's strategy, and
for each per-instance object its state, zone, age, model (up to date or stale) and
marks, with readiness from the workload cluster's Nodes. The cloud is not read, so
an instance the engine has not reported yet is not in the plan, and instances
created within the same second are ordered by instance ID. A paused rollout is
planned as if resumed.

The manager's SkipMachinePoolModelReconciliation feature gate cannot be read from
the cluster: pass --skip-model-reconciliation when the manager runs with it.`,
		Args: cobra.ExactArgs(1),
	}
	fs := cmd.Flags()
	fs.BoolVar(&o.skip, "skip-model-reconciliation", false,
		"Plan as a manager with the SkipMachinePoolModelReconciliation feature gate does: stale instances are neither replaced nor preferred for deletion")
	o.output = addOutputFlag(fs)
	o.color = addColorFlag(fs)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		mc, err := cf.connect()
		if err != nil {
			return err
		}
		v, err := PlanRollout(cmd.Context(), mc, mc.namespace, args[0], PlanOptions{SkipModelReconciliation: o.skip, Now: clk.Now()})
		if err != nil {
			return err
		}
		w := cmd.OutOrStdout()
		if *o.output != "" {
			return writeStructured(w, *o.output, v)
		}
		_, err = io.WriteString(w, formatRolloutPlan(v, o.color.palette(w)))
		return err
	}
	return cmd
}

// planInputs is what PlanRollout read.
type planInputs struct {
	mp      *clusterv1.MachinePool
	adapter contract.Adapter
	pool    contract.Pool
	rollout contract.RolloutView
	// observed is the pool's status.observedGeneration.
	observed int64
	// gate is the SkipMachinePoolModelReconciliation feature gate the plan
	// assumes.
	gate  bool
	state preview.State
	notes []string
}

// PlanRollout reads the MachinePool ns/name and what its controllers last
// reported, and runs the rollout planner on it as the engine would, paused
// or not: the next step, then the steps projected by
// preview.Project, with the pool's revision and when its rollout stops
// itself. It changes nothing.
func PlanRollout(ctx context.Context, c client.Client, ns, name string, o PlanOptions) (*RolloutPlanView, error) {
	r, err := readPlanInputs(ctx, c, ns, name, o)
	if err != nil {
		return nil, err
	}
	in, err := preview.Input(r.state)
	if err != nil {
		return nil, err
	}
	waves, converged, err := preview.Project(in, 0)
	if err != nil {
		return nil, fmt.Errorf("planning the rollout of machinepool %s/%s: %w", ns, name, err)
	}
	hold, window, werr := preview.WindowHold(o.Now, r.mp, r.pool)
	if werr != nil {
		r.notes = append(r.notes, werr.Error())
	}
	if hold != "" && !r.rollout.CloudRollouts {
		// The next step is the engine's now; the steps after it assume the
		// window opens.
		held := in
		held.HoldStale = hold
		first, _, err := preview.Project(held, 1)
		if err != nil {
			return nil, fmt.Errorf("planning the rollout of machinepool %s/%s: %w", ns, name, err)
		}
		waves = append(first, waves...)
		if !first[0].Result.Done {
			r.notes = append(r.notes, "Stale instances wait for the maintenance window: the steps after the next assume it is open")
		}
	}
	v := planView(r, in, waves, converged)
	disruptionView(v, r, window, o.Now)
	blueGreenView(v, r)
	if err := stopsView(ctx, c, v, r); err != nil {
		return nil, err
	}
	return v, nil
}

// stopsView fills in the pool's revision and when its rollout stops
// itself: the progress policy, and for an automatic rollback the revision
// the engine would restore (the newest of another model; none when the
// current model is itself a rollback).
func stopsView(ctx context.Context, c client.Client, v *RolloutPlanView, r *planInputs) error {
	if r.rollout.CloudRollouts {
		return nil
	}
	policy, err := preview.ReadProgressPolicy(r.mp, r.pool)
	if err != nil {
		v.Notes = append(v.Notes, err.Error())
	}
	stops := &PlanStopsView{ProgressDeadline: "off", MaxFailedReplacements: policy.MaxFailed, AutoRollback: preview.AutoRollback(r.mp, r.pool)}
	if policy.Deadline > 0 {
		stops.ProgressDeadline = policy.Deadline.String()
	}
	v.Stops = stops
	revs, err := history.List(ctx, c, r.mp)
	if err != nil {
		return fmt.Errorf("reading the revisions of machinepool %s/%s: %w", r.mp.Namespace, r.mp.Name, err)
	}
	v.Revisions = len(revs)
	if len(revs) == 0 {
		return nil
	}
	cur := revs[len(revs)-1]
	v.Revision = &PlanRevisionView{Number: cur.Number, ModelHash: cur.ModelHash}
	if rb, ok := preview.ParseRollBack(r.pool.GetAnnotations()[preview.RolledBackAnnotation]); ok && rb.To == cur.ModelHash {
		return nil
	}
	for i := len(revs) - 2; i >= 0; i-- {
		if revs[i].ModelHash != cur.ModelHash {
			stops.RollbackTo = &PlanRevisionView{Number: revs[i].Number, ModelHash: revs[i].ModelHash}
			break
		}
	}
	return nil
}

// blueGreenView fills in the pool's blue-green rollout: its phase, peak
// and quota need, batches and soaks, and the phases to come.
func blueGreenView(v *RolloutPlanView, r *planInputs) {
	settings, err := preview.ReadBlueGreen(r.mp, r.pool)
	if err != nil {
		v.Notes = append(v.Notes, err.Error())
	}
	if settings == nil || r.rollout.CloudRollouts {
		return
	}
	bg := &PlanBlueGreenView{Blue: v.Stale, BatchSoak: settings.BatchSoak.String(), PoolSoak: settings.PoolSoak.String()}
	rec, inProgress := preview.ParseBlueGreen(r.pool.GetAnnotations()[preview.BlueGreenAnnotation])
	if inProgress {
		bg.Phase, bg.BlueModel, bg.GreenModel = string(rec.Phase), rec.Blue, rec.Green
		bg.Since = &metav1.Time{Time: rec.Since.UTC()}
	}
	if bg.Blue == 0 && !inProgress {
		bg.Blue = v.Replicas
	}
	bg.PeakInstances = bg.Blue + v.Desired
	bg.QuotaNeed = max(0, bg.PeakInstances-v.Replicas)
	bg.BatchSize, _ = settings.BatchCount(bg.Blue)
	batches := (bg.Blue + bg.BatchSize - 1) / max(bg.BatchSize, 1)
	all := []struct {
		phase rollout.BlueGreenPhase
		what  string
	}{
		{rollout.PhaseCreatingGreen, fmt.Sprintf("create %d instances of the new model beside the %d blue ones (peak %d instances: the cloud's quota must allow %d more than the pool has now); nothing is deleted", v.Desired, bg.Blue, bg.PeakInstances, bg.QuotaNeed)},
		{rollout.PhaseCordoningBlue, fmt.Sprintf("once every green instance is available, cordon the %d blue Nodes", bg.Blue)},
		{rollout.PhaseDrainingBlue, fmt.Sprintf("drain them in %d batches of %d, soaking %s after each", batches, bg.BatchSize, bg.BatchSoak)},
		{rollout.PhaseSoaking, fmt.Sprintf("keep the drained blue instances for %s ('mpool rollout undo %s' rolls back: the blue Nodes serve again, the green ones are drained and deleted)", bg.PoolSoak, r.mp.Name)},
		{rollout.PhaseDeletingBlue, "delete the blue instances"},
	}
	started := !inProgress
	for _, p := range all {
		if inProgress && p.phase == rec.Phase {
			started = true
		}
		if started {
			bg.Phases = append(bg.Phases, string(p.phase)+": "+p.what)
		}
	}
	if inProgress && rec.Phase == rollout.PhaseRollingBack {
		bg.Phases = []string{string(rollout.PhaseRollingBack) + ": the blue Nodes serve again; the green instances are drained and deleted within the budgets"}
	}
	v.BlueGreen = bg
	v.Notes = append(v.Notes, "The pool's strategy is BlueGreen: the blue-green phases are listed under 'blue-green'; the steps below are the rolling planner's, which the blue-green rollout uses only to delete the old set at the end (or the new one on a rollback)")
}

// disruptionView fills in what bounds the rollout's disruption: the
// maintenance window, the undrainable-node behavior and the drains in
// flight, the quarantined instances, and a pause the engine set.
func disruptionView(v *RolloutPlanView, r *planInputs, w *preview.MaintenanceWindow, now time.Time) {
	if w != nil {
		open, until := w.At(now)
		v.MaintenanceWindow = &PlanWindowView{Schedule: w.Schedule, Duration: w.Duration.String(), Open: open}
		if !until.IsZero() {
			v.MaintenanceWindow.Until = &metav1.Time{Time: until.UTC()}
		}
	}
	behavior, err := preview.ReadUndrainableNodeBehavior(r.mp, r.pool)
	if err != nil {
		r.notes = append(r.notes, err.Error())
		v.Notes = r.notes
	}
	v.UndrainableNodeBehavior = string(behavior)
	timeout := preview.NodeDrainTimeout(r.mp)
	if timeout > 0 {
		v.NodeDrainTimeout = timeout.String()
	}
	if reason, msg := preview.SelfPaused(r.pool.GetAnnotations()); reason != "" {
		v.PausedBy = reason + ": " + msg
	}
	for i := range r.state.Instances {
		p := &r.state.Instances[i]
		a := p.ObjectMeta.Annotations
		started, err := time.Parse(time.RFC3339, a[preview.DrainStartedAnnotation])
		if err != nil {
			continue
		}
		d := PlanDrainView{Name: p.ObjectMeta.Name, Started: metav1.Time{Time: started}, Then: "deleted anyway (DrainTimeout)"}
		if timeout > 0 {
			d.TimesOutAt = &metav1.Time{Time: started.Add(timeout)}
		} else {
			d.Then = "waits: no nodeDrainTimeout"
		}
		rollingOut := p.Reported && !p.UpToDate && !preview.HasAnnotation(a, clusterv1.DeleteMachineAnnotation)
		switch {
		case timeout == 0 || !rollingOut:
		case behavior == preview.UndrainableSchedule:
			d.Then = "kept, its Node schedulable again, and the rollout paused (DrainBlocked)"
		case behavior == preview.UndrainableCordon:
			d.Then = "kept cordoned and quarantined; the rollout goes on without it"
		}
		v.Draining = append(v.Draining, d)
	}
}

func readPlanInputs(ctx context.Context, c client.Client, ns, name string, o PlanOptions) (*planInputs, error) {
	mp := &clusterv1.MachinePool{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, mp); err != nil {
		return nil, notFound(err, "machinepool", ns, name)
	}
	r := &planInputs{mp: mp}
	ref := mp.Spec.Template.Spec.InfrastructureRef
	id := fmt.Sprintf("%s %s/%s", ref.Kind, ns, ref.Name)
	r.adapter = adapterOf(ref)
	if r.adapter == nil {
		return nil, fmt.Errorf("%s is of a kind no provider of mpool serves: the plan is the engine's, which drives only mpool's kinds", id)
	}
	r.pool = r.adapter.NewPool()
	switch err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, r.pool); {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("%s not found: nothing to plan", id)
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", id, err)
	}
	view, err := r.adapter.ReadPool(r.pool)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	r.rollout, r.observed, r.gate = view.Rollout, view.ObservedGeneration, o.SkipModelReconciliation
	r.state = preview.State{
		MachinePool:             mp,
		PoolUID:                 r.pool.GetUID(),
		PoolAnnotations:         r.pool.GetAnnotations(),
		Strategy:                view.Rollout.Strategy,
		InstanceKind:            r.adapter.Kinds().Instance,
		SkipModelReconciliation: o.SkipModelReconciliation || view.Rollout.CloudRollouts || view.Rollout.SkipModelReconciliation != "",
		Now:                     o.Now,
	}
	if r.rollout.CloudRollouts {
		r.notes = append(r.notes, fmt.Sprintf("The cloud replaces out-of-date instances of %s itself (%s): the engine picks no victims for drift, and the steps below show only what it does for replicas and deletion marks", id, r.rollout.Source))
	}
	if why := r.rollout.SkipModelReconciliation; why != "" {
		r.notes = append(r.notes, fmt.Sprintf("%s keeps its out-of-date instances: %s", id, why))
	}
	if err := r.readInstances(ctx, c); err != nil {
		return nil, err
	}
	machines := &clusterv1.MachineList{}
	if err := c.List(ctx, machines, client.InNamespace(ns), client.MatchingLabels{clusterv1.MachinePoolNameLabel: capi.LabelValue(name)}); err != nil {
		return nil, fmt.Errorf("listing the Machines of machinepool %s/%s: %w", ns, name, err)
	}
	r.state.Machines = machines.Items
	r.readNodes(ctx, c)
	r.notePaused(ctx, c, id)
	if g, obs := r.pool.GetGeneration(), r.observed; obs < g {
		r.notes = append(r.notes, fmt.Sprintf("The %s controller has not observed generation %d yet (observed %d): the plan may not reflect its latest spec", ref.Kind, g, obs))
	}
	if g, obs := mp.Generation, mp.Status.ObservedGeneration; obs < g {
		r.notes = append(r.notes, fmt.Sprintf("The MachinePool controller has not observed generation %d yet (observed %d): the instances' models may not be reported against the latest spec", g, obs))
	}
	return r, nil
}

// notePaused notes the pauses that stop the engine altogether, beyond the
// rollout's: a paused Cluster, or the cluster.x-k8s.io/paused annotation on
// the infrastructure pool (id).
func (r *planInputs) notePaused(ctx context.Context, c client.Client, id string) {
	if r.pool.GetAnnotations()[clusterv1.PausedAnnotation] == "true" {
		r.notes = append(r.notes, fmt.Sprintf("%s carries %s: the engine does nothing until it is removed", id, clusterv1.PausedAnnotation))
	}
	cluster := &clusterv1.Cluster{}
	key := types.NamespacedName{Namespace: r.mp.Namespace, Name: r.mp.Spec.ClusterName}
	if err := c.Get(ctx, key, cluster); err == nil && ptr.Deref(cluster.Spec.Paused, false) {
		r.notes = append(r.notes, fmt.Sprintf("Cluster %s is paused: the engine does nothing until it is resumed", key))
	}
}

// readInstances lists the per-instance objects the engine keeps for the
// pool — labelled with the MachinePool's name and controlled by the pool —
// as the pool's provider reads them.
func (r *planInputs) readInstances(ctx context.Context, c client.Client) error {
	kind := r.adapter.Kinds().Instance
	list := r.adapter.NewInstanceList()
	if err := c.List(ctx, list, client.InNamespace(r.mp.Namespace), client.MatchingLabels{clusterv1.MachinePoolNameLabel: capi.LabelValue(r.mp.Name)}); err != nil {
		return fmt.Errorf("listing the %ss of machinepool %s/%s: %w", kind, r.mp.Namespace, r.mp.Name, err)
	}
	var foreign []string
	err := meta.EachListItem(list, func(o runtime.Object) error {
		obj := o.(contract.InstanceObject)
		if owner := contract.PoolOwner(obj, r.adapter.Kinds().Pool); owner == nil || owner.UID != r.pool.GetUID() {
			foreign = append(foreign, obj.GetName())
			return nil
		}
		m, err := objectMeta(obj)
		if err != nil {
			return err
		}
		r.state.Instances = append(r.state.Instances, preview.Instance{ObjectMeta: m, InstanceView: r.adapter.ReadInstance(obj)})
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading the %ss of machinepool %s/%s: %w", kind, r.mp.Namespace, r.mp.Name, err)
	}
	if len(foreign) > 0 {
		slices.Sort(foreign)
		r.notes = append(r.notes, fmt.Sprintf("Left out %s that %s %s does not control, as the engine does: %s",
			plural(len(foreign), kind), r.mp.Spec.Template.Spec.InfrastructureRef.Kind, r.pool.GetName(), strings.Join(foreign, ", ")))
	}
	return nil
}

// objectMeta is obj's metadata, which the preview reads: every kind of
// mpool's embeds metav1.ObjectMeta.
func objectMeta(obj contract.InstanceObject) (metav1.ObjectMeta, error) {
	a, ok := obj.(metav1.ObjectMetaAccessor)
	if !ok {
		return metav1.ObjectMeta{}, fmt.Errorf("%T has no ObjectMeta", obj)
	}
	m, ok := a.GetObjectMeta().(*metav1.ObjectMeta)
	if !ok {
		return metav1.ObjectMeta{}, fmt.Errorf("%T has no ObjectMeta", obj)
	}
	return *m, nil
}

// readNodes reads the workload cluster's Nodes; when they cannot be read,
// readiness comes from the per-instance objects.
func (r *planInputs) readNodes(ctx context.Context, c client.Client) {
	wanted := false
	for _, in := range r.state.Instances {
		wanted = wanted || in.ProviderID != ""
	}
	if !wanted {
		return
	}
	cluster := types.NamespacedName{Namespace: r.mp.Namespace, Name: r.mp.Spec.ClusterName}
	nodes, err := workloadNodes(ctx, c, cluster)
	if err != nil {
		r.notes = append(r.notes, fmt.Sprintf("Nodes of cluster %s not read (%v): readiness comes from the per-instance objects", cluster, err))
		return
	}
	r.state.Nodes = nodesByProviderID(nodes)
}

// planView renders the planner's waves for people and scripts.
func planView(r *planInputs, in rollout.Input, waves []preview.Wave, converged bool) *RolloutPlanView {
	first := waves[0].Result
	cnt := first.Counts
	v := &RolloutPlanView{
		Namespace:               r.mp.Namespace,
		Name:                    r.mp.Name,
		ComputedFrom:            planComputedFrom,
		Paused:                  preview.RolloutPaused(r.mp, r.pool.GetAnnotations()),
		SkipModelReconciliation: r.gate,
		BudgetFrom:              r.rollout.Source,
		CloudRollouts:           r.rollout.CloudRollouts,
		Desired:                 in.Desired,
		DeletePolicy:            string(in.Strategy.DeletePolicy),
		MinReadySeconds:         in.Strategy.MinReadySeconds,
		MaxSurge:                first.MaxSurge,
		MaxUnavailable:          first.MaxUnavailable,
		Replicas:                cnt.Replicas,
		UpToDate:                cnt.UpToDate,
		Stale:                   cnt.Stale,
		Quarantined:             cnt.Quarantined,
		Ready:                   cnt.Ready,
		Available:               cnt.Available,
		Unavailable:             cnt.Unavailable,
		SurgeInUse:              max(0, cnt.Replicas-in.Desired),
		Failed:                  cnt.Failed,
		Deleting:                cnt.Deleting,
		Marked:                  cnt.Marked,
		Converges:               converged,
		Notes:                   r.notes,
	}
	if v.DeletePolicy == "" {
		v.DeletePolicy = string(rollout.DeletePolicyOldest)
	}
	byID := make(map[string]*preview.Instance, len(r.state.Instances))
	for i := range r.state.Instances {
		byID[r.state.Instances[i].ID()] = &r.state.Instances[i]
	}
	v.Next = stepView(waves[0], byID)
	for _, w := range waves[1:] {
		if w.Result.Done {
			break
		}
		v.Then = append(v.Then, stepView(w, byID))
	}
	return v
}

func stepView(w preview.Wave, byID map[string]*preview.Instance) PlanStepView {
	s := PlanStepView{TargetCapacity: w.Result.TargetCapacity, Create: w.Create, Done: w.Result.Done}
	for _, victim := range w.Result.Delete {
		d := PlannedDeletionView{Reason: string(victim.Reason), Why: deletionWhy(victim.Reason)}
		if p := byID[victim.ID]; p != nil {
			d.Name, d.InstanceID, d.Zone = p.ObjectMeta.Name, victim.ID, p.Zone
		} else {
			d.New = preview.IsNewInstance(victim.ID)
		}
		s.Delete = append(s.Delete, d)
	}
	for _, wait := range w.Result.Waiting {
		s.Waiting = append(s.Waiting, PlanWaitView{Reason: string(wait.Reason), Message: wait.Message})
	}
	return s
}

// deletionWhy explains a planner's deletion reason.
func deletionWhy(r rollout.DeleteReason) string {
	switch r {
	case rollout.ReasonFailed:
		return "failed: the cloud gave up on it"
	case rollout.ReasonDeleting:
		return "removal already started: draining and deleting it goes on"
	case rollout.ReasonMarked:
		return "marked for deletion (" + clusterv1.DeleteMachineAnnotation + ")"
	case rollout.ReasonStale:
		return "stale model: replaced by an instance on the current model"
	case rollout.ReasonExcess:
		return "scale down: more instances than desired"
	case rollout.ReasonRemediate:
		return "unhealthy: a MachineHealthCheck asks for its remediation (replaced by a new instance)"
	default:
		return string(r)
	}
}

// formatRolloutPlan renders a plan as text.
func formatRolloutPlan(v *RolloutPlanView, p palette) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", p.paint(fmt.Sprintf("machinepool %s/%s", v.Namespace, v.Name), bold), "rollout plan (dry run: nothing is changed)")
	b.WriteString(p.paint("  computed from the state last reported to the API server, not read from the cloud", faint) + "\n")
	line := func(label, text string) { fmt.Fprintf(&b, "  %-12s %s\n", label, text) }
	if v.Paused {
		line("paused", p.paint("yes", warn)+fmt.Sprintf(": planned as if resumed ('mpool rollout resume %s')", v.Name))
	}
	if v.SkipModelReconciliation {
		line("feature gate", "SkipMachinePoolModelReconciliation: stale instances are kept")
	}
	if v.PausedBy != "" {
		line("paused by", p.paint(v.PausedBy, warn))
	}
	if v.BudgetFrom != "" {
		line("budget from", v.BudgetFrom)
	}
	if w := v.MaintenanceWindow; w != nil {
		state := "closed"
		if w.Open {
			state = "open"
		}
		if w.Until != nil {
			when := "opens"
			if w.Open {
				when = "closes"
			}
			state += fmt.Sprintf(" (%s %s)", when, w.Until.UTC().Format(time.RFC3339))
		}
		line("window", fmt.Sprintf("%q for %s: %s", w.Schedule, w.Duration, state))
	}
	drainTimeout := "no nodeDrainTimeout: drains wait until done"
	if v.NodeDrainTimeout != "" {
		drainTimeout = "after nodeDrainTimeout " + v.NodeDrainTimeout
	}
	if v.UndrainableNodeBehavior != string(preview.UndrainableDelete) || len(v.Draining) > 0 {
		line("undrainable", fmt.Sprintf("%s (%s)", v.UndrainableNodeBehavior, drainTimeout))
	}
	for _, d := range v.Draining {
		at := ""
		if d.TimesOutAt != nil {
			at = " until " + d.TimesOutAt.UTC().Format(time.RFC3339)
		}
		line("draining", fmt.Sprintf("%s since %s%s, then %s", d.Name, d.Started.UTC().Format(time.RFC3339), at, d.Then))
	}
	if bg := v.BlueGreen; bg != nil {
		state := "none in progress; a model change does"
		if bg.Phase != "" {
			state = fmt.Sprintf("%s since %s (blue model %s, green model %s); to come", bg.Phase, bg.Since.UTC().Format(time.RFC3339), bg.BlueModel, bg.GreenModel)
		}
		line("blue-green", state+":")
		for _, ph := range bg.Phases {
			line("", "- "+ph)
		}
	}
	if v.Quarantined > 0 {
		line("quarantined", p.paint(plural(int(v.Quarantined), "instance")+" left cordoned (not drained), out of the plan", warn))
	}
	if v.Revision != nil {
		line("revision", fmt.Sprintf("%d (model %s), %s in the history ('mpool rollout history %s')", v.Revision.Number, v.Revision.ModelHash, plural(v.Revisions, "revision"), v.Name))
	}
	if st := v.Stops; st != nil {
		var when []string
		if st.ProgressDeadline != "off" {
			when = append(when, "no progress for "+st.ProgressDeadline)
		}
		if st.MaxFailedReplacements > 0 {
			when = append(when, fmt.Sprintf("%d new instances failed in a row", st.MaxFailedReplacements))
		}
		then := "pauses"
		switch {
		case st.AutoRollback && st.RollbackTo != nil:
			then = fmt.Sprintf("rolls back to revision %d (model %s)", st.RollbackTo.Number, st.RollbackTo.ModelHash)
		case st.AutoRollback:
			then = "pauses (automatic rollback on, but no other model to roll back to)"
		}
		if len(when) == 0 {
			line("stops", "never by itself (progress deadline and failure limit off)")
		} else {
			line("stops", fmt.Sprintf("after %s: %s", strings.Join(when, " or "), then))
		}
	}
	line("desired", fmt.Sprintf("%d (deletePolicy %s, minReadySeconds %d)", v.Desired, v.DeletePolicy, v.MinReadySeconds))
	upToDate := fmt.Sprintf("%d of %d", v.UpToDate, v.Desired)
	if v.Stale > 0 {
		upToDate += p.paint(fmt.Sprintf(" (%d stale)", v.Stale), warn)
	}
	line("up to date", upToDate)
	replicas := fmt.Sprintf("%d, surge in use %d of max %d", v.Replicas, v.SurgeInUse, v.MaxSurge)
	var gone []string
	if v.Marked > 0 {
		gone = append(gone, fmt.Sprintf("%d marked for deletion", v.Marked))
	}
	if v.Deleting > 0 {
		gone = append(gone, fmt.Sprintf("%d being removed", v.Deleting))
	}
	if v.Failed > 0 {
		gone = append(gone, p.paint(fmt.Sprintf("%d failed", v.Failed), bad))
	}
	if len(gone) > 0 {
		replicas += "; " + strings.Join(gone, ", ")
	}
	line("replicas", replicas)
	unavailable := fmt.Sprintf("unavailable %d of max %d", v.Unavailable, v.MaxUnavailable)
	if v.Unavailable > v.MaxUnavailable {
		unavailable = p.paint(unavailable, warn)
	}
	line("available", fmt.Sprintf("%d of %d, %s", v.Available, v.Desired, unavailable))

	if v.Next.Done {
		b.WriteString(p.paint("nothing to do: every desired replica is up to date and available", good) + "\n")
	} else {
		b.WriteString(p.paint("next step:", bold) + "\n")
		writeStep(&b, v.Next, "  ", p)
	}
	if len(v.Then) > 0 {
		b.WriteString(p.paint("then, if every new instance becomes available and every removal completes:", bold) + "\n")
		for i, s := range v.Then {
			if i == maxProjectedSteps {
				fmt.Fprintf(&b, "  ... %s\n", plural(len(v.Then)-i, "more step"))
				break
			}
			fmt.Fprintf(&b, "  step %d:\n", i+2)
			writeStep(&b, s, "    ", p)
		}
	}
	switch {
	case v.Next.Done:
	case v.Converges:
		b.WriteString(p.paint(fmt.Sprintf("the rollout completes after %s", plural(len(v.Then)+1, "step")), good) + "\n")
	default:
		b.WriteString(p.paint("the rollout does not complete on its own: see what the last step waits for", warn) + "\n")
	}
	for _, n := range v.Notes {
		b.WriteString(p.paint("note: "+n, warn) + "\n")
	}
	return b.String()
}

func writeStep(b *strings.Builder, s PlanStepView, indent string, p palette) {
	create := "create nothing"
	if s.Create > 0 {
		create = p.paint("create "+plural(int(s.Create), "instance"), good) + " on the current model"
	}
	fmt.Fprintf(b, "%starget capacity %d: %s\n", indent, s.TargetCapacity, create)
	if len(s.Delete) == 0 {
		fmt.Fprintf(b, "%sdelete nothing\n", indent)
	}
	for _, d := range s.Delete {
		what := "a new instance"
		if !d.New {
			what = d.Name
			var detail []string
			if d.InstanceID != "" && d.InstanceID != d.Name {
				detail = append(detail, "instance "+d.InstanceID)
			}
			if d.Zone != "" {
				detail = append(detail, d.Zone)
			}
			if len(detail) > 0 {
				what += " (" + strings.Join(detail, ", ") + ")"
			}
		}
		st := warn
		if d.Reason == string(rollout.ReasonFailed) {
			st = bad
		}
		fmt.Fprintf(b, "%sdelete %s: %s\n", indent, what, p.paint(d.Why, st))
	}
	if len(s.Waiting) > 0 {
		fmt.Fprintf(b, "%sheld back by:\n", indent)
	}
	for _, w := range s.Waiting {
		fmt.Fprintf(b, "%s- %s\n", indent, p.paint(w.Message, warn))
	}
}

// plural returns "1 thing" or "n things".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
