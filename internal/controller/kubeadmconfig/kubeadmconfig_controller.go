package kubeadmconfig

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
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

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/api/conditions"
	"github.com/mpool-dev/mpool/internal/bootstrap"
	"github.com/mpool-dev/mpool/internal/fieldowners"
	"github.com/mpool-dev/mpool/internal/lastwrite"
	"github.com/mpool-dev/mpool/internal/workload"
)

// Finalizer is set on pool-owned KubeadmConfigs so that their bootstrap
// tokens are deleted from the workload cluster with them.
const Finalizer = "bootstrap.cluster.x-k8s.io/bootstrap-tokens"

// ControllerName names the controller, its logger and its event recorder.
const ControllerName = "kubeadmconfig"

// WorkloadClients gives clients for workload clusters. Client returns an error
// when the Cluster's workload cluster cannot be reached (for example when its
// "<cluster>-kubeconfig" Secret is missing). internal/workload's ClusterCache
// implements it.
type WorkloadClients interface {
	Client(ctx context.Context, cluster types.NamespacedName) (client.Client, error)
}

// connectionSource is what a WorkloadClients that tells of connects and
// disconnects offers (workload.ClusterCache does).
type connectionSource interface {
	ClusterSource(fn workload.ClusterMapFunc) source.Source
}

// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=kubeadmconfigs,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=kubeadmconfigs/status;kubeadmconfigs/finalizers,verbs=get;update;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters;machinepools,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconciler reconciles KubeadmConfigs owned by MachinePools. Build it as a
// struct literal; SetupWithManager fills the unset optional fields.
type Reconciler struct {
	// Client reads and writes the management cluster. Defaults to the
	// manager's (cached) client.
	Client client.Client
	// FieldOwners, when set, moves the managed fields entries that clients
	// wrote in v1beta1 to v1beta2 before the first write of a config with
	// an owner (the MachinePool controller's write of the owner reference
	// moves them first), so that no write of the controller makes the API
	// server convert the object twice through the conversion webhook
	// (package fieldowners).
	FieldOwners *fieldowners.Upgrader
	// APIReader reads the management cluster without a cache. Defaults to
	// the manager's API reader.
	APIReader client.Reader
	// Workload gives clients for workload clusters. Required.
	Workload WorkloadClients
	// Clock is the time source. Defaults to the real clock.
	Clock clock.PassiveClock
	// Recorder records events. Defaults to the manager's recorder.
	Recorder events.EventRecorder
	// TokenTTL is how long a bootstrap token is valid. Defaults to
	// DefaultTokenTTL.
	TokenTTL time.Duration

	// tokenChecks remembers each config's last look at its tokens in the
	// workload cluster (types.UID → tokenCheck).
	tokenChecks sync.Map
	// written remembers this controller's writes to each config until the
	// cache shows them: a reconcile in between works from the last write's
	// answer, and does not write the same status again with new transition
	// times.
	written lastwrite.Memo
}

// SetupWithManager registers the reconciler with mgr. It watches
// KubeadmConfigs, the data Secrets they own, MachinePools (enqueueing their
// bootstrap configRef), Clusters (enqueueing the configs of their pools) and
// the Secrets configs render from (a Cluster's CA, files' contentFrom and
// users' passwdFrom).
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Workload == nil {
		return errors.New("kubeadmconfig reconciler: Workload must be set")
	}
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(ControllerName + "-controller")
	}
	if r.TokenTTL <= 0 {
		r.TokenTTL = DefaultTokenTTL
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &bootstrapv1.KubeadmConfig{}, IndexSecretRef, secretRefIndex); err != nil {
		return fmt.Errorf("indexing KubeadmConfigs by %s: %w", IndexSecretRef, err)
	}
	b := ctrl.NewControllerManagedBy(mgr)
	if cs, ok := r.Workload.(connectionSource); ok {
		// A config that could not reach its workload cluster goes on when
		// the cluster connects, not at the end of its error backoff: the
		// Cluster's own status writes no longer wake it.
		b = b.WatchesRawSource(cs.ClusterSource(func(ctx context.Context, cluster types.NamespacedName) []reconcile.Request {
			return r.clusterToConfigs(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace, Name: cluster.Name}})
		}))
	}
	err := b.
		Named(ControllerName).
		For(&bootstrapv1.KubeadmConfig{}).
		Owns(&corev1.Secret{}).
		Watches(&clusterv1.MachinePool{}, handler.EnqueueRequestsFromMapFunc(machinePoolToConfig),
			builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
				return poolChangedForConfig(e.ObjectOld, e.ObjectNew)
			}})).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterToConfigs),
			builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
				return clusterChangedForConfig(e.ObjectOld, e.ObjectNew)
			}})).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.secretToConfigs)).
		WithOptions(options).
		Complete(r)
	if err != nil {
		return fmt.Errorf("setting up the kubeadmconfig controller: %w", err)
	}
	return nil
}

