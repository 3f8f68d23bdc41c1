package rollout

import (
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// DeletePolicy orders the instances that are removed when none of the stronger
// reasons (failed, marked, not ready, stale) decides. It mirrors the
// deletePolicy field of AzureMachinePool's rolling update strategy.
type DeletePolicy string

const (
	// DeletePolicyOldest removes the instance created first. It is the default.
	DeletePolicyOldest DeletePolicy = "Oldest"
	// DeletePolicyNewest removes the instance created last.
	DeletePolicyNewest DeletePolicy = "Newest"
	// DeletePolicyRandom removes instances in an order drawn from Input.RandSeed.
	DeletePolicyRandom DeletePolicy = "Random"
)

// Strategy is a pool's rolling update strategy.
type Strategy struct {
	// MaxSurge is how many instances may exist above Desired while instances are
	// replaced: an integer, or a percentage of Desired rounded up. Nil means 1.
	MaxSurge *intstr.IntOrString
	// MaxUnavailable is how many of Desired may be unavailable because the
	// planner deleted them: an integer, or a percentage of Desired rounded down.
	// Nil means 0.
	MaxUnavailable *intstr.IntOrString
	// DeletePolicy breaks ties among instances to delete. Empty means Oldest.
	DeletePolicy DeletePolicy
	// MinReadySeconds is how long an instance must have been Ready before it
	// counts as available.
	MinReadySeconds int32
}

// InstanceState is the lifecycle state of a cloud instance as the provider sees it.
type InstanceState string

const (
	// StatePending covers every state before the instance runs: requested,
	// creating, booting.
	StatePending InstanceState = "Pending"
	// StateRunning is an instance the cloud reports as running. Whether it
	// serves workloads is told by Instance.ReadySince.
	StateRunning InstanceState = "Running"
	// StateFailed is an instance the cloud gave up on. It is always deleted.
	StateFailed InstanceState = "Failed"
	// StateDeleting is an instance whose removal has started (drain or cloud
	// delete). The planner lists it again so that an interrupted removal resumes.
	StateDeleting InstanceState = "Deleting"
)

// Instance is one observed member of the scale group.
type Instance struct {
	// ID identifies the instance within its group. It must be unique and not empty.
	ID string
	// Zone is where the instance runs. It is informational: the planner does not
	// balance zones, the cloud's scale group places new instances.
	Zone string
	// CreatedAt orders instances for DeletePolicyOldest and DeletePolicyNewest.
	CreatedAt time.Time
	// ModelHash is the hash of the model the instance was created from.
	ModelHash string
	// ReadySince is when the instance's Node last became Ready; nil when it is
	// not Ready (no Node yet, or NotReady).
	ReadySince *time.Time
	// State is the cloud's view of the instance.
	State InstanceState
	// MarkedForDeletion is set when the instance's Machine carries the
	// cluster.x-k8s.io/delete-machine annotation or is being deleted.
	MarkedForDeletion bool
	// Remediate is set when a MachineHealthCheck found the instance unhealthy
	// and left its remediation to the owner (the Machine's HealthCheckSucceeded
	// and OwnerRemediated conditions are False). A live instance to remediate
	// is replaced like a marked one, first, within the budgets and within
	// Input.MaxRemediationsInFlight. On a Deleting instance it says that the
	// removal is a remediation still in flight, counted against that cap.
	Remediate bool
	// Quarantined is set on an instance whose Node could not be drained
	// during a rollout and was left cordoned (the pool's undrainable-node
	// behavior Cordon). Unless it is marked for deletion or to be
	// remediated, the planner leaves it out: it is neither counted among
	// the replicas, nor replaced, nor deleted, so the rest of the pool
	// rolls and reaches Desired without it.
	Quarantined bool
}

// Input is everything the planner needs, observed at one moment.
type Input struct {
	// Desired is the number of instances the pool asks for.
	Desired int32
	// Strategy is the pool's rolling update strategy.
	Strategy Strategy
	// ModelHash is the hash of the pool's current instance model. Instances with
	// another hash are stale.
	ModelHash string
	// Instances is the whole group, in any order.
	Instances []Instance
	// SkipModelReconciliation is the SkipMachinePoolModelReconciliation feature
	// gate: stale instances are neither replaced nor preferred for deletion.
	SkipModelReconciliation bool
	// Paused stops every action; the result only reports.
	Paused bool
	// Now is the time of the observation; availability is computed against it.
	Now time.Time
	// RandSeed drives DeletePolicyRandom. Keep it stable for a pool (derive it
	// from the pool's UID) so that the same instances are chosen on every
	// reconcile.
	RandSeed int64
	// MaxRemediationsInFlight caps the remediations in flight: Deleting
	// instances with Remediate set plus the remediations this plan starts.
	// Nil means no cap beyond the budgets, as a MachineDeployment without
	// spec.remediation.maxInFlight.
	MaxRemediationsInFlight *int32
	// HoldStale, when not empty, says why stale instances are not replaced
	// now (the pool's maintenance window is closed, and until when): they
	// are kept like up-to-date ones, no surge is added for them, and the
	// plan waits with WaitWindow and this message. Instances already being
	// removed still go, as do failed, marked and unhealthy ones, and the
	// pool still scales to Desired; up-to-date instances beyond Desired
	// stay up to maxSurge (the surge of the replacement in progress), and
	// only instances beyond that are removed as excess.
	HoldStale string
}

// DeleteReason says why an instance is to be deleted.
type DeleteReason string

const (
	// ReasonFailed: the cloud reports the instance as failed.
	ReasonFailed DeleteReason = "Failed"
	// ReasonDeleting: the removal already started and must be completed.
	ReasonDeleting DeleteReason = "Deleting"
	// ReasonMarked: the instance carries the delete-machine mark.
	ReasonMarked DeleteReason = "Marked"
	// ReasonStale: the instance runs an old model and is being replaced.
	ReasonStale DeleteReason = "Stale"
	// ReasonExcess: the group has more instances than it should.
	ReasonExcess DeleteReason = "Excess"
	// ReasonRemediate: a MachineHealthCheck found the instance unhealthy.
	ReasonRemediate DeleteReason = "Remediate"
)

// Victim is an instance the applier should cordon, drain and delete.
type Victim struct {
	// ID is the instance's Instance.ID.
	ID string
	// Reason is why it goes.
	Reason DeleteReason
}

// WaitReason names what keeps the pool from converging right now. The values
// are fit for a condition's Reason.
type WaitReason string

const (
	// WaitPaused: the pool is paused; nothing is done.
	WaitPaused WaitReason = "Paused"
	// WaitBudget: instances that should go are held back by maxUnavailable.
	WaitBudget WaitReason = "BudgetExhausted"
	// WaitSurge: more up-to-date instances are wanted but the group is at
	// desired + maxSurge.
	WaitSurge WaitReason = "SurgeExhausted"
	// WaitAvailable: instances kept by the plan are not available yet (booting,
	// not Ready, or Ready for less than minReadySeconds).
	WaitAvailable WaitReason = "WaitingForAvailable"
	// WaitRemediation: unhealthy instances wait because as many remediations
	// as Input.MaxRemediationsInFlight allows are in flight.
	WaitRemediation WaitReason = "RemediationDeferred"
	// WaitWindow: stale instances wait for the pool's maintenance window
	// (Input.HoldStale).
	WaitWindow WaitReason = "OutsideMaintenanceWindow"
)

// Wait is one thing the pool waits for, with a message for humans.
type Wait struct {
	// Reason is the machine-readable kind of wait.
	Reason WaitReason
	// Message explains it with numbers, e.g. "budget exhausted: 1 unavailable of max 1, 2 still to delete".
	Message string
}

// Counts describes the observed group, before the plan is applied.
type Counts struct {
	// Replicas is the number of live instances: neither failed nor deleting.
	Replicas int32
	// UpToDate is the number of live instances on the current model.
	UpToDate int32
	// Stale is the number of live instances on another model. It is reported
	// even when SkipModelReconciliation is set.
	Stale int32
	// Ready is the number of live instances whose Node is Ready.
	Ready int32
	// Available is the number of live instances Ready for at least MinReadySeconds.
	Available int32
	// Unavailable is max(0, Desired-Available): how many instances the pool is
	// short of full available capacity, as MachinePool's status reports it.
	Unavailable int32
	// Failed is the number of failed instances.
	Failed int32
	// Deleting is the number of instances whose removal has started.
	Deleting int32
	// Marked is the number of live instances carrying the delete-machine mark.
	Marked int32
	// Unhealthy is the number of live instances to remediate (Remediate set).
	Unhealthy int32
	// Remediating is the number of Deleting instances whose removal is a
	// remediation.
	Remediating int32
	// Quarantined is the number of quarantined instances left out of the
	// plan (see Instance.Quarantined); they are in none of the other counts.
	Quarantined int32
}

// Result is what the planner decided. It is named Result because Plan is the
// function that computes it.
type Result struct {
	// TargetCapacity is how many live instances the group should have once the
	// victims are gone, counting surge. It is never less than the live instances
	// the plan keeps, so the applier creates TargetCapacity minus those, on the
	// current model, and never lets the cloud pick victims. Unless paused it is
	// at most Desired + MaxSurge.
	TargetCapacity int32
	// Delete lists the instances to remove, in the order they should go.
	Delete []Victim
	// Waiting lists what keeps the pool from converging; empty when nothing does.
	Waiting []Wait
	// Counts describes the observed group.
	Counts Counts
	// MaxSurge is Strategy.MaxSurge resolved against Desired.
	MaxSurge int32
	// MaxUnavailable is Strategy.MaxUnavailable resolved against Desired.
	MaxUnavailable int32
	// SurgeInUse is max(0, TargetCapacity-Desired).
	SurgeInUse int32
	// Done reports convergence: exactly Desired live instances, all available,
	// none marked, none failed or deleting, and all on the current model unless
	// SkipModelReconciliation is set.
	Done bool
	// RequeueAfter, when not zero, is when the next Ready instance becomes
	// available (reaches MinReadySeconds), which may unblock the plan.
	RequeueAfter time.Duration
	// Deferred lists the unhealthy instances not remediated now because
	// MaxRemediationsInFlight remediations are in flight, sorted.
	Deferred []string
}
