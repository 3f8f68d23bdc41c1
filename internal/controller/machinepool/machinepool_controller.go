package machinepool

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	kevents "k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/internal/capi"
	"github.com/mpool-dev/mpool/internal/condition"
	"github.com/mpool-dev/mpool/internal/controller/priority"
	"github.com/mpool-dev/mpool/internal/fieldowners"
	"github.com/mpool-dev/mpool/internal/lastwrite"
	"github.com/mpool-dev/mpool/internal/workload"
)

// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machinepools;machinepools/status;machinepools/finalizers,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines;machines/status;machines/finalizers,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=kubeadmconfigs,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=azuremachinepools;azuremachinepoolmachines;awsmachinepools;awsmanagedmachinepools;localmachinepools;localmachinepoolmachines,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// ControllerName names the controller, its event source and its field owner.
const ControllerName = "machinepool"

// Field indexes this controller registers on MachinePools in the manager's
// cache. Other controllers may use them once SetupWithManager has run.
const (
	// IndexClusterName indexes MachinePools by spec.clusterName.
	IndexClusterName = "mpool.machinepool.clusterName"
	// IndexProviderID indexes MachinePools by each entry of spec.providerIDList.
	IndexProviderID = "mpool.machinepool.providerID"
	// IndexExternalRef indexes MachinePools by the objects they reference
	// (bootstrap configRef and infrastructureRef), as "<group>/<kind>/<name>".
	IndexExternalRef = "mpool.machinepool.externalRef"
	// IndexPoolMember indexes Machines, and the infrastructure machines of
	// the kinds the pools report, by the pool they belong to: their
	// cluster-name and pool-name labels, as "<cluster>/<pool>"
	// (poolMemberKey). A pool's reconcile lists its own members instead of
	// every object of its namespace: with many pools in one namespace the
	// label selector alone made each pass cost as much as all the pools'
	// objects together.
	IndexPoolMember = "mpool.machinepool.poolMember"
)

// workloadRetryInterval is how soon a pool whose workload cluster cannot be
// reached is retried.
const workloadRetryInterval = 15 * time.Second

// Reconciler reconciles MachinePools. Build it with its exported fields set,
// then call SetupWithManager.
type Reconciler struct {
	// FieldOwners, when set, moves the managed fields entries that clients
	// wrote in v1beta1 to v1beta2 with the pool's first write (its
	// finalizer) and its bootstrap config's (its owner reference), so that
	// no later write of the controllers makes the API server convert the
	// object twice through the conversion webhook (package fieldowners).
	FieldOwners *fieldowners.Upgrader
	// Client is the manager's client (cached reads, direct writes). Required.
	Client client.Client
	// ClusterCache reaches the workload clusters. Required; the Cluster
	// controller must use the same one.
	ClusterCache *workload.ClusterCache
	// Recorder records events; SetupWithManager defaults it from the manager.
	Recorder kevents.EventRecorder
	// Clock is the time source; nil means the real clock.
	Clock clock.PassiveClock
	// Hold, shared with the infrastructure pool engines, learns from each
	// reconcile whether its pool is being created and took a step towards
	// Running, and holds the Machine bookkeeping while pools are being
	// created (priority.Hold); nil holds nothing.
	Hold *priority.Hold

	// externalReader reads bootstrap and infrastructure objects
	// (unstructured) from the manager's cache.
	externalReader client.Reader
	// fieldIndexer registers the IndexPoolMember index of each
	// infrastructure machine kind as it is first watched; nil when the
	// Reconciler is not set up with a manager (members are then listed by
	// their labels).
	fieldIndexer client.FieldIndexer
	watchMu      sync.Mutex
	watching     map[string]bool
	// indexed are the infrastructure machine kinds indexed by
	// IndexPoolMember, by "<apiVersion>/<kind>".
	indexed map[string]bool
	// watchFunc adds a watch to the running controller.
	watchFunc func(obj client.Object, h handler.EventHandler) error
	// written remembers the pools' own writes and the Machine creates and
	// status patches made until the cache shows them, so that a reconcile
	// from a cache behind them does not make them again (the same status
	// once more, a create refused as AlreadyExists, a status patch locked
	// on a stale resourceVersion that conflicts).
	written lastwrite.Memo
	// bulk knows the priority of each reconcile, for the Machine creates
	// and syncs (package priority's bulk writes); nil until
	// SetupWithManager, when every reconcile does them.
	bulk *priority.Tracker
	// infraBehind bounds each pool's wait for its infrastructure pool's
	// status to catch up with its spec (InfraStatusWait).
	infraBehind infraBehind
}