// scope is what one reconcile works on and observes.
type scope struct {
	config     *bootstrapv1.KubeadmConfig
	pool       *clusterv1.MachinePool
	cluster    *clusterv1.Cluster
	dataSecret *corev1.Secret

	certificates condition
	data         condition
	upToDate     condition
	token        condition
}

// Reconcile brings one KubeadmConfig's data Secret and bootstrap token to
// their desired state.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	cfg := &bootstrapv1.KubeadmConfig{}
	if err := r.Client.Get(ctx, req.NamespacedName, cfg); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if last, ok := r.written.Latest(writeKey(cfg), cfg.ResourceVersion).(*bootstrapv1.KubeadmConfig); ok {
		// The cache has not shown this controller's last write: work from
		// its answer, as if it had.
		cfg = last
	}
	log := ctrl.LoggerFrom(ctx).WithValues("KubeadmConfig", klog.KObj(cfg))
	ctx = ctrl.LoggerInto(ctx, log)
	before := cfg.DeepCopy()
	s := &scope{config: cfg}
	var conditionsSet bool
	defer func() {
		if conditionsSet {
			r.setConditions(s, reterr == nil)
		}
		if err := r.patch(ctx, before, cfg); err != nil {
			reterr = kerrors.NewAggregate([]error{reterr, err})
		}
	}()

	if !cfg.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, s)
	}

	ownerRef := machinePoolOwner(cfg)
	if ownerRef == nil {
		// Not a pool's config (yet): the MachinePool controller sets the
		// owner reference, which triggers a new reconcile.
		return ctrl.Result{}, nil
	}
	// A config with no owner is written nothing: the MachinePool
	// controller's write of the owner reference moves its managed fields
	// of v1beta1, and this catches those it did not (package fieldowners).
	if wrote, err := r.FieldOwners.Ensure(ctx, r.Client, cfg); err != nil {
		log.V(1).Info("Could not move managed fields of v1beta1 to v1beta2: each write converts the object", "err", err.Error())
	} else if wrote {
		r.written.Wrote(writeKey(cfg), before.ResourceVersion, cfg.DeepCopy())
		before = cfg.DeepCopy()
	}
	pool := &clusterv1.MachinePool{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cfg.Namespace, Name: ownerRef.Name}, pool); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("getting MachinePool %s/%s: %w", cfg.Namespace, ownerRef.Name, err)
	}
	s.pool = pool
	log = log.WithValues("MachinePool", klog.KObj(pool), "Cluster", klog.KRef(pool.Namespace, pool.Spec.ClusterName))
	ctx = ctrl.LoggerInto(ctx, log)
	conditionsSet = true
	if err := r.observeDataSecret(ctx, s); err != nil {
		return ctrl.Result{}, err
	}

	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: pool.Namespace, Name: pool.Spec.ClusterName}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			s.data = waiting(conditions.WaitingForClusterReason, "Waiting for Cluster %s to exist", pool.Spec.ClusterName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("getting Cluster %s/%s: %w", pool.Namespace, pool.Spec.ClusterName, err)
	}
	s.cluster = cluster
	if isPaused(cluster, cfg) {
		conditionsSet = false
		r.setPausedCondition(cfg, true)
		return ctrl.Result{}, nil
	}

	if controllerutil.AddFinalizer(cfg, Finalizer) {
		// The finalizer is written before any token it must clean up is
		// created, and the reconcile goes on: one status write and one
		// reconcile fewer than waiting for the update to bring it back.
		// Only the metadata is written and taken back: the status this
		// reconcile has observed so far (an adopted data Secret) stays in
		// cfg for the status write at the end.
		obj := before.DeepCopy()
		obj.ObjectMeta = *cfg.ObjectMeta.DeepCopy()
		if err := r.Client.Patch(ctx, obj, client.MergeFrom(before)); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding the finalizer to KubeadmConfig %s: %w", client.ObjectKeyFromObject(cfg), err)
		}
		r.written.Wrote(writeKey(cfg), before.ResourceVersion, obj.DeepCopy())
		before.ObjectMeta = *obj.ObjectMeta.DeepCopy()
		cfg.ObjectMeta = obj.ObjectMeta
	}

	res, err := r.reconcileDataSecret(ctx, s)
	if err != nil || !res.IsZero() || s.dataSecret == nil {
		return res, err
	}
	// The token is looked after even while the content cannot be rendered
	// again: instances keep joining with the data rendered earlier.
	var errs []error
	for _, phase := range []func(context.Context, *scope) (ctrl.Result, error){r.reconcileDataContent, r.reconcileToken} {
		pres, err := phase(ctx, s)
		errs = append(errs, err)
		res = earliest(res, pres)
	}
	return res, errors.Join(errs...)
}

