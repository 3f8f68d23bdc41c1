package local

// What a platform engineer meets operating a pool beyond scaling and
// rolling: replicas managed by an external autoscaler, a paused Cluster, the
// node drain timeout, instances that never join, and the cloud's quota.

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/controller/infrapool"
	"github.com/mpool-dev/mpool/internal/events"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/metrics"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/nodeagent"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// TestReplicasManagedByAnExternalAutoscaler: with
// cluster.x-k8s.io/replicas-managed-by on the MachinePool, the autoscaler
// scales the cloud's group; the engine notices (it polls such a group, the
// cloud sends no event), keeps and reports the group's count, the core
// copies it into spec.replicas, and stale instances are still replaced
// within the budgets at that count.
func TestReplicasManagedByAnExternalAutoscaler(t *testing.T) {
	f, mgr := start(t, cloudOptions{}, managerOptions{tune: func(o *manager.Options) {
		o.EngineTiming.ExternalReplicas = 500 * time.Millisecond
	}})
	f.createPool(poolSpec{replicas: 2})
	f.waitConverged(2, v1, "", converge)
	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) {
		if mp.Annotations == nil {
			mp.Annotations = map[string]string{}
		}
		mp.Annotations[clusterv1.ReplicasManagedByAnnotation] = "cluster-autoscaler"
	})
	// The engine says who manages the replicas once it has seen the
	// annotation; before, it would rightly scale the group back.
	testenv.Eventually(t, converge, func() error {
		c := f.PoolCondition(infrav1.ScaleGroupDesiredReplicasCondition)
		if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "managed by cluster-autoscaler") {
			return fmt.Errorf("ScaleGroupDesiredReplicas %+v, want True naming who manages the replicas", c)
		}
		return nil
	})

	// The autoscaler scales the group in the cloud, keeping its model.
	if _, err := f.Cloud.Cloud().SetCapacity(f.group, 4); err != nil {
		t.Fatal(err)
	}
	f.waitConverged(4, v1, "", converge)
	f.waitMachinePoolReplicas(4)

	// It stays at 4: spec.replicas is not enforced. Someone setting it to 2
	// is overruled by the core controller, which copies the reported count
	// back, and the engine never writes to the cloud meanwhile.
	sg := mgr.ScaleGroup
	sg.ResetCounts()
	f.Scale(2)
	f.waitMachinePoolReplicas(4)
	f.PokeUntilReconciled(t, 3)
	if c := sg.Counts(); c.Writes() != 0 {
		t.Errorf("the engine wrote to the cloud %d times although the autoscaler manages the replicas: %v", c.Writes(), c)
	}
	if g := f.Group(); g == nil || g.Capacity != 4 || len(f.Instances()) != 4 {
		t.Fatalf("the group was scaled back: %v", itest.InstanceStates(g))
	}

	// A new version replaces every instance within maxSurge 1 and
	// maxUnavailable 0 around the autoscaler's 4, and ends at 4: the
	// engine's own surge is never taken for the autoscaler's.
	before := itest.IDs(f.Instances())
	w := itest.WatchBudgets(f.Fixture, 4, 1, 0)
	f.SetVersion(v2)
	f.waitConverged(4, v2, "", converge)
	w.AssertHeld()
	for _, id := range itest.IDs(f.Instances()) {
		if slices.Contains(before, id) {
			t.Errorf("instance %s was not replaced", id)
		}
	}
	if g := f.Group(); g == nil || g.Capacity != 4 {
		t.Fatalf("after the rollout the group has capacity %v, want 4", g)
	}
	f.waitMachinePoolReplicas(4)

	// The autoscaler scales in: the cloud picks the victim, the pool follows.
	if _, err := f.Cloud.Cloud().SetCapacity(f.group, 3); err != nil {
		t.Fatal(err)
	}
	f.waitConverged(3, v2, "", converge)
	f.waitMachinePoolReplicas(3)
}