// SetupWithManager registers the field indexes and the controller with mgr.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Client == nil || r.ClusterCache == nil {
		return errors.New("machinepool.Reconciler needs Client and ClusterCache")
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(ControllerName + "-controller")
	}
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if err := IndexMachinePools(ctx, mgr); err != nil {
		return err
	}
	r.externalReader = mgr.GetCache()
	r.fieldIndexer = mgr.GetFieldIndexer()
	r.bulk = priority.NewTracker()
	r.bulk.Hold = r.Hold
	c, err := ctrl.NewControllerManagedBy(mgr).
		For(&clusterv1.MachinePool{}).
		// Creating and syncing the pool's Machines is bulk work (see
		// reconcileMachines): seen again, it is reconciled behind the pools
		// with work, unless it is a deletion or a change of the Machine's
		// labels or annotations (the delete-machine mark).
		Watches(&clusterv1.Machine{}, priority.LowCreates(priority.LowUnless(
			handler.EnqueueRequestsFromMapFunc(r.machineToMachinePool), metadataOrDeletionChanged))).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToMachinePools)).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.secretToMachinePools),
			builder.WithPredicates(predicate.NewPredicateFuncs(workload.IsKubeconfigSecret))).
		WatchesRawSource(r.ClusterCache.NodeSource(r.nodeToMachinePools)).
		WatchesRawSource(r.ClusterCache.ClusterSource(r.workloadClusterToMachinePools)).
		WithOptions(r.bulk.Watch(options)).
		Named(ControllerName).
		Build(r)
	if err != nil {
		return fmt.Errorf("creating the MachinePool controller: %w", err)
	}
	mgrCache := mgr.GetCache()
	r.watchFunc = func(obj client.Object, h handler.EventHandler) error {
		return c.Watch(source.Kind(mgrCache, obj, h))
	}
	return nil
}

// IndexMachinePools registers the MachinePool field indexes (IndexClusterName,
// IndexProviderID, IndexExternalRef) and the Machines' IndexPoolMember with
// mgr.
func IndexMachinePools(ctx context.Context, mgr ctrl.Manager) error {
	idx := mgr.GetFieldIndexer()
	indexes := map[string]client.IndexerFunc{
		IndexClusterName: func(o client.Object) []string {
			mp, ok := o.(*clusterv1.MachinePool)
			if !ok || mp.Spec.ClusterName == "" {
				return nil
			}
			return []string{mp.Spec.ClusterName}
		},
		IndexProviderID: func(o client.Object) []string {
			mp, ok := o.(*clusterv1.MachinePool)
			if !ok {
				return nil
			}
			return mp.Spec.ProviderIDList
		},
		IndexExternalRef: func(o client.Object) []string {
			mp, ok := o.(*clusterv1.MachinePool)
			if !ok {
				return nil
			}
			var out []string
			if ref := mp.Spec.Template.Spec.Bootstrap.ConfigRef; ref.IsDefined() {
				out = append(out, refKey(ref.APIGroup, ref.Kind, ref.Name))
			}
			if ref := mp.Spec.Template.Spec.InfrastructureRef; ref.Name != "" {
				out = append(out, refKey(ref.APIGroup, ref.Kind, ref.Name))
			}
			return out
		},
	}
	for name, fn := range indexes {
		if err := idx.IndexField(ctx, &clusterv1.MachinePool{}, name, fn); err != nil {
			return fmt.Errorf("indexing MachinePools by %s: %w", name, err)
		}
	}
	if err := idx.IndexField(ctx, &clusterv1.Machine{}, IndexPoolMember, poolMemberIndex); err != nil {
		return fmt.Errorf("indexing Machines by %s: %w", IndexPoolMember, err)
	}
	return nil
}

func refKey(group, kind, name string) string { return group + "/" + kind + "/" + name }

