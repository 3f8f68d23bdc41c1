package metrics

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/internal/capi"
)

// Names of the metrics PoolCollector exports.
const (
	ReplicasMetric        = "mpool_machinepool_replicas"
	PhaseMetric           = "mpool_machinepool_phase"
	RolloutProgressMetric = "mpool_machinepool_rollout_progress_ratio"
	InstancesMetric       = "mpool_machinepool_instances"
	CollectErrorsMetric   = "mpool_machinepool_collect_errors_total"
)

// Values of the state label of mpool_machinepool_replicas.
const (
	// ReplicasDesired is spec.replicas.
	ReplicasDesired = "desired"
	// ReplicasCurrent is status.replicas: the instances the infrastructure
	// pool has (0 until reported).
	ReplicasCurrent = "current"
	// ReplicasReady is status.readyReplicas: instances whose Node is Ready.
	ReplicasReady = "ready"
	// ReplicasAvailable is status.availableReplicas: instances Ready for at
	// least minReadySeconds.
	ReplicasAvailable = "available"
	// ReplicasUnavailable is the desired replicas not available yet:
	// spec.replicas (1 until defaulted) less status.availableReplicas, at
	// least 0, as v1beta1's status.unavailableReplicas was.
	ReplicasUnavailable = "unavailable"
	// ReplicasUpToDate counts the per-instance infrastructure machines that
	// are not being deleted and report status.latestModelApplied.
	ReplicasUpToDate = "up_to_date"
)

// InstanceStates are the values of the state label of
// mpool_machinepool_instances that are always exported, as the
// per-instance infrastructure machines report them in status.state.
var InstanceStates = []string{"Pending", "Booting", "Running", "Failed", "Deleting"}

// InstanceStateUnknown labels the instances whose status.state is missing or
// not one of InstanceStates; it is exported only when there are some.
const InstanceStateUnknown = "Unknown"

// Phases are the values of the phase label of mpool_machinepool_phase.
var Phases = []clusterv1.MachinePoolPhase{
	clusterv1.MachinePoolPhasePending,
	clusterv1.MachinePoolPhaseProvisioning,
	clusterv1.MachinePoolPhaseProvisioned,
	clusterv1.MachinePoolPhaseRunning,
	clusterv1.MachinePoolPhaseScalingUp,
	clusterv1.MachinePoolPhaseScalingDown,
	clusterv1.MachinePoolPhaseScaling,
	clusterv1.MachinePoolPhaseDeleting,
	clusterv1.MachinePoolPhaseFailed,
	clusterv1.MachinePoolPhaseUnknown,
}

// collectTimeout bounds the cache reads of one scrape; they only wait when
// an informer is still syncing.
const collectTimeout = 10 * time.Second

var (
	replicasDesc = prometheus.NewDesc(ReplicasMetric,
		"Replicas of a MachinePool by state: desired (spec.replicas), current (instances of the infrastructure pool), "+
			"ready (Node Ready), available (Ready for minReadySeconds), unavailable (desired but not available) "+
			"and up_to_date (instances running the pool's latest model, when the infrastructure pool reports per-instance objects).",
		[]string{"namespace", "name", "cluster", "state"}, nil)
	phaseDesc = prometheus.NewDesc(PhaseMetric,
		"Phase of a MachinePool: 1 for its current status.phase, 0 for the others.",
		[]string{"namespace", "name", "cluster", "phase"}, nil)
	rolloutDesc = prometheus.NewDesc(RolloutProgressMetric,
		"Fraction of a MachinePool's desired replicas that run its latest model and are Ready, from 0 to 1; 1 when the rollout is complete or no replicas are desired.",
		[]string{"namespace", "name", "cluster"}, nil)
	instancesDesc = prometheus.NewDesc(InstancesMetric,
		"Instances of a MachinePool by lifecycle state (status.state of its per-instance infrastructure machines; "+
			"Deleting also for those being deleted).",
		[]string{"namespace", "name", "cluster", "state"}, nil)
)

// PoolCollector is a prometheus.Collector that reports every MachinePool at
// scrape time from a client.Reader, normally the manager's cache. It keeps
// no series between scrapes, so a deleted pool's series go with it.
type PoolCollector struct {
	ctx    context.Context
	reader client.Reader
	// refGVK resolves an infrastructure reference (group and kind) to the
	// version its objects are read at.
	refGVK func(context.Context, clusterv1.ContractVersionedObjectReference) (schema.GroupVersionKind, error)
	errors prometheus.Counter
}

var _ prometheus.Collector = (*PoolCollector)(nil)

// NewPoolCollector returns a collector reading through c, which also
// resolves the version of each infrastructure pool's kind as the controllers
// do (capi.RefGVK: its CustomResourceDefinition's contract labels). ctx
// bounds every read (a cancelled ctx makes scrapes report no pools) and
// carries the logger read errors are logged to.
func NewPoolCollector(ctx context.Context, c client.Client) *PoolCollector {
	return newPoolCollector(ctx, c, c)
}