// earliest returns the result that requeues sooner; zero means never.
func earliest(a, b ctrl.Result) ctrl.Result {
	if a.RequeueAfter == 0 || (b.RequeueAfter != 0 && b.RequeueAfter < a.RequeueAfter) {
		return b
	}
	return a
}

// patch writes cfg's metadata and status changes, each only when changed.
func (r *Reconciler) patch(ctx context.Context, before, cfg *bootstrapv1.KubeadmConfig) error {
	status := cfg.Status.DeepCopy()
	if !equality.Semantic.DeepEqual(before.ObjectMeta, cfg.ObjectMeta) {
		rv := cfg.ResourceVersion
		if err := r.Client.Patch(ctx, cfg, client.MergeFrom(before)); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return fmt.Errorf("patching KubeadmConfig %s: %w", client.ObjectKeyFromObject(cfg), err)
		}
		r.written.Wrote(writeKey(cfg), rv, cfg.DeepCopy())
	}
	if equality.Semantic.DeepEqual(before.Status, *status) {
		return nil
	}
	base := cfg.DeepCopy()
	base.Status = before.Status
	cfg.Status = *status
	if err := r.Client.Status().Patch(ctx, cfg, client.MergeFrom(base)); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("patching the status of KubeadmConfig %s: %w", client.ObjectKeyFromObject(cfg), err)
	}
	r.written.Wrote(writeKey(cfg), base.ResourceVersion, cfg.DeepCopy())
	return nil
}

// writeKey names this controller's writes to cfg in Reconciler.written.
func writeKey(cfg *bootstrapv1.KubeadmConfig) lastwrite.Key {
	return lastwrite.Key{UID: cfg.UID, Part: "config"}
}

// dataSecretKey is the key of cfg's data Secret's create in written.
func dataSecretKey(cfg *bootstrapv1.KubeadmConfig) lastwrite.Key {
	return lastwrite.Key{UID: cfg.UID, Part: "data-secret"}
}

// machinePoolOwner returns cfg's owner reference to a MachinePool, or nil.
func machinePoolOwner(cfg *bootstrapv1.KubeadmConfig) *metav1.OwnerReference {
	for i, ref := range cfg.OwnerReferences {
		if ref.Kind == "MachinePool" && apiGroup(ref.APIVersion) == clusterv1.GroupVersion.Group {
			return &cfg.OwnerReferences[i]
		}
	}
	return nil
}

// apiGroup returns the group of an apiVersion, "" when it does not parse.
func apiGroup(apiVersion string) string {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return ""
	}
	return gv.Group
}

func isPaused(cluster *clusterv1.Cluster, cfg *bootstrapv1.KubeadmConfig) bool {
	if ptr.Deref(cluster.Spec.Paused, false) {
		return true
	}
	_, ok := cfg.Annotations[clusterv1.PausedAnnotation]
	return ok
}

// machinePoolToConfig enqueues the KubeadmConfig a MachinePool references.
func machinePoolToConfig(_ context.Context, o client.Object) []reconcile.Request {
	mp, ok := o.(*clusterv1.MachinePool)
	if !ok {
		return nil
	}
	if name, ok := configRefName(mp); ok {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: mp.Namespace, Name: name}}}
	}
	return nil
}

// poolChangedForConfig reports whether a MachinePool update changes what
// its KubeadmConfig reads of it: its template (the version, the config's
// reference), replicas and Cluster, whether it is joining instances
// (poolJoining: the token is extended while it is), its metadata (pausing,
// deletion). Its other writes — the status, and spec.providerIDList, which
// follows the instances — several for each pool that scales, each cost the
// config's reconcile a request to the workload cluster for nothing.
func poolChangedForConfig(oldObj, newObj client.Object) bool {
	o, ok1 := oldObj.(*clusterv1.MachinePool)
	n, ok2 := newObj.(*clusterv1.MachinePool)
	if !ok1 || !ok2 {
		return true
	}
	return !ptr.Equal(o.Spec.Replicas, n.Spec.Replicas) || o.Spec.ClusterName != n.Spec.ClusterName ||
		!equality.Semantic.DeepEqual(&o.Spec.Template, &n.Spec.Template) || poolJoining(o) != poolJoining(n) ||
		!metadataEqual(o, n)
}