// TestPausedClusterWritesNothing: while the Cluster is paused a scale-up
// and a version change create and delete nothing, call the cloud not at
// all and write nothing; unpausing resumes and converges.
func TestPausedClusterWritesNothing(t *testing.T) {
	f, mgr := start(t, cloudOptions{}, managerOptions{})
	f.createPool(poolSpec{replicas: 2})
	f.waitConverged(2, v1, "", converge)

	// Once the core controller has marked the MachinePool paused, the
	// manager's cache, which the engine shares, holds the paused Cluster.
	f.setClusterPaused(true)
	f.waitMachinePoolPaused(true)
	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) {
		mp.Spec.Replicas = ptr.To[int32](4)
		mp.Spec.Template.Spec.Version = v2
	})
	// And once it has marked the changed generation paused, the changes.
	f.waitMachinePoolPaused(true)

	group := f.Group()
	lp := f.localPool()
	objects := f.instanceObjectVersions()
	sg := mgr.ScaleGroup
	sg.ResetCounts()
	f.PokeUntilReconciled(t, 2)

	if c := sg.Counts(); c.Reads() != 0 || c.Writes() != 0 {
		t.Errorf("a paused pool called the cloud: %v", c)
	}
	if g := f.Group(); g == nil || g.Capacity != group.Capacity || g.ModelHash != group.ModelHash || !slices.Equal(itest.IDs(g.Instances), itest.IDs(group.Instances)) {
		t.Errorf("the group changed while paused: %v, was %v", itest.InstanceStates(g), itest.InstanceStates(group))
	}
	after := f.localPool()
	if !equality.Semantic.DeepEqual(after.Status, lp.Status) || !equality.Semantic.DeepEqual(after.Spec, lp.Spec) ||
		after.Annotations[infrapool.AppliedSpecAnnotation] != lp.Annotations[infrapool.AppliedSpecAnnotation] {
		t.Errorf("a paused pool was written:\nstatus %+v\nwas    %+v", after.Status, lp.Status)
	}
	if got := f.instanceObjectVersions(); !reflect.DeepEqual(got, objects) {
		t.Errorf("per-instance objects were written while paused: %v, were %v", got, objects)
	}

	f.setClusterPaused(false)
	f.waitConverged(4, v2, "", converge)
}

// TestDrainTimeout: a pod whose PodDisruptionBudget never allows its
// eviction holds a scale-down without a nodeDrainTimeout; with one, the
// instance goes once it has passed, and an event says the drain timed out.
func TestDrainTimeout(t *testing.T) {
	f, _ := start(t, cloudOptions{}, managerOptions{})
	f.createPool(poolSpec{replicas: 2})
	f.waitConverged(2, v1, "", converge)

	live := f.Instances()
	slices.SortFunc(live, func(a, b core.Instance) int { return a.CreatedAt.Compare(b.CreatedAt) })
	victim := live[0].ID // deletePolicy Oldest
	f.runPod("guarded", f.nodeName(victim), "guarded")
	f.pdb("guarded", 1, 0)

	refused := f.refusedEvictions()
	f.Scale(1)
	testenv.Eventually(t, converge, func() error {
		if n := f.refusedEvictions() - refused; n < 3 {
			return fmt.Errorf("%v evictions refused so far", n)
		}
		return nil
	})
	if !slices.Contains(itest.IDs(f.Instances()), victim) || !f.podExists("guarded") {
		t.Fatalf("without a nodeDrainTimeout instance %s went while its pod's PodDisruptionBudget refused the eviction", victim)
	}
	obj := &infrav1.LocalMachinePoolMachine{}
	if err := env.Client.Get(f.Ctx, f.Key(contract.InstanceObjectName(poolName, victim)), obj); err != nil {
		t.Fatal(err)
	}
	started, err := time.Parse(time.RFC3339, obj.Annotations[preview.DrainStartedAnnotation])
	if err != nil || obj.Status.State != infrav1.LocalInstanceDeleting {
		t.Fatalf("the victim's LocalMachinePoolMachine: state %s, annotations %v (%v)", obj.Status.State, obj.Annotations, err)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		obj := &infrav1.LocalMachinePoolMachine{}
		if err := env.Client.Get(f.Ctx, f.Key(contract.InstanceObjectName(poolName, victim)), obj); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(obj.Status.Conditions, infrav1.DrainingSucceededCondition); c == nil || c.Reason != infrav1.DrainingReason || !strings.Contains(c.Message, "guarded") {
			return fmt.Errorf("DrainingSucceeded %+v, want Draining naming the blocked pod", c)
		}
		return nil
	})

	const timeout = 4 * time.Second
	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) {
		mp.Spec.Template.Spec.Deletion.NodeDrainTimeoutSeconds = ptr.To(int32(timeout / time.Second))
	})
	testenv.Eventually(t, converge, func() error {
		if slices.Contains(itest.IDs(f.Instances()), victim) {
			return fmt.Errorf("instance %s is still there", victim)
		}
		return nil
	})
	// The annotation has whole seconds.
	if d := time.Since(started); d < timeout-time.Second {
		t.Errorf("instance %s went %s after its drain started, before the %s timeout", victim, d, timeout)
	}
	ev := f.waitPoolEvent(events.DrainTimeout, victim)
	if !strings.Contains(ev.Note, "not drained within "+timeout.String()) || !strings.Contains(ev.Note, "guarded") {
		t.Errorf("DrainTimeout event: %q", ev.Note)
	}
	f.waitConverged(1, v1, "", converge)
}