// scope is what one reconcile of one pool knows. Phase functions record
// facts here; the status functions turn them into status.
type scope struct {
	pool    *clusterv1.MachinePool
	orig    *clusterv1.MachinePool
	cluster *clusterv1.Cluster
	now     time.Time
	// observed is set once the phase functions ran.
	observed bool
	// generationObserved is set when the reconcile succeeded and its status
	// observes the pool's generation.
	generationObserved bool

	// bootstrap
	bootstrap      externalState
	bootstrapReady bool // config ready (if any) and dataSecretName set

	// infrastructure
	infra            externalState
	infraReplicas    *int32
	infraMachineKind string
	providerIDsFresh bool // spec.providerIDList was synced from a ready infra pool this reconcile
	// statusWait is how much longer the pool's status may wait for its
	// infrastructure pool's, which lags the infrastructure pool's spec
	// (InfraStatusWait); zero: the status is written.
	statusWait time.Duration
	// statusHeld: the status waits (statusWait); patch writes none, not
	// even where the pool's own spec write moves its conditions'
	// generation.
	statusHeld     bool
	failureReason  *string
	failureMessage *string

	// Nodes
	nodesKnown  bool // Nodes were read from the workload cluster
	workloadErr error
	nodes       map[string]*corev1.Node // providerID -> Node (read-only)
	nodeRefsCut int                     // Nodes matched when more than MaxNodeRefs, else 0

	// pool Machines
	machinesKnown       bool
	machinesTotal       int
	machinesNotUpToDate int
	machinesUnknown     int

	// deletion
	deleteStep string

	// afterStatus are the batches of per-object writes to run once the
	// status is written (writeAfterStatus).
	afterStatus [][]write
	// bulkLater: this reconcile leaves the Machine creates and syncs (see
	// reconcileMachines) to a reconcile at low priority; bulkDeferred: it
	// had some.
	bulkLater, bulkDeferred bool
	// created are the Machines this reconcile created, by name, for one
	// event (reportCreatedMachines); the writes add to it concurrently.
	created   []string
	createdMu sync.Mutex
}

// externalState is what a reconcile learnt about one referenced object.
type externalState struct {
	ref      *clusterv1.ContractVersionedObjectReference
	obj      *unstructured.Unstructured
	notFound bool
	err      error // reading it failed (not NotFound)
	ready    bool
	// notReadyMessage says why a found object is not ready, when it is more
	// than "status.ready is false".
	notReadyMessage string
}

