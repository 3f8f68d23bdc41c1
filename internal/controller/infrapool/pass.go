package infrapool

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/internal/drain"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/rollout"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// pass is one reconcile of one pool: what was read, decided and done. The
// phases fill it in order; report and the deferred patch read it.
type pass struct {
	pool   contract.Pool
	before contract.Pool // as read (or as last patched), the base of the patches
	now    time.Time
	group  scalegroup.Ref // the scale group's reference, once known
	// refKnown: group is known (recorded on the pool, or derived from it
	// alone); refErr: the recorded reference could not be read.
	refKnown bool
	refErr   error
	// placed: this pass derived group and set it on the pool, for
	// storeBeforeCloud to record.
	placed bool

	// halt stops the phases after the current one (and act after a
	// refused deletion); report still runs.
	halt bool
	// quiet: the pass writes no status (a new pool waiting for its
	// owner, ownerQuiet, or waiting quietly, waitsQuietly);
	// statusDeferred: the status waits for a bulk pass (waitsQuietly).
	quiet, statusDeferred bool
	// afterPatch, when set, runs once the pool is patched: the writes to
	// the per-instance objects (see report).
	afterPatch func(context.Context) error

	// From the owner MachinePool.
	owner     *clusterv1.MachinePool
	cluster   types.NamespacedName
	infra     client.Object // the Cluster's infrastructure object, for adapters that read one
	replicas  int32
	managedBy string // who manages the replicas (replicas-managed-by), "" when the MachinePool does
	paused    bool   // the rollout pause annotation
	bootstrap bool   // bootstrap data is available
	desired   contract.Desired
	modelHash string
	specHash  string

	// From the cloud and the API servers.
	cloudRollouts bool              // the cloud replaces out-of-date instances itself
	observed      bool              // Get succeeded; observedGroup nil means NotFound
	cloud         *scalegroup.Group // as Get returned it
	objects       map[string]contract.InstanceObject
	machines      map[string]*clusterv1.Machine // by per-instance object name
	nodes         map[string]*corev1.Node       // by providerID, read-only
	nodesKnown    bool
	nodesErr      error

	// Planning.
	planned bool
	input   rollout.Input
	plan    rollout.Result
	// joinTimeout is the engine's JoinTimeout (zero: disabled);
	// joinTimedOut holds the instances that have not joined within it, by
	// ID: the planner sees them as failed.
	joinTimeout  time.Duration
	joinTimedOut map[string]bool

	// Acting.
	remediation remediation             // see remediate
	skipRemoval map[string]bool         // victims not removed this pass (their Machine could not be marked)
	removing    map[string]time.Time    // instance ID → removal start, for victims marked
	kept        map[string]bool         // victims whose removal ended this pass (undrainable, kept): objects' drain-started annotation gone
	drains      map[string]drainOutcome // victims drained this reconcile
	deletedNow  map[string]bool         // instances deleted from the cloud this reconcile
	replacedNow map[string]bool         // of those, the ones the cloud replaces (capacity unchanged)
	latest      *scalegroup.Group       // Apply's answer, newer than cloud
	// retryNote says when a change the cloud gave up on is applied again
	// (see retryFailed), "" when the group is not Failed or a retry is
	// sent now; retrying is the number of the retry this pass sends, 0
	// when none.
	retryNote string
	retrying  int

	// Reporting.
	reports map[string]contract.InstanceReport // by instance ID, see reportOf

	// For the conditions.
	problem *problem // a cloud or spec problem to report on ScaleGroupReady
	invalid error    // a spec the adapter or the cloud rejects
	// blocked: the cloud refuses the pool's new model while the group
	// serves instances of an older one (see applySpec); the rollout waits
	// and nothing is deleted for that model.
	blocked error
	// selfPaused is the progress record of a rollout the engine paused
	// itself (see trackProgress); progressErr, an unreadable progress
	// annotation whose default applies.
	selfPaused  *preview.RolloutProgress
	progressErr error
	// windowHold says why stale instances wait for the pool's maintenance
	// window, empty while it is open or the pool has none (see
	// preview.WindowHold); windowErr, an unreadable window.
	windowHold string
	windowErr  error
	// undrainable is what a rollout does with a Node not drained within
	// nodeDrainTimeout; undrainableErr, an unreadable choice.
	undrainable    preview.UndrainableNodeBehavior
	undrainableErr error
	// blueGreen is this pass's step of a blue-green rollout, nil for a
	// rolling update (see planBlueGreen); blueGreenErr, unreadable
	// blue-green annotations whose defaults apply.
	blueGreen    *rollout.BlueGreenStep
	blueGreenErr error
	// blueGreenSettings are the pool's blue-green settings, read with
	// the step (defaults where unreadable).
	blueGreenSettings rollout.BlueGreenSettings
	// blueGreenAbandoned: the pool's strategy is no longer BlueGreen while
	// a blue-green rollout was in progress; its record goes once the blue
	// Nodes serve again.
	blueGreenAbandoned bool

	requeue time.Duration
	// moreWrites: syncInstances left per-instance writes for the next pass.
	moreWrites bool
	// bulkLater: this pass leaves the bulk per-instance writes (see
	// syncInstances) to a pass at low priority; bulkDeferred: it had some.
	bulkLater, bulkDeferred bool
}