// TestNeverJoinedInstanceIsReplaced: an instance that boots with a wrong
// bootstrap token never joins; once the join timeout has passed the engine
// deletes it, says so, and the group creates a fresh one that joins.
func TestNeverJoinedInstanceIsReplaced(t *testing.T) {
	const joinTimeout = 5 * time.Second
	f, _ := start(t, cloudOptions{}, managerOptions{spied: true, tune: func(o *manager.Options) { o.NodeStartupTimeout = joinTimeout }})
	f.createPool(poolSpec{replicas: 2})
	f.waitConverged(2, v1, "", converge)
	conds := recordInstanceConditions(t, f)

	if _, err := f.Cloud.Cloud().SetGroupFaults(f.group, core.GroupFaults{WrongTokens: 1}); err != nil {
		t.Fatal(err)
	}
	f.Scale(3)
	var bad core.Instance
	testenv.Eventually(t, converge, func() error {
		for _, in := range f.Instances() {
			if in.WrongToken {
				bad = in
				if in.Join == core.JoinFailed {
					return nil
				}
			}
		}
		return fmt.Errorf("no instance with a wrong token has given up joining yet (%+v)", bad)
	})
	if bad.Message != nodeagent.MessageTokenRejected {
		t.Errorf("the instance says %q, want %q", bad.Message, nodeagent.MessageTokenRejected)
	}

	f.waitConverged(3, v1, "", converge)
	if slices.Contains(itest.IDs(f.Instances()), bad.ID) {
		t.Fatalf("instance %s, which never joined, is still there", bad.ID)
	}
	if got := f.spy.deleted(); len(got) != 1 || got[bad.ID] != 1 {
		t.Errorf("deleted %v, want only the instance that never joined, %s", got, bad.ID)
	}
	f.spy.assertClean()
	ev := f.waitPoolEvent(events.NodeStartupTimeout, bad.ID)
	if !strings.Contains(ev.Note, nodeagent.MessageTokenRejected) || !strings.Contains(ev.Note, joinTimeout.String()) {
		t.Errorf("NodeStartupTimeout event: %q", ev.Note)
	}
	c := conds.find(contract.InstanceObjectName(poolName, bad.ID), infrav1.NodeStartupTimeoutReason)
	if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, nodeagent.MessageTokenRejected) {
		t.Errorf("the LocalMachinePoolMachine of %s never said it timed out joining: %+v", bad.ID, c)
	}
}