// desiredReplicas returns spec.replicas (defaulted by then).
func (s *scope) desiredReplicas() int32 {
	if s.pool.Spec.Replicas == nil {
		return 1
	}
	return *s.pool.Spec.Replicas
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, reterr error) {
	log := ctrl.LoggerFrom(ctx)
	pool := &clusterv1.MachinePool{}
	if err := r.Client.Get(ctx, req.NamespacedName, pool); err != nil {
		if apierrors.IsNotFound(err) {
			r.bulk.Forget(req)
			r.Hold.Forget(req.NamespacedName)
			r.infraBehind.forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("reading MachinePool %s: %w", req.NamespacedName, err)
	}
	if last, ok := r.written.Latest(poolWriteKey(pool), pool.ResourceVersion).(*clusterv1.MachinePool); ok {
		// The cache has not shown this controller's last write to the
		// pool: work from its answer, as if it had.
		pool = last
	}
	owners, moveOwners, err := r.FieldOwners.Upgrade(ctx, pool)
	if err != nil {
		log.V(1).Info("Could not move managed fields of v1beta1 to v1beta2: each write converts the pool", "err", err.Error())
	}

	cluster := &clusterv1.Cluster{}
	clusterKey := types.NamespacedName{Namespace: pool.Namespace, Name: pool.Spec.ClusterName}
	if err := r.Client.Get(ctx, clusterKey, cluster); err != nil {
		if !apierrors.IsNotFound(err) || pool.DeletionTimestamp.IsZero() {
			return ctrl.Result{}, fmt.Errorf("reading Cluster %s of MachinePool %s: %w", clusterKey, req.NamespacedName, err)
		}
		cluster = nil // deleting a pool whose Cluster is already gone
	}
	if cluster != nil {
		log = log.WithValues("Cluster", klog.KObj(cluster))
		ctx = ctrl.LoggerInto(ctx, log)
	}

	s := &scope{pool: pool, orig: pool.DeepCopy(), cluster: cluster, now: r.Clock.Now(), bulkLater: !r.bulk.Bulk(req)}
	paused := isPaused(cluster, pool)
	defer func() {
		// A status computed while the infrastructure pool's own lags its
		// spec is not written: the status write that follows brings the
		// pool back (InfraStatusWait).
		waits := !paused && reterr == nil && s.statusWait > 0 && pool.DeletionTimestamp.IsZero()
		if !paused && !waits {
			r.updateStatus(ctx, s)
			r.recordEvents(s)
			if reterr == nil {
				pool.Status.ObservedGeneration = pool.Generation
				s.generationObserved = true
			}
		}
		setPausedCondition(s, paused)
		if waits {
			// The status is not written (patch), and neither are the
			// writes that follow a status (the Nodes' pool annotations,
			// the Machines): run here they would hold back the reconcile
			// the infrastructure pool's status write brings, which writes
			// them after its own status.
			s.statusHeld = true
			s.afterStatus = nil
			res = lowestNonZeroResult(res, ctrl.Result{RequeueAfter: s.statusWait})
		}
		observeCreation(r.Hold, req.NamespacedName, s.orig.Status.Phase, pool.Status.Phase)
		if err := r.patch(ctx, s); err != nil {
			reterr = errors.Join(reterr, err)
		}
		wres, err := s.runAfterStatus(ctx)
		res = lowestNonZeroResult(res, wres)
		reterr = errors.Join(reterr, err)
		if s.bulkDeferred && reterr == nil {
			// The reconcile that does them looks again anyway (unless it
			// is parked: then this reconcile's own result stands).
			res = r.bulk.Defer(req, res)
		}
		r.reportCreatedMachines(s)
	}()
	if paused {
		log.V(1).Info("Reconciliation is paused")
		return ctrl.Result{}, nil
	}

	if !pool.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, s)
	}
	setClusterMeta(pool, s.cluster)
	if moveOwners {
		// Managed fields written in v1beta1 travel moved to v1beta2 with
		// the metadata write (package fieldowners).
		pool.ManagedFields = owners
	}
	if controllerutil.AddFinalizer(pool, clusterv1.MachinePoolFinalizer) || moveOwners {
		// The finalizer is written before anything is created, with the
		// Cluster's label and owner reference, and the reconcile goes on:
		// one write and one reconcile fewer than writing it and waiting for
		// the update event to bring the pool back.
		if err := r.patchMeta(ctx, s, moveOwners); err != nil {
			return ctrl.Result{}, err
		}
	}
	return r.reconcileNormal(ctx, s)
}

// setClusterMeta gives pool the Cluster's name label and an owner reference
// to it.
func setClusterMeta(pool *clusterv1.MachinePool, cluster *clusterv1.Cluster) {
	if pool.Labels == nil {
		pool.Labels = map[string]string{}
	}
	pool.Labels[clusterv1.ClusterNameLabel] = pool.Spec.ClusterName
	pool.OwnerReferences = ensureOwnerRef(pool.OwnerReferences, metav1.OwnerReference{
		APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: cluster.Name, UID: cluster.UID,
	})
}

// patchMeta writes the pool's metadata now (finalizers, labels, owner
// references) and makes it the base the end of the reconcile diffs against.
// With owners, the write carries the pool's managed fields as
// fieldowners.Upgrade moved them, on the condition that the pool is still
// the one they were moved from; when it is not, the metadata is written
// without them and a later reconcile moves them.
func (r *Reconciler) patchMeta(ctx context.Context, s *scope, owners bool) error {
	obj := s.orig.DeepCopy()
	obj.ObjectMeta = *s.pool.ObjectMeta.DeepCopy()
	var opts []client.MergeFromOption
	if owners {
		opts = append(opts, client.MergeFromWithOptimisticLock{})
	}
	err := r.Client.Patch(ctx, obj, client.MergeFromWithOptions(s.orig, opts...))
	if owners && apierrors.IsConflict(err) {
		s.pool.ManagedFields = s.orig.ManagedFields
		if equality.Semantic.DeepEqual(s.pool.ObjectMeta, s.orig.ObjectMeta) {
			return nil
		}
		obj = s.orig.DeepCopy()
		obj.ObjectMeta = *s.pool.ObjectMeta.DeepCopy()
		err = r.Client.Patch(ctx, obj, client.MergeFrom(s.orig))
	}
	if err != nil {
		return fmt.Errorf("adding the finalizer to MachinePool %s: %w", klog.KObj(s.pool), err)
	}
	r.written.Wrote(poolWriteKey(obj), s.orig.ResourceVersion, obj.DeepCopy())
	s.orig.ObjectMeta = *obj.ObjectMeta.DeepCopy()
	s.pool.ObjectMeta = obj.ObjectMeta
	return nil
}

