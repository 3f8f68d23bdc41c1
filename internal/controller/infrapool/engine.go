package infrapool

import (
	"context"
	"errors"
	"fmt"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	kevents "k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/internal/controller/priority"
	"github.com/mpool-dev/mpool/internal/lastwrite"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/scalegroup"
	"github.com/mpool-dev/mpool/internal/workload"
)

// Annotations the engine reads or writes.
const (
	// AppliedSpecAnnotation on a pool records the hash of the group spec
	// last applied (model, custom data, tags, capacity excluded), so that a
	// rotated bootstrap token is applied once and a steady pool writes
	// nothing to the cloud.
	AppliedSpecAnnotation = "mpool.dev/applied-spec-hash"
	// ApplyRetryAnnotation on a pool is the engine's record of the retries
	// of a change the cloud gave up on (scalegroup.Group.Failed; JSON, see
	// applyRetry): the retries sent and when the current failure was first
	// seen. A restarted manager neither retries at once nor forgets the
	// count. It goes once the group is at rest and not Failed.
	ApplyRetryAnnotation = "mpool.dev/apply-retry"
)

// Timing tunes how often the engine looks again. Zero fields take defaults.
type Timing struct {
	// Converging is the requeue while the cloud creates, boots or deletes
	// instances or a Node has not become Ready (default 2s). The cloud has no
	// watch; Node events, when the Workload offers them, come sooner.
	Converging time.Duration
	// Drain is the requeue while a drain waits for pods to go (default 5s).
	Drain time.Duration
	// NotConverged bounds the wait of a pool that is not converged and has
	// nothing else to wait for (default 30s).
	NotConverged time.Duration
	// QuotaRetry is the requeue after the cloud refused capacity for quota,
	// or refused the credentials (default 1m).
	QuotaRetry time.Duration
	// ThrottleRetry is the requeue after throttling when the cloud gave no
	// Retry-After (default 1s).
	ThrottleRetry time.Duration
	// ExternalReplicas is how often a pool whose replicas an external actor
	// manages (cluster.x-k8s.io/replicas-managed-by) looks at its group
	// again: the actor scales the group in the cloud, which sends no event
	// (default 30s).
	ExternalReplicas time.Duration
	// FailedRetry is the wait before the first retry of a change the
	// cloud gave up on (scalegroup.Group.Failed); each retry that fails
	// again waits twice as long, at most FailedRetryMax (defaults 20s and
	// 10m: Azure Service Operator's backoff of an AKS agent pool whose
	// operation failed, which CAPZ relies on).
	FailedRetry, FailedRetryMax time.Duration
}

func (t *Timing) defaults() {
	set := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	set(&t.Converging, 2*time.Second)
	set(&t.Drain, 5*time.Second)
	set(&t.NotConverged, 30*time.Second)
	set(&t.QuotaRetry, time.Minute)
	set(&t.ThrottleRetry, time.Second)
	set(&t.ExternalReplicas, 30*time.Second)
	set(&t.FailedRetry, 20*time.Second)
	set(&t.FailedRetryMax, 10*time.Minute)
}