// TestQuotaExceeded: a quota below the desired replicas keeps the pool at
// the quota with ScaleGroupReady False, reason QuotaExceeded and a message
// that says what to change; raising the quota converges.
func TestQuotaExceeded(t *testing.T) {
	f, mgr := start(t, cloudOptions{}, managerOptions{tune: func(o *manager.Options) { o.EngineTiming.QuotaRetry = 500 * time.Millisecond }})
	f.createPool(poolSpec{replicas: 2})
	f.waitConverged(2, v1, "", converge)

	if err := f.Cloud.Cloud().SetMaxInstances(2); err != nil {
		t.Fatal(err)
	}
	sg := mgr.ScaleGroup
	sg.ResetCounts()
	f.Scale(4)
	testenv.Eventually(t, converge, func() error {
		if n := sg.Counts()[metrics.OpApply]["quota_exceeded"]; n < 3 {
			return fmt.Errorf("%d capacity requests refused for quota", n)
		}
		c := f.PoolCondition(infrav1.ScaleGroupReadyCondition)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != infrav1.QuotaExceededReason {
			return fmt.Errorf("ScaleGroupReady %+v, want False/%s", c, infrav1.QuotaExceededReason)
		}
		return nil
	})
	lp := f.localPool()
	c := meta.FindStatusCondition(lp.Status.Conditions, infrav1.ScaleGroupReadyCondition)
	for _, want := range []string{"quota", "Raise the quota", "spec.replicas"} {
		if !strings.Contains(c.Message, want) {
			t.Errorf("ScaleGroupReady message %q does not say %q", c.Message, want)
		}
	}
	if r := meta.FindStatusCondition(lp.Status.Conditions, clusterv1.ReadyCondition); r == nil || r.Reason != infrav1.QuotaExceededReason {
		t.Errorf("Ready %+v, want it to mirror ScaleGroupReady", r)
	}
	if g := f.Group(); g == nil || g.Capacity != 2 || len(f.Instances()) != 2 || lp.Status.Replicas != 2 {
		t.Fatalf("the pool left the quota: group %v, reported replicas %d", itest.InstanceStates(g), lp.Status.Replicas)
	}
	f.waitPoolEvent(events.QuotaExceeded, "quota")

	if err := f.Cloud.Cloud().SetMaxInstances(4); err != nil {
		t.Fatal(err)
	}
	f.waitConverged(4, v1, "", converge)
	if err := f.PoolConditionsTrue(infrav1.ScaleGroupReadyCondition); err != nil {
		t.Errorf("after raising the quota: %v", err)
	}
}

// waitMachinePoolReplicas waits until the MachinePool's spec.replicas and
// status.replicas are n.
func (f *fixture) waitMachinePoolReplicas(n int32) {
	f.T.Helper()
	testenv.Eventually(f.T, converge, func() error {
		mp := &clusterv1.MachinePool{}
		if err := env.Client.Get(f.Ctx, f.Key(poolName), mp); err != nil {
			return err
		}
		if ptr.Deref(mp.Spec.Replicas, -1) != n || ptr.Deref(mp.Status.Replicas, -1) != n {
			return fmt.Errorf("MachinePool spec.replicas %d, status.replicas %d; want %d", ptr.Deref(mp.Spec.Replicas, -1), ptr.Deref(mp.Status.Replicas, -1), n)
		}
		return nil
	})
}

func (f *fixture) setClusterPaused(paused bool) {
	f.T.Helper()
	c := &clusterv1.Cluster{}
	if err := env.Client.Get(f.Ctx, f.Key(clusterName), c); err != nil {
		f.T.Fatal(err)
	}
	before := c.DeepCopy()
	c.Spec.Paused = ptr.To(paused)
	if err := env.Client.Patch(f.Ctx, c, client.MergeFrom(before)); err != nil {
		f.T.Fatal(err)
	}
}