// drainOutcome is what happened to one victim's Node this reconcile.
type drainOutcome struct {
	result drain.Result
	err    error
}

// problem is a condition-worthy failure of the group.
type problem struct {
	reason  string
	message string
}

func (e *Engine) newPass(pool contract.Pool) *pass {
	ref, known, err := e.recordedRef(pool)
	return &pass{
		pool:         pool,
		before:       pool.DeepCopyObject().(contract.Pool),
		now:          e.clock.Now(),
		group:        ref,
		refKnown:     known,
		refErr:       err,
		removing:     map[string]time.Time{},
		kept:         map[string]bool{},
		remediation:  remediation{inFlight: map[string]string{}},
		skipRemoval:  map[string]bool{},
		drains:       map[string]drainOutcome{},
		deletedNow:   map[string]bool{},
		replacedNow:  map[string]bool{},
		joinTimeout:  e.joinTimeout,
		joinTimedOut: map[string]bool{},
	}
}

// ownerObject returns the owner MachinePool as a metav1.Object, nil (not
// a typed nil) when it is not known: the annotation readers of preview
// skip a nil object.
func (s *pass) ownerObject() metav1.Object {
	if s.owner == nil {
		return nil
	}
	return s.owner
}

// requeueAfter keeps the earliest requeue.
func (s *pass) requeueAfter(d time.Duration) {
	if d > 0 && (s.requeue == 0 || d < s.requeue) {
		s.requeue = d
	}
}

// result is the pass's requeue. A pool that asks to be looked at again has
// work under way (the cloud or its Nodes are moving, a drain, a retry): its
// requeue is at the default priority even when a low-priority event woke it
// (priority.go).
func (s *pass) result() ctrl.Result {
	if s.requeue <= 0 {
		return ctrl.Result{}
	}
	return ctrl.Result{RequeueAfter: s.requeue, Priority: ptr.To(0)}
}

// instances returns the group's instances as last seen: Apply's answer when
// the group was applied, else Get's, with the instances deleted since marked
// Deleting. Nil when the group does not exist.
func (s *pass) instances() []scalegroup.Instance {
	if s.latest != nil {
		return s.latest.Instances
	}
	if s.cloud == nil {
		return nil
	}
	out := make([]scalegroup.Instance, len(s.cloud.Instances))
	copy(out, s.cloud.Instances)
	for i := range out {
		if s.deletedNow[out[i].ID] {
			out[i].State = scalegroup.StateDeleting
		}
	}
	return out
}

// decremented is how much this reconcile's deletions lowered the group's
// capacity: one per instance deleted, none for those the cloud replaces.
func (s *pass) decremented() int32 {
	return int32(len(s.deletedNow) - len(s.replacedNow))
}

// currentGroup returns the group as last seen, nil when it does not exist.
func (s *pass) currentGroup() *scalegroup.Group {
	if s.latest != nil {
		return s.latest
	}
	return s.cloud
}