// Options configure an Engine.
type Options struct {
	// Adapter maps the pool kind onto the engine. Required.
	Adapter contract.Adapter
	// Client is the manager's client (cached reads). Required.
	Client client.Client
	// APIReader reads without the cache what the engine reads rarely and
	// should not watch (the MachinePool's revision history); default Client.
	APIReader client.Reader
	// ScaleGroup is the cloud's scale group API, already decorated (the
	// provider registry wraps it with metrics.WithMetrics). Required.
	ScaleGroup scalegroup.ScaleGroup
	// Workload gives access to the workload clusters' Nodes. Required.
	Workload Workload
	// Recorder records events; nil records none.
	Recorder kevents.EventRecorder
	// Clock is the time source (default: the real clock).
	Clock clock.PassiveClock
	// SkipModelReconciliation is the SkipMachinePoolModelReconciliation
	// feature gate.
	SkipModelReconciliation bool
	// Timing tunes requeues.
	Timing Timing
	// Workers bounds the concurrent API calls of one reconcile (drains,
	// per-instance object writes; default 32).
	Workers int
	// JoinTimeout is how long an instance may exist without a Node in the
	// workload cluster before the engine deletes it and lets the group
	// create a fresh one from the current model and bootstrap data (its
	// token may have expired, or been wrong): zero means
	// preview.DefaultJoinTimeout, a negative value never replaces an instance for
	// not joining.
	JoinTimeout time.Duration
	// OmitFailureFields leaves the pool's status.failureReason and
	// failureMessage unset: an invalid spec is reported by the conditions
	// only. Beside upstream Cluster API's MachinePool controller (mode
	// providers) it is set, because v1.14's panics on every reconcile of a
	// MachinePool whose infrastructure pool reports them
	// (kubernetes-sigs/cluster-api#14234, inverted nil guards in
	// reconcileExternal, present since v1.11).
	OmitFailureFields bool
	// Hold, shared with the MachinePool controller, holds the per-instance
	// bookkeeping while pools are being created (priority.Hold); nil holds
	// nothing.
	Hold *priority.Hold
}

// Engine reconciles infra pools of one kind: observe the group, plan with
// rollout.Plan, act (drain and delete victims, apply model and capacity),
// report. It is a reconcile.Reconciler for the adapter's pool kind.
type Engine struct {
	a       contract.Adapter
	c       client.Client
	reader  client.Reader // Options.APIReader
	sg      *gatedGroup
	caps    scalegroup.Capabilities // sg's, read once
	w       Workload
	rec     kevents.EventRecorder
	clock   clock.PassiveClock
	skip    bool
	timing  Timing
	workers int
	// joinTimeout is Options.JoinTimeout resolved; zero disables it.
	joinTimeout time.Duration
	// omitFailureFields is Options.OmitFailureFields.
	omitFailureFields bool

	clientsets *clientsets
	// nodeDeletes skips deleting a Node this process deleted a moment ago:
	// the Workload's, shared with the MachinePool controller, when it has
	// one.
	nodeDeletes *workload.NodeDeletes
	tracker     *instanceTimes
	// held records when each instance the cloud held before its boot was
	// last seen held (scalegroup.Instance.Held): its join timeout counts
	// from then.
	held    *instanceTimes
	applied *poolMemo[string] // spec hash last applied
	// written remembers the pools' finalizer patches and the per-instance
	// status patches made until the cache shows them, so that a pass from
	// a cache behind them does not repeat them.
	written lastwrite.Memo
	// bulk knows the priority of each pass, for the per-instance writes
	// (package priority's bulk writes); nil until SetupWithManager, when
	// every pass does them.
	bulk *priority.Tracker
	// hold is Options.Hold, for bulk.
	hold *priority.Hold
	// pausedSince is when this process first saw a pool's reconciliation
	// paused (its Cluster or its own paused annotation): the time paused
	// is not counted against the rollout's progress deadline.
	pausedSince *poolMemo[time.Time]
	// startedAt is when this engine started: a rollout's progress deadline
	// counts from it at the earliest (the time no manager ran is not time
	// the rollout stalled).
	startedAt time.Time
	managed   *poolMemo[preview.ManagedCapacity]
	// status is the pool as this engine last wrote its status (the
	// server's answer): see patch.
	status   *poolMemo[contract.Pool]
	throttle throttleGate
}