// phaseFunc is one ordered step of a normal reconcile.
type phaseFunc func(context.Context, *scope) (ctrl.Result, error)

func (r *Reconciler) reconcileNormal(ctx context.Context, s *scope) (ctrl.Result, error) {
	phases := []phaseFunc{
		r.reconcileBootstrap,
		r.reconcileInfrastructure,
		r.reconcileReplicas,
		r.reconcileNodes,
		r.reconcileMachines,
	}
	s.observed = true
	var res ctrl.Result
	var errs []error
	for _, phase := range phases {
		pr, err := phase(ctx, s)
		if err != nil {
			errs = append(errs, err)
		}
		res = lowestNonZeroResult(res, pr)
	}
	return res, errors.Join(errs...)
}

// isPaused reports whether the Cluster or the pool is paused.
func isPaused(cluster *clusterv1.Cluster, pool *clusterv1.MachinePool) bool {
	if _, ok := pool.Annotations[clusterv1.PausedAnnotation]; ok {
		return true
	}
	if cluster == nil {
		return false
	}
	_, ok := cluster.Annotations[clusterv1.PausedAnnotation]
	return ok || ptr.Deref(cluster.Spec.Paused, false)
}

// patch writes the pool's metadata and spec, then its status, each only when
// it changed. Spec first: whoever sees the new status also sees the spec it
// was computed from (providerIDList, dataSecretName). When the finalizer
// removal lets the pool go, the status patch finds nothing, which is fine.
func (r *Reconciler) patch(ctx context.Context, s *scope) error {
	pool, orig := s.pool, s.orig
	rv := orig.ResourceVersion // of the copy the next write is computed from
	if !equality.Semantic.DeepEqual(orig.ObjectMeta, pool.ObjectMeta) || !equality.Semantic.DeepEqual(orig.Spec, pool.Spec) {
		// The status goes through its own endpoint: keep it out of this diff.
		obj := pool.DeepCopy()
		obj.Status = *orig.Status.DeepCopy()
		data, err := client.MergeFrom(orig).Data(obj)
		if err != nil {
			return fmt.Errorf("patching MachinePool %s: %w", klog.KObj(pool), err)
		}
		// The answer goes to an object of its own: decoded onto a copy of
		// the pool it would keep what the answer leaves out.
		answer := &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: pool.Namespace, Name: pool.Name}}
		if err := r.Client.Patch(ctx, answer, client.RawPatch(types.MergePatchType, data)); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("patching MachinePool %s: %w", klog.KObj(pool), err)
		}
		if !equality.Semantic.DeepEqual(orig.Spec, pool.Spec) && equality.Semantic.DeepEqual(answer.Spec, pool.Spec) {
			observeOwnSpecWrite(pool, orig.Generation, answer.Generation, s.generationObserved)
		}
		r.written.Wrote(poolWriteKey(answer), rv, answer.DeepCopy())
		rv = answer.ResourceVersion
	}
	if !s.statusHeld && !equality.Semantic.DeepEqual(orig.Status, pool.Status) {
		base := orig.DeepCopy()
		base.ObjectMeta = *pool.ObjectMeta.DeepCopy()
		base.Spec = *pool.Spec.DeepCopy()
		obj := pool.DeepCopy()
		switch err := r.Client.Status().Patch(ctx, obj, client.MergeFrom(base)); {
		case err == nil:
			r.written.Wrote(poolWriteKey(obj), rv, obj.DeepCopy())
		case !apierrors.IsNotFound(err):
			return fmt.Errorf("patching the status of MachinePool %s: %w", klog.KObj(pool), err)
		}
	}
	return nil
}

// poolWriteKey names the controller's own writes to pool in
// Reconciler.written.
func poolWriteKey(pool *clusterv1.MachinePool) lastwrite.Key {
	return lastwrite.Key{UID: pool.UID, Part: "MachinePool"}
}