// clusterChangedForConfig reports whether a Cluster update changes what the
// KubeadmConfigs of its pools read of it: its spec (pausing, the control
// plane endpoint), its metadata, and its infrastructure and control plane
// becoming ready (as upstream's kubeadm bootstrap provider watches them).
// Every other status write of a Cluster reconciled every config of its
// pools, each with a request to the workload cluster.
func clusterChangedForConfig(oldObj, newObj client.Object) bool {
	o, ok1 := oldObj.(*clusterv1.Cluster)
	n, ok2 := newObj.(*clusterv1.Cluster)
	if !ok1 || !ok2 {
		return true
	}
	return !equality.Semantic.DeepEqual(&o.Spec, &n.Spec) ||
		!ptr.Equal(o.Status.Initialization.InfrastructureProvisioned, n.Status.Initialization.InfrastructureProvisioned) ||
		!ptr.Equal(o.Status.Initialization.ControlPlaneInitialized, n.Status.Initialization.ControlPlaneInitialized) ||
		!metadataEqual(o, n)
}

// metadataEqual reports whether two objects have the same deletion,
// annotations, labels and finalizers.
func metadataEqual(o, n client.Object) bool {
	return o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp()) &&
		maps.Equal(o.GetAnnotations(), n.GetAnnotations()) && maps.Equal(o.GetLabels(), n.GetLabels()) &&
		slices.Equal(o.GetFinalizers(), n.GetFinalizers())
}

// clusterToConfigs enqueues the KubeadmConfigs of a Cluster's MachinePools.
func (r *Reconciler) clusterToConfigs(ctx context.Context, o client.Object) []reconcile.Request {
	pools := &clusterv1.MachinePoolList{}
	if err := r.Client.List(ctx, pools, client.InNamespace(o.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing MachinePools to enqueue their KubeadmConfigs", "Cluster", klog.KObj(o))
		return nil
	}
	var reqs []reconcile.Request
	for i := range pools.Items {
		mp := &pools.Items[i]
		if mp.Spec.ClusterName != o.GetName() {
			continue
		}
		if name, ok := configRefName(mp); ok {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: mp.Namespace, Name: name}})
		}
	}
	return reqs
}

// IndexSecretRef indexes KubeadmConfigs by the names of the Secrets their
// files and users render from (bootstrap.SecretKeys), so that a Secret's
// event finds the configs that read it without looking at every config.
const IndexSecretRef = "kubeadmconfig.secretRef"

// secretRefIndex is the IndexSecretRef of o.
func secretRefIndex(o client.Object) []string {
	cfg, ok := o.(*bootstrapv1.KubeadmConfig)
	if !ok {
		return nil
	}
	keys := bootstrap.SecretKeys(&cfg.Spec)
	names := make([]string, 0, len(keys))
	for _, k := range keys {
		if !slices.Contains(names, k.Name) {
			names = append(names, k.Name)
		}
	}
	return names
}

// secretToConfigs enqueues the KubeadmConfigs that render from a Secret: for
// a "<cluster>-ca" Secret the configs of the Cluster's pools, and the configs
// whose files or users reference the Secret (IndexSecretRef). Every Secret
// of the namespace passes here, most of them read by no config (each
// pool's data Secret, the kubeconfigs): the index keeps that a lookup, where
// listing the namespace's configs made a management cluster of N pools do N
// copies per Secret written.
func (r *Reconciler) secretToConfigs(ctx context.Context, o client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	if cluster, ok := strings.CutSuffix(o.GetName(), ClusterCASecretName("")); ok {
		reqs = r.clusterToConfigs(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: o.GetNamespace(), Name: cluster}})
	}
	configs := &bootstrapv1.KubeadmConfigList{}
	if err := r.Client.List(ctx, configs, client.InNamespace(o.GetNamespace()),
		client.MatchingFields{IndexSecretRef: o.GetName()}, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing KubeadmConfigs to enqueue those that reference a Secret", "Secret", klog.KObj(o))
		return reqs
	}
	for i := range configs.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&configs.Items[i])})
	}
	return reqs
}

// configRefName returns the name of a MachinePool's KubeadmConfig.
func configRefName(mp *clusterv1.MachinePool) (string, bool) {
	ref := mp.Spec.Template.Spec.Bootstrap.ConfigRef
	if ref.Kind != "KubeadmConfig" || ref.Name == "" || ref.APIGroup != bootstrapv1.GroupVersion.Group {
		return "", false
	}
	return ref.Name, true
}