// newPoolCollector returns a collector reading objects from r and resolving
// reference versions through c.
func newPoolCollector(ctx context.Context, r client.Reader, c client.Client) *PoolCollector {
	return &PoolCollector{
		ctx:    ctx,
		reader: r,
		refGVK: func(ctx context.Context, ref clusterv1.ContractVersionedObjectReference) (schema.GroupVersionKind, error) {
			return capi.RefGVK(ctx, c, ref)
		},
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: CollectErrorsMetric,
			Help: "Errors reading MachinePools or their infrastructure from the cache while collecting the mpool_machinepool_* metrics.",
		}),
	}
}

// Describe implements prometheus.Collector.
func (c *PoolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{replicasDesc, phaseDesc, rolloutDesc, instancesDesc} {
		ch <- d
	}
	c.errors.Describe(ch)
}

// Collect implements prometheus.Collector. A read error is logged and
// counted in mpool_machinepool_collect_errors_total, and only the series
// that could be computed are exported: one failing read must not fail the
// whole scrape.
func (c *PoolCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(c.ctx, collectTimeout)
	defer cancel()
	for _, p := range c.observe(ctx) {
		p.emit(ch)
	}
	c.errors.Collect(ch)
}

// poolState is what one scrape observed of one MachinePool.
type poolState struct {
	namespace, name, cluster string
	phase                    clusterv1.MachinePoolPhase
	// desired is nil until the MachinePool controller has defaulted
	// spec.replicas.
	desired                                *int32
	current, ready, available, unavailable int32

	// instancesKnown is true when the infrastructure pool reports
	// per-instance objects and they could be read.
	instancesKnown bool
	upToDate       int32
	// upToDateReady counts the up-to-date instances that report
	// status.ready.
	upToDateReady int32
	instances     map[string]int32

	// infraUID identifies the infrastructure pool that controls the
	// per-instance objects, when known.
	infraUID types.UID
}

// instanceGroup is a set of per-instance objects listed at once: one kind in
// one namespace.
type instanceGroup struct {
	apiVersion, kind, namespace string
}

// observe reads every MachinePool, its infrastructure pool and the
// per-instance objects of that pool. The objects are the cache's own: they
// are read, never modified.
func (c *PoolCollector) observe(ctx context.Context) []*poolState {
	pools := &clusterv1.MachinePoolList{}
	if err := c.reader.List(ctx, pools, client.UnsafeDisableDeepCopy); err != nil {
		c.fail(fmt.Errorf("listing MachinePools: %w", err))
		return nil
	}
	out := make([]*poolState, 0, len(pools.Items))
	groups := map[instanceGroup][]*poolState{}
	for i := range pools.Items {
		mp := &pools.Items[i]
		st := &poolState{
			namespace:   mp.Namespace,
			name:        mp.Name,
			cluster:     mp.Spec.ClusterName,
			phase:       mp.Status.GetTypedPhase(),
			desired:     mp.Spec.Replicas,
			current:     ptr.Deref(mp.Status.Replicas, 0),
			ready:       ptr.Deref(mp.Status.ReadyReplicas, 0),
			available:   ptr.Deref(mp.Status.AvailableReplicas, 0),
			unavailable: unavailableReplicas(mp),
		}
		out = append(out, st)
		g, ok := c.instanceGroupOf(ctx, mp, st)
		if ok {
			groups[g] = append(groups[g], st)
		}
	}
	for g, members := range groups {
		c.countInstances(ctx, g, members)
	}
	return out
}

// unavailableReplicas is the desired replicas that are not available:
// spec.replicas (1 until the controller defaults it, as the controller
// counts) less status.availableReplicas, at least 0. It is what v1beta1's
// status.unavailableReplicas reported, computed from the v1beta2 fields.
func unavailableReplicas(mp *clusterv1.MachinePool) int32 {
	return max(0, ptr.Deref(mp.Spec.Replicas, 1)-ptr.Deref(mp.Status.AvailableReplicas, 0))
}