// observeOwnSpecWrite moves the status computed at generation from to
// generation to, the generation of the answer to this reconcile's own spec
// patch (dataSecretName, providerIDList), which the caller has checked holds
// the very spec the status was computed with: without this, the update
// event of that patch brings the pool back only to rewrite every
// condition's observedGeneration. status.observedGeneration moves only when
// this reconcile set it (observed: it succeeded).
func observeOwnSpecWrite(pool *clusterv1.MachinePool, from, to int64, observed bool) {
	if to <= from {
		return
	}
	if observed && pool.Status.ObservedGeneration == from {
		pool.Status.ObservedGeneration = to
	}
	condition.MoveGeneration(pool, from, to)
	pool.Generation = to
}

// lowestNonZeroResult keeps the earliest requeue.
func lowestNonZeroResult(a, b ctrl.Result) ctrl.Result {
	switch {
	case a.RequeueAfter == 0:
		return b
	case b.RequeueAfter == 0:
		return a
	case b.RequeueAfter < a.RequeueAfter:
		return b
	default:
		return a
	}
}

// ensureOwnerRef adds ref to refs, or updates the entry for the same object.
func ensureOwnerRef(refs []metav1.OwnerReference, ref metav1.OwnerReference) []metav1.OwnerReference {
	for i := range refs {
		if refs[i].Kind == ref.Kind && refs[i].Name == ref.Name &&
			groupOf(refs[i].APIVersion) == groupOf(ref.APIVersion) {
			if refs[i].UID != ref.UID || refs[i].APIVersion != ref.APIVersion {
				out := append([]metav1.OwnerReference(nil), refs...)
				out[i].UID, out[i].APIVersion = ref.UID, ref.APIVersion
				return out
			}
			return refs
		}
	}
	return append(append([]metav1.OwnerReference(nil), refs...), ref)
}

func groupOf(apiVersion string) string {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return apiVersion
	}
	return gv.Group
}

// clusterToMachinePools maps a Cluster to its MachinePools.
func (r *Reconciler) clusterToMachinePools(ctx context.Context, o client.Object) []reconcile.Request {
	return r.workloadClusterToMachinePools(ctx, client.ObjectKeyFromObject(o))
}

// machineToMachinePool maps a Machine to the MachinePool that controls it.
// A Machine controlled by nothing maps by its cluster-name and pool-name
// labels: its pool was deleted with its dependents orphaned (`kubectl
// delete --cascade=orphan`), the garbage collector took the Machine's owner
// reference away, and the pool's teardown, which deletes its Machines
// itself, still waits to see them go.
func (r *Reconciler) machineToMachinePool(ctx context.Context, o client.Object) []reconcile.Request {
	if ref := metav1.GetControllerOf(o); ref != nil {
		if ref.Kind != "MachinePool" || groupOf(ref.APIVersion) != clusterv1.GroupVersion.Group {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: ref.Name}}}
	}
	pool, cluster := o.GetLabels()[clusterv1.MachinePoolNameLabel], o.GetLabels()[clusterv1.ClusterNameLabel]
	if pool == "" || cluster == "" {
		return nil
	}
	var reqs []reconcile.Request
	for _, req := range r.workloadClusterToMachinePools(ctx, types.NamespacedName{Namespace: o.GetNamespace(), Name: cluster}) {
		if capi.LabelValue(req.Name) == pool {
			reqs = append(reqs, req)
		}
	}
	return reqs
}

// secretToMachinePools maps a kubeconfig Secret to the pools of its Cluster:
// new, changed or deleted credentials change what the pools can observe.
func (r *Reconciler) secretToMachinePools(ctx context.Context, o client.Object) []reconcile.Request {
	cluster, ok := workload.ClusterOfKubeconfigSecret(o)
	if !ok {
		return nil
	}
	return r.workloadClusterToMachinePools(ctx, cluster)
}

// workloadClusterToMachinePools maps a Cluster key to its pools.
func (r *Reconciler) workloadClusterToMachinePools(ctx context.Context, cluster types.NamespacedName) []reconcile.Request {
	list := &clusterv1.MachinePoolList{}
	if err := r.Client.List(ctx, list, client.InNamespace(cluster.Namespace), client.MatchingFields{IndexClusterName: cluster.Name}, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the MachinePools of a Cluster", "Cluster", klog.KRef(cluster.Namespace, cluster.Name))
		return nil
	}
	return poolRequests(list.Items)
}