// New returns an Engine.
func New(opts Options) (*Engine, error) {
	switch {
	case opts.Adapter == nil:
		return nil, errors.New("infrapool: Options.Adapter is required")
	case opts.Client == nil:
		return nil, errors.New("infrapool: Options.Client is required")
	case opts.ScaleGroup == nil:
		return nil, errors.New("infrapool: Options.ScaleGroup is required")
	case opts.Workload == nil:
		return nil, errors.New("infrapool: Options.Workload is required")
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.APIReader == nil {
		opts.APIReader = opts.Client
	}
	if opts.Recorder == nil {
		opts.Recorder = nopRecorder{}
	}
	if opts.Workers <= 0 {
		opts.Workers = 32
	}
	opts.Timing.defaults()
	switch {
	case opts.JoinTimeout == 0:
		opts.JoinTimeout = preview.DefaultJoinTimeout
	case opts.JoinTimeout < 0:
		opts.JoinTimeout = 0
	}
	e := &Engine{
		a:                 opts.Adapter,
		c:                 opts.Client,
		reader:            opts.APIReader,
		omitFailureFields: opts.OmitFailureFields,
		hold:              opts.Hold,
		w:                 opts.Workload,
		rec:               opts.Recorder,
		clock:             opts.Clock,
		skip:              opts.SkipModelReconciliation,
		timing:            opts.Timing,
		workers:           opts.Workers,
		joinTimeout:       opts.JoinTimeout,
		clientsets:        newClientsets(opts.Workload),
		nodeDeletes:       nodeDeletesOf(opts.Workload),
		tracker:           newInstanceTimes(),
		held:              newInstanceTimes(),
		applied:           newPoolMemo[string](),
		pausedSince:       newPoolMemo[time.Time](),
		startedAt:         opts.Clock.Now(),
		managed:           newPoolMemo[preview.ManagedCapacity](),
		status:            newPoolMemo[contract.Pool](),
	}
	e.setScaleGroup(opts.ScaleGroup)
	return e, nil
}

// setScaleGroup makes sg the engine's cloud, behind its throttle gate.
func (e *Engine) setScaleGroup(sg scalegroup.ScaleGroup) {
	e.sg = &gatedGroup{ScaleGroup: sg, e: e}
	e.caps = sg.Capabilities()
}

// Reconcile implements reconcile.Reconciler for the adapter's pool kind.
func (e *Engine) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	start := e.clock.Now()
	pool := e.a.NewPool()
	if err := e.c.Get(ctx, req.NamespacedName, pool); err != nil {
		if kerrors.IsNotFound(err) {
			e.bulk.Forget(req)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	var took phaseTimes
	defer func() {
		log.FromContext(ctx).V(1).Info("Reconciled", "duration", e.clock.Since(start).String(), "phases", took.String(),
			"requeueAfter", res.RequeueAfter.String(), "failed", retErr != nil)
	}()
	logger := log.FromContext(ctx).WithValues(e.a.Kinds().Pool, klog.KObj(pool))
	ctx = log.IntoContext(ctx, logger)
	if pool.GetAnnotations()[clusterv1.PausedAnnotation] == "true" {
		logger.V(1).Info("Reconciliation is paused")
		e.notePaused(pool.GetUID())
		return ctrl.Result{}, nil
	}
	// A paused Cluster pauses its pools, their deletion included: nothing
	// is read from or written to the cloud, and nothing to the API server,
	// not even the status (as Cluster API's providers do).
	switch paused, err := e.clusterPaused(ctx, pool); {
	case err != nil:
		return ctrl.Result{}, err
	case paused:
		logger.V(1).Info("The Cluster is paused")
		e.notePaused(pool.GetUID())
		return ctrl.Result{}, nil
	}

	if d := e.throttle.wait(e.clock.Now()); d > 0 {
		// The cloud asked to wait; the status stays as it is.
		return ctrl.Result{RequeueAfter: d}, nil
	}

	s := e.newPass(pool)
	// A pool being deleted writes its per-instance objects first (see
	// report): nothing to put behind other pools.
	s.bulkLater = !e.bulk.Bulk(req) && pool.GetDeletionTimestamp().IsZero()
	defer func() {
		if err := took.time(e.clock, "patch", func() error { return e.patch(ctx, s) }); err != nil {
			retErr = errors.Join(retErr, err)
		}
		if s.afterPatch != nil {
			retErr = errors.Join(retErr, took.time(e.clock, "instances", func() error { return s.afterPatch(ctx) }))
			switch {
			case retErr != nil:
			case s.bulkDeferred:
				// The pass that does them looks again anyway (unless it
				// is parked: then this pass's own result stands).
				res = e.bulk.Defer(req, res)
			case s.moreWrites:
				res = s.result()
			}
		}
		if s.statusDeferred && retErr == nil && !s.bulkDeferred {
			res = e.bulk.Defer(req, res)
		}
	}()

	if !pool.GetDeletionTimestamp().IsZero() {
		err := e.reconcileDelete(ctx, s)
		return s.result(), err
	}
	var errs []error
	for _, phase := range []struct {
		name string
		run  func(context.Context, *pass) error
	}{{"observe", e.observe}, {"plan", e.planRollout}, {"act", e.act}} {
		if err := took.time(e.clock, phase.name, func() error { return phase.run(ctx, s) }); err != nil {
			errs = append(errs, err)
			break
		}
		if s.halt {
			break
		}
	}
	errs = append(errs, took.time(e.clock, "report", func() error { return e.report(ctx, s) }))
	return s.result(), errors.Join(errs...)
}

// storeBeforeCloud stores what must be on the pool before anything of it
// exists in the cloud: its finalizer, and the reference of its scale group
// when this pass placed it (resolveRef). They go in one patch, with
// whatever else the pass has set on the pool's metadata by then (the
// revision's record), so a new pool costs one metadata write, not three.
// Nothing is sent when the pool has its finalizer and a recorded group, or
// when a pass sent them and the cache does not show that write yet (a
// second patch would only repeat it). Either way s.pool and s.before have
// both after.
func (e *Engine) storeBeforeCloud(ctx context.Context, s *pass) error {
	pool, fin := s.pool, e.a.Kinds().PoolFinalizer
	if controllerutil.ContainsFinalizer(pool, fin) && !s.placed {
		return nil
	}
	key := lastwrite.Key{UID: pool.GetUID(), Part: "before-cloud"}
	base := pool.GetResourceVersion()
	controllerutil.AddFinalizer(pool, fin)
	if e.written.Pending(key, base) {
		// As if the cache showed the write: the finalizer and the
		// reference, which resolveRef derived the same way again.
		controllerutil.AddFinalizer(s.before, fin)
		if s.placed {
			s.before.SetAnnotations(withEntry(s.before.GetAnnotations(), contract.GroupRefAnnotation, pool.GetAnnotations()[contract.GroupRefAnnotation]))
		}
		return nil
	}
	obj := pool.DeepCopyObject().(contract.Pool)
	copyField(obj, s.before.DeepCopyObject().(client.Object), "Status")
	if _, err := mergePatch(ctx, e.c, obj, s.before, false); err != nil {
		if s.placed {
			return fmt.Errorf("recording the finalizer and the scale group reference: %w", err)
		}
		return fmt.Errorf("adding the finalizer: %w", err)
	}
	e.written.Wrote(key, base, obj.DeepCopyObject().(client.Object))
	// The server now holds what the pass had: the base of later patches.
	before := pool.DeepCopyObject().(contract.Pool)
	copyField(before, s.before, "Status")
	before.SetResourceVersion(obj.GetResourceVersion())
	s.before = before
	pool.SetResourceVersion(obj.GetResourceVersion())
	if s.placed {
		log.FromContext(ctx).Info("Placed the scale group", "group", s.group.String(), "credentials", s.group.Credentials)
	}
	return nil
}

// nopRecorder drops events.
type nopRecorder struct{}

func (nopRecorder) Eventf(_, _ runtime.Object, _, _, _, _ string, _ ...any) {}