// waitMachinePoolPaused waits until the core controller has reported the
// MachinePool's current generation as paused (or not).
func (f *fixture) waitMachinePoolPaused(paused bool) {
	f.T.Helper()
	want := metav1.ConditionFalse
	if paused {
		want = metav1.ConditionTrue
	}
	testenv.Eventually(f.T, 30*time.Second, func() error {
		mp := &clusterv1.MachinePool{}
		if err := env.Client.Get(f.Ctx, f.Key(poolName), mp); err != nil {
			return err
		}
		c := meta.FindStatusCondition(mp.Status.Conditions, clusterv1.PausedCondition)
		if c == nil || c.Status != want || c.ObservedGeneration != mp.Generation {
			return fmt.Errorf("MachinePool generation %d: Paused %+v, want %s", mp.Generation, c, want)
		}
		return nil
	})
}

// instanceObjectVersions returns the resourceVersion of every
// LocalMachinePoolMachine, by name.
func (f *fixture) instanceObjectVersions() map[string]string {
	f.T.Helper()
	list := &infrav1.LocalMachinePoolMachineList{}
	if err := env.Client.List(f.Ctx, list, client.InNamespace(f.NS)); err != nil {
		f.T.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range list.Items {
		out[m.Name] = m.ResourceVersion
	}
	return out
}

// waitPoolEvent waits for an event of reason about the LocalMachinePool
// whose note contains text, and returns it.
func (f *fixture) waitPoolEvent(reason, text string) eventsv1.Event {
	f.T.Helper()
	var found eventsv1.Event
	testenv.Eventually(f.T, 30*time.Second, func() error {
		list, err := f.CS.EventsV1().Events(f.NS).List(f.Ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		var reasons []string
		for _, ev := range list.Items {
			if ev.Regarding.Kind == "LocalMachinePool" && ev.Regarding.Name == poolName && ev.Reason == reason && strings.Contains(ev.Note, text) {
				found = ev
				return nil
			}
			reasons = append(reasons, ev.Reason)
		}
		return fmt.Errorf("no %s event about the pool mentioning %q among %v", reason, text, reasons)
	})
	return found
}

// refusedEvictions returns how many evictions the API server has refused
// with 429 Too Many Requests, as it does when a PodDisruptionBudget allows
// none (apiserver_request_total).
func (f *fixture) refusedEvictions() float64 {
	f.T.Helper()
	raw, err := f.CS.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(f.Ctx)
	if err != nil {
		f.T.Fatalf("reading the API server's metrics: %v", err)
	}
	var n float64
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "apiserver_request_total{") ||
			!strings.Contains(line, `resource="pods"`) || !strings.Contains(line, `subresource="eviction"`) || !strings.Contains(line, `code="429"`) {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[strings.LastIndex(line, " ")+1:]), 64)
		if err == nil {
			n += v
		}
	}
	return n
}

// conditionRecorder records every condition the LocalMachinePoolMachines of
// a namespace carried, from a watch: it sees states that last for one
// write before an object goes.
type conditionRecorder struct {
	mu   sync.Mutex
	seen map[string][]metav1.Condition // by object name
}

func recordInstanceConditions(t *testing.T, f *fixture) *conditionRecorder {
	t.Helper()
	r := &conditionRecorder{seen: map[string][]metav1.Condition{}}
	watchMachines(t, f, func(typ watch.EventType, m *infrav1.LocalMachinePoolMachine) {
		if typ == watch.Deleted {
			return
		}
		r.mu.Lock()
		r.seen[m.Name] = append(r.seen[m.Name], m.Status.Conditions...)
		r.mu.Unlock()
	})
	return r
}

// find returns a condition with reason that object name carried, nil if
// none.
func (r *conditionRecorder) find(name, reason string) *metav1.Condition {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.seen[name] {
		if c.Reason == reason {
			return &c
		}
	}
	return nil
}