// instanceGroupOf reads mp's infrastructure pool, as the MachinePool
// controller does (unstructured, in mp's namespace, at the version its
// CustomResourceDefinition's contract names), and returns the kind of its
// per-instance objects. It returns false when there are none to count: the
// infrastructure pool does not exist (yet), does not report
// status.infrastructureMachineKind, or cannot be read.
func (c *PoolCollector) instanceGroupOf(ctx context.Context, mp *clusterv1.MachinePool, st *poolState) (instanceGroup, bool) {
	ref := mp.Spec.Template.Spec.InfrastructureRef
	if ref.APIGroup == "" || ref.Kind == "" || ref.Name == "" {
		return instanceGroup{}, false
	}
	gvk, err := c.refGVK(ctx, ref)
	if err != nil {
		c.fail(fmt.Errorf("resolving the version of %s %s of MachinePool %s: %w", ref.Kind, ref.Name, klog.KObj(mp), err))
		return instanceGroup{}, false
	}
	infra := &unstructured.Unstructured{}
	infra.SetGroupVersionKind(gvk)
	if err := c.reader.Get(ctx, client.ObjectKey{Namespace: mp.Namespace, Name: ref.Name}, infra, client.UnsafeDisableDeepCopy); err != nil {
		if !apierrors.IsNotFound(err) {
			c.fail(fmt.Errorf("reading %s %s of MachinePool %s: %w", ref.Kind, ref.Name, klog.KObj(mp), err))
		}
		return instanceGroup{}, false
	}
	kind, _, err := unstructured.NestedString(infra.Object, "status", "infrastructureMachineKind")
	if err != nil {
		c.fail(fmt.Errorf("reading the machine kind of %s %s: %w", ref.Kind, klog.KObj(infra), err))
		return instanceGroup{}, false
	}
	if kind == "" {
		return instanceGroup{}, false
	}
	st.infraUID = infra.GetUID()
	return instanceGroup{apiVersion: infra.GetAPIVersion(), kind: kind, namespace: mp.Namespace}, true
}

// countInstances lists the per-instance objects of g once and counts them
// into the members whose infrastructure pool controls them.
func (c *PoolCollector) countInstances(ctx context.Context, g instanceGroup, members []*poolState) {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(g.apiVersion)
	list.SetKind(g.kind + "List")
	if err := c.reader.List(ctx, list, client.InNamespace(g.namespace), client.UnsafeDisableDeepCopy); err != nil {
		c.fail(fmt.Errorf("listing %s objects in namespace %s: %w", g.kind, g.namespace, err))
		return
	}
	byInfra := make(map[types.UID]*poolState, len(members))
	for _, st := range members {
		st.instancesKnown = true
		st.instances = make(map[string]int32, len(InstanceStates))
		byInfra[st.infraUID] = st
	}
	for i := range list.Items {
		obj := &list.Items[i]
		owner := metav1.GetControllerOfNoCopy(obj)
		if owner == nil {
			continue
		}
		st := byInfra[owner.UID]
		if st == nil {
			continue
		}
		st.instances[instanceState(obj)]++
		if obj.GetDeletionTimestamp() != nil {
			continue
		}
		if latest, _, _ := unstructured.NestedBool(obj.Object, "status", "latestModelApplied"); latest {
			st.upToDate++
			if ready, _, _ := unstructured.NestedBool(obj.Object, "status", "ready"); ready {
				st.upToDateReady++
			}
		}
	}
}

// instanceState is the state label of a per-instance object.
func instanceState(obj *unstructured.Unstructured) string {
	if obj.GetDeletionTimestamp() != nil {
		return "Deleting"
	}
	s, _, _ := unstructured.NestedString(obj.Object, "status", "state")
	for _, known := range InstanceStates {
		if s == known {
			return s
		}
	}
	return InstanceStateUnknown
}

// fail records a read error.
func (c *PoolCollector) fail(err error) {
	c.errors.Inc()
	log.FromContext(c.ctx).Error(err, "Cannot collect MachinePool metrics")
}

// emit sends p's series.
func (p *poolState) emit(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, extra ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append([]string{p.namespace, p.name, p.cluster}, extra...)...)
	}
	if p.desired != nil {
		gauge(replicasDesc, float64(*p.desired), ReplicasDesired)
	}
	gauge(replicasDesc, float64(p.current), ReplicasCurrent)
	gauge(replicasDesc, float64(p.ready), ReplicasReady)
	gauge(replicasDesc, float64(p.available), ReplicasAvailable)
	gauge(replicasDesc, float64(p.unavailable), ReplicasUnavailable)
	for _, ph := range Phases {
		v := 0.0
		if ph == p.phase {
			v = 1
		}
		gauge(phaseDesc, v, string(ph))
	}
	if !p.instancesKnown {
		return
	}
	gauge(replicasDesc, float64(p.upToDate), ReplicasUpToDate)
	if p.desired != nil {
		gauge(rolloutDesc, rolloutProgress(p.upToDateReady, *p.desired))
	}
	for _, s := range InstanceStates {
		gauge(instancesDesc, float64(p.instances[s]), s)
	}
	if n := p.instances[InstanceStateUnknown]; n > 0 {
		gauge(instancesDesc, float64(n), InstanceStateUnknown)
	}
}

// rolloutProgress is the fraction of desired replicas that are up to date
// and Ready, capped at 1 (surge instances can make upToDateReady exceed
// desired).
func rolloutProgress(upToDateReady, desired int32) float64 {
	if desired <= 0 {
		return 1
	}
	return float64(min(upToDateReady, desired)) / float64(desired)
}
