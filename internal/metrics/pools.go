package metrics

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/contract"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// Names of the metrics PoolCollector exports.
const (
	ReplicasMetric        = "mpool_machinepool_replicas"
	PhaseMetric           = "mpool_machinepool_phase"
	RolloutProgressMetric = "mpool_machinepool_rollout_progress_ratio"
	InstancesMetric       = "mpool_machinepool_instances"
	RolloutStoppedMetric  = "mpool_machinepool_rollout_stopped"
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
// mpool_machinepool_instances that are always exported: the instance
// states of the provider contract (contract.InstanceStates), which every
// provider's reader maps its per-instance objects onto.
var InstanceStates = func() []string {
	var out []string
	for _, st := range contract.InstanceStates {
		if st != contract.InstanceUnknown {
			out = append(out, string(st))
		}
	}
	return out
}()

// InstanceStateUnknown labels the instances whose state is not known yet
// (the engine has not reported them); it is exported only when there are
// some.
const InstanceStateUnknown = string(contract.InstanceUnknown)

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

// StopReasons are the values of the reason label of
// mpool_machinepool_rollout_stopped: why the engine stopped a rollout
// itself (RolloutProgressing False with one of these reasons).
var StopReasons = []string{
	infrav1.RolloutBlockedReason,
	infrav1.ProgressDeadlineExceededReason,
	infrav1.ReplacementsFailingReason,
	infrav1.DrainBlockedReason,
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
	stoppedDesc = prometheus.NewDesc(RolloutStoppedMetric,
		"Whether the rollout engine stopped a MachinePool's rollout itself, by reason: 1 for the current one "+
			"(RolloutBlocked: the cloud cannot create the new model; ProgressDeadlineExceeded, ReplacementsFailing: "+
			"the engine paused a rollout that stopped making progress), 0 for the others.",
		[]string{"namespace", "name", "cluster", "reason"}, nil)
	instancesDesc = prometheus.NewDesc(InstancesMetric,
		"Instances of a MachinePool by lifecycle state, one vocabulary for every provider (Pending, Booting, Running, Failed, Deleting; "+
			"Unknown before the controller first reports an instance).",
		[]string{"namespace", "name", "cluster", "state"}, nil)
)

// PoolCollector is a prometheus.Collector that reports every MachinePool at
// scrape time from a client.Reader, normally the manager's cache. It keeps
// no series between scrapes, so a deleted pool's series go with it.
type PoolCollector struct {
	ctx    context.Context
	reader client.Reader
	// readers are the providers' adapters by infra pool group and kind:
	// only they know their kinds' fields.
	readers map[schema.GroupKind]contract.Adapter
	errors  prometheus.Counter
}

var _ prometheus.Collector = (*PoolCollector)(nil)

// NewPoolCollector returns a collector reading through c. Instances are
// counted for the pools whose kind one of adapters serves, read through
// that adapter (contract.Reader); pools of other kinds report their
// MachinePool's counts only. ctx bounds every read (a cancelled ctx makes
// scrapes report no pools) and carries the logger read errors are logged
// to.
func NewPoolCollector(ctx context.Context, c client.Reader, adapters []contract.Adapter) *PoolCollector {
	readers := make(map[schema.GroupKind]contract.Adapter, len(adapters))
	for _, a := range adapters {
		readers[schema.GroupKind{Group: infrav1.GroupVersion.Group, Kind: a.Kinds().Pool}] = a
	}
	return &PoolCollector{
		ctx:     ctx,
		reader:  c,
		readers: readers,
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: CollectErrorsMetric,
			Help: "Errors reading MachinePools or their infrastructure from the cache while collecting the mpool_machinepool_* metrics.",
		}),
	}
}

// Describe implements prometheus.Collector.
func (c *PoolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{replicasDesc, phaseDesc, rolloutDesc, stoppedDesc, instancesDesc} {
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
	// stopped is the reason the engine stopped the rollout, "" for none.
	stopped string
}

// instanceGroup is a set of per-instance objects listed at once: one
// provider's kind in one namespace.
type instanceGroup struct {
	adapter   contract.Adapter
	namespace string
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

// instanceGroupOf reads mp's infrastructure pool through its provider's
// adapter and returns the group of its per-instance objects. It returns
// false when there are none to count: no provider serves the pool's kind,
// or the pool does not exist (yet) or cannot be read.
func (c *PoolCollector) instanceGroupOf(ctx context.Context, mp *clusterv1.MachinePool, st *poolState) (instanceGroup, bool) {
	ref := mp.Spec.Template.Spec.InfrastructureRef
	a := c.readers[ref.GroupKind()]
	if a == nil || ref.Name == "" {
		return instanceGroup{}, false
	}
	pool := a.NewPool()
	if err := c.reader.Get(ctx, client.ObjectKey{Namespace: mp.Namespace, Name: ref.Name}, pool, client.UnsafeDisableDeepCopy); err != nil {
		if !apierrors.IsNotFound(err) {
			c.fail(fmt.Errorf("reading %s %s of MachinePool %s: %w", ref.Kind, ref.Name, klog.KObj(mp), err))
		}
		return instanceGroup{}, false
	}
	st.infraUID = pool.GetUID()
	if c := meta.FindStatusCondition(pool.GetConditions(), infrav1.RolloutProgressingCondition); c != nil && c.Status == metav1.ConditionFalse && slices.Contains(StopReasons, c.Reason) {
		st.stopped = c.Reason
	}
	return instanceGroup{adapter: a, namespace: mp.Namespace}, true
}

// countInstances lists the per-instance objects of g once and counts them,
// as g's adapter reads them, into the members whose infrastructure pool
// controls them.
func (c *PoolCollector) countInstances(ctx context.Context, g instanceGroup, members []*poolState) {
	list := g.adapter.NewInstanceList()
	if err := c.reader.List(ctx, list, client.InNamespace(g.namespace), client.UnsafeDisableDeepCopy); err != nil {
		c.fail(fmt.Errorf("listing %s objects in namespace %s: %w", g.adapter.Kinds().Instance, g.namespace, err))
		return
	}
	byInfra := make(map[types.UID]*poolState, len(members))
	for _, st := range members {
		st.instancesKnown = true
		st.instances = make(map[string]int32, len(InstanceStates))
		byInfra[st.infraUID] = st
	}
	err := meta.EachListItem(list, func(o runtime.Object) error {
		obj, ok := o.(contract.InstanceObject)
		if !ok {
			return fmt.Errorf("%T is not a per-instance object", o)
		}
		owner := contract.PoolOwner(obj, g.adapter.Kinds().Pool)
		if owner == nil {
			return nil
		}
		st := byInfra[owner.UID]
		if st == nil {
			return nil
		}
		v := g.adapter.ReadInstance(obj)
		st.instances[string(v.State)]++
		if v.State != contract.InstanceDeleting && v.UpToDate {
			st.upToDate++
			if v.Ready {
				st.upToDateReady++
			}
		}
		return nil
	})
	if err != nil {
		c.fail(fmt.Errorf("reading %s objects in namespace %s: %w", g.adapter.Kinds().Instance, g.namespace, err))
	}
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
	for _, r := range StopReasons {
		v := 0.0
		if r == p.stopped {
			v = 1
		}
		gauge(stoppedDesc, v, r)
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