// nodeToMachinePools maps a workload-cluster Node to the pools that own it
// (annotations) or list its providerID.
func (r *Reconciler) nodeToMachinePools(ctx context.Context, clusters []types.NamespacedName, node *corev1.Node) []reconcile.Request {
	var reqs []reconcile.Request
	if o, ok := workload.OwnerOf(node); ok && o.Kind == "MachinePool" && slices.Contains(clusters, types.NamespacedName{Namespace: o.Namespace, Name: o.ClusterName}) {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.Namespace, Name: o.Name}})
	}
	if node.Spec.ProviderID == "" {
		return reqs
	}
	list := &clusterv1.MachinePoolList{}
	if err := r.Client.List(ctx, list, append(workload.InNamespaceOf(clusters), client.MatchingFields{IndexProviderID: node.Spec.ProviderID}, client.UnsafeDisableDeepCopy)...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the MachinePools of a Node", "node", node.Name)
		return reqs
	}
	for i := range list.Items {
		if slices.Contains(clusters, types.NamespacedName{Namespace: list.Items[i].Namespace, Name: list.Items[i].Spec.ClusterName}) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return reqs
}

// externalToMachinePools maps a bootstrap or infrastructure object to the
// pools that reference it.
func (r *Reconciler) externalToMachinePools(ctx context.Context, o client.Object) []reconcile.Request {
	gvk := o.GetObjectKind().GroupVersionKind()
	list := &clusterv1.MachinePoolList{}
	if err := r.Client.List(ctx, list, client.InNamespace(o.GetNamespace()),
		client.MatchingFields{IndexExternalRef: refKey(gvk.Group, gvk.Kind, o.GetName())}, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the MachinePools of an external object", "object", klog.KObj(o))
		return nil
	}
	return poolRequests(list.Items)
}

// infraMachineToMachinePool maps an infrastructure machine to its pool:
// through its controller, the infra pool, to the MachinePool that references
// that pool. The pool-name label is the fallback for an infrastructure
// machine without a controller; it holds the name itself only for names of
// up to 63 characters (see capi.LabelValue).
func (r *Reconciler) infraMachineToMachinePool(ctx context.Context, o client.Object) []reconcile.Request {
	if owner := metav1.GetControllerOf(o); owner != nil {
		gv, err := schema.ParseGroupVersion(owner.APIVersion)
		if err != nil {
			return nil
		}
		list := &clusterv1.MachinePoolList{}
		if err := r.Client.List(ctx, list, client.InNamespace(o.GetNamespace()),
			client.MatchingFields{IndexExternalRef: refKey(gv.Group, owner.Kind, owner.Name)}, client.UnsafeDisableDeepCopy); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing the MachinePools of an infrastructure machine", "object", klog.KObj(o))
			return nil
		}
		return poolRequests(list.Items)
	}
	name := o.GetLabels()[clusterv1.MachinePoolNameLabel]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

func poolRequests(pools []clusterv1.MachinePool) []reconcile.Request {
	reqs := make([]reconcile.Request, 0, len(pools))
	for i := range pools {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&pools[i])})
	}
	return reqs
}

// ensureWatch starts watching a kind the pool references itself (its
// infrastructure pool, its bootstrap config), once per kind, mapping its
// events with mapFn. Their events are the pool's own work, at the default
// priority: the infrastructure pool created, ready or reporting its
// providerIDs is what the MachinePool waits for. (Behind the pools' bulk
// work, a pool whose infrastructure pool was created before the watch saw
// it, or became ready, waited for its turn at low priority: at a thousand
// pools the last ones came to Running minutes after their instances had
// joined, BENCHMARKS.md "Many pools".)
func (r *Reconciler) ensureWatch(ctx context.Context, apiVersion, kind string, mapFn handler.MapFunc) error {
	return r.watchKind(ctx, apiVersion, kind, handler.EnqueueRequestsFromMapFunc(mapFn))
}

// ensureMachineWatch starts watching a kind of infrastructure machine, once
// per kind. An infrastructure machine created, or its status written, is
// the infrastructure provider's bulk work, and the Machines that follow it
// are this controller's: reconciled behind the pools with work. Its
// deletion, or its labels changed (whose pool it is), are not. Its create
// without a status wakes no pool (statusFollows).
func (r *Reconciler) ensureMachineWatch(ctx context.Context, apiVersion, kind string) error {
	h := priority.LowCreates(priority.LowUnless(handler.EnqueueRequestsFromMapFunc(r.infraMachineToMachinePool), labelsOrDeletionChanged))
	return r.watchKind(ctx, apiVersion, kind, statusFollows{h})
}

// watchKind starts watching kind with h, once per kind, and indexes its
// objects by IndexPoolMember.
func (r *Reconciler) watchKind(ctx context.Context, apiVersion, kind string, h handler.EventHandler) error {
	if r.watchFunc == nil {
		return nil // not set up with a manager (unit tests)
	}
	key := apiVersion + "/" + kind
	r.watchMu.Lock()
	defer r.watchMu.Unlock()
	if r.watching == nil {
		r.watching = map[string]bool{}
	}
	if r.watching[key] {
		return nil
	}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	if r.fieldIndexer != nil && !r.indexed[key] {
		if err := r.fieldIndexer.IndexField(ctx, u, IndexPoolMember, poolMemberIndex); err != nil {
			return fmt.Errorf("indexing %s by %s: %w", key, IndexPoolMember, err)
		}
		if r.indexed == nil {
			r.indexed = map[string]bool{}
		}
		r.indexed[key] = true
	}
	if err := r.watchFunc(u, h); err != nil {
		return fmt.Errorf("watching %s: %w", key, err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Watching an external kind", "kind", key)
	r.watching[key] = true
	return nil
}

// statusFollows drops the create of an infrastructure machine that has no
// status yet: its provider writes the status right after (mpool's engine
// with the create's answer), and that update wakes the pool. Seen before
// it, the machine reports no status.latestModelApplied, and the pool's
// UpToDate condition went Unknown for the moment between the two: two more
// writes of the MachinePool's status for nothing. Objects listed when the
// watch starts come as creates too; their pools are reconciled at start
// anyway.
type statusFollows struct{ handler.EventHandler }

// Create implements handler.EventHandler.
func (h statusFollows) Create(ctx context.Context, ev event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if u, ok := ev.Object.(*unstructured.Unstructured); ok {
		if _, has := u.Object["status"]; !has {
			return
		}
	}
	h.EventHandler.Create(ctx, ev, q)
}

// metadataOrDeletionChanged reports whether a pool Machine's labels,
// annotations or deletion changed: what this controller acts on, where its
// own spec and status syncs are bulk work.
func metadataOrDeletionChanged(oldObj, newObj client.Object) bool {
	return labelsOrDeletionChanged(oldObj, newObj) || !maps.Equal(oldObj.GetAnnotations(), newObj.GetAnnotations())
}

// labelsOrDeletionChanged reports whether an infrastructure machine's labels
// (the pool it belongs to) or deletion changed.
func labelsOrDeletionChanged(oldObj, newObj client.Object) bool {
	return !maps.Equal(oldObj.GetLabels(), newObj.GetLabels()) ||
		!oldObj.GetDeletionTimestamp().Equal(newObj.GetDeletionTimestamp())
}

// observeCreation tells hold whether the pool, which this reconcile moved
// from phase from to phase to, is being created: from Pending or
// Provisioning (a new pool, or one whose bootstrap data or infrastructure
// is not ready) until it is first Running, Failed or deleted; the phases on
// the way (ScalingUp, Provisioned: its instances launched, their Nodes not
// all Ready) keep what it was, so a Running pool's scale-up is not a
// creation. A pool being created takes a step with each new phase.
func observeCreation(hold *priority.Hold, pool types.NamespacedName, from, to string) {
	was := hold.Creating(pool)
	var creating bool
	switch clusterv1.MachinePoolPhase(to) {
	case clusterv1.MachinePoolPhasePending, clusterv1.MachinePoolPhaseProvisioning:
		creating = true
	case clusterv1.MachinePoolPhaseScalingUp, clusterv1.MachinePoolPhaseScalingDown, clusterv1.MachinePoolPhaseScaling, clusterv1.MachinePoolPhaseProvisioned:
		creating = was
	}
	hold.Observe(pool, creating, (was || creating) && to != from)
}
