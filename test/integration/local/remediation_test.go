package local

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/events"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// Short MachineHealthCheck timeouts: the sim's node agent marks a stopped
// kubelet's Node Unknown after its grace period, the check waits this long
// more.
const unhealthyTimeout = 2

// createMHC creates a MachineHealthCheck over the pool's Machines whose
// remediation is triggered while at most trigger of them are unhealthy.
func (f *fixture) createMHC(trigger intstr.IntOrString, nodeStartup int32) *clusterv1.MachineHealthCheck {
	f.T.Helper()
	mhc := &clusterv1.MachineHealthCheck{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: poolName},
		Spec: clusterv1.MachineHealthCheckSpec{
			ClusterName: clusterName,
			Selector:    metav1.LabelSelector{MatchLabels: map[string]string{clusterv1.MachinePoolNameLabel: poolName}},
			Checks: clusterv1.MachineHealthCheckChecks{
				NodeStartupTimeoutSeconds: ptr.To(nodeStartup),
				UnhealthyNodeConditions: []clusterv1.UnhealthyNodeCondition{
					{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, TimeoutSeconds: ptr.To[int32](unhealthyTimeout)},
					{Type: corev1.NodeReady, Status: corev1.ConditionFalse, TimeoutSeconds: ptr.To[int32](unhealthyTimeout)},
				},
			},
			Remediation: clusterv1.MachineHealthCheckRemediation{
				TriggerIf: clusterv1.MachineHealthCheckRemediationTriggerIf{UnhealthyLessThanOrEqualTo: &trigger},
			},
		},
	}
	f.Create(mhc)
	return mhc
}

// mhc reads the MachineHealthCheck back.
func (f *fixture) mhc() *clusterv1.MachineHealthCheck {
	f.T.Helper()
	m := &clusterv1.MachineHealthCheck{}
	if err := env.Client.Get(f.Ctx, f.Key(poolName), m); err != nil {
		f.T.Fatal(err)
	}
	return m
}

// waitMHC waits until the MachineHealthCheck sees n targets, healthy of
// them healthy.
func (f *fixture) waitMHC(n, healthy int32, timeout time.Duration) {
	f.T.Helper()
	testenv.Eventually(f.T, timeout, func() error {
		m := f.mhc()
		if ptr.Deref(m.Status.ExpectedMachines, -1) != n || ptr.Deref(m.Status.CurrentHealthy, -1) != healthy {
			return fmt.Errorf("MachineHealthCheck status: expected %v, healthy %v, want %d and %d (conditions %+v)",
				ptr.Deref(m.Status.ExpectedMachines, -1), ptr.Deref(m.Status.CurrentHealthy, -1), n, healthy, m.Status.Conditions)
		}
		return nil
	})
}

func TestMachineHealthCheckSeesThePoolMachines(t *testing.T) {
	f, _ := start(t, cloudOptions{}, managerOptions{})
	f.createPool(poolSpec{replicas: 3})
	f.waitConverged(3, v1, "", converge)
	f.createMHC(intstr.FromString("100%"), 30)
	f.waitMHC(3, 3, 60*time.Second)
	m := f.mhc()
	if c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.MachineHealthCheckRemediationAllowedCondition); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("RemediationAllowed: %+v", c)
	}
	if len(m.Status.Targets) != 3 {
		t.Errorf("targets %v", m.Status.Targets)
	}
}

// poolRemediating returns the pool's Remediating condition.
func (f *fixture) poolRemediating() *metav1.Condition {
	return meta.FindStatusCondition(f.localPool().Status.Conditions, infrav1.RemediatingCondition)
}

// machineOf returns the pool Machine of instance id, nil when there is none.
func (f *fixture) machineOf(id string) *clusterv1.Machine {
	f.T.Helper()
	m := &clusterv1.Machine{}
	err := env.Client.Get(f.Ctx, f.Key(contract.InstanceObjectName(poolName, id)), m)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		f.T.Fatal(err)
	}
	return m
}

// waitReplaced waits until the victims are gone and the pool has converged
// again with n instances, recording whether the pool's Remediating
// condition named each victim while it went.
func (f *fixture) waitReplaced(victims []string, n int, timeout time.Duration) map[string]bool {
	f.T.Helper()
	seen := map[string]bool{}
	testenv.Eventually(f.T, timeout, func() error {
		if c := f.poolRemediating(); c != nil && c.Status == metav1.ConditionTrue {
			for _, v := range victims {
				if strings.Contains(c.Message, v) {
					seen[v] = true
				}
			}
		}
		ids := itest.IDs(f.Instances())
		for _, v := range victims {
			if slices.Contains(ids, v) {
				return fmt.Errorf("instance %s is still there (%v)", v, ids)
			}
		}
		return f.converged(n, v1, "")
	})
	return seen
}

// TestMachineHealthCheckRemediatesAStoppedKubelet: one instance's kubelet
// stops; upstream's MachineHealthCheck marks its Machine once its Node has
// been Unknown for the check's timeout, and the engine cordons, drains
// (bounded by nodeDrainTimeout: the unreachable kubelet never confirms) and
// deletes exactly that instance; the pool replaces it and is Running again
// with every Node Ready.
func TestMachineHealthCheckRemediatesAStoppedKubelet(t *testing.T) {
	f, _ := startChecked(t)

	victim := f.InstanceIDs()[0]
	f.runPod("stranded", f.nodeName(victim), "stranded")
	f.SetInstanceFault(victim, core.FaultKubeletStopped)
	var marked *clusterv1.Machine
	testenv.Eventually(t, converge, func() error {
		m := f.machineOf(victim)
		if m == nil {
			return fmt.Errorf("Machine of %s is gone before it was seen marked", victim)
		}
		if c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.MachineOwnerRemediatedCondition); c == nil || c.Status != metav1.ConditionFalse {
			return fmt.Errorf("Machine %s OwnerRemediated: %+v", m.Name, c)
		}
		marked = m
		return nil
	})
	if c := meta.FindStatusCondition(marked.Status.Conditions, clusterv1.MachineHealthCheckSucceededCondition); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("Machine %s HealthCheckSucceeded: %+v", marked.Name, c)
	}
	started := time.Now()
	seen := f.waitReplaced([]string{victim}, 3, converge)
	t.Logf("instance %s remediated in %s", victim, time.Since(started).Round(time.Second))
	if !seen[victim] {
		t.Errorf("the pool's Remediating condition never named %s", victim)
	}
	ev := f.waitPoolEvent(events.Remediating, victim)
	if !strings.Contains(ev.Note, "Node") {
		t.Errorf("Remediating event: %q", ev.Note)
	}
	if got := f.spy.deleted(); len(got) != 1 || got[victim] != 1 {
		t.Errorf("instances deleted: %v, want only %s, once", got, victim)
	}
	f.waitMHC(3, 3, converge)
	f.WaitPoolCondition(converge, infrav1.RemediatingCondition, metav1.ConditionFalse)
}

// TestMachineHealthCheckShortCircuits: 60% of a pool's kubelets stop at
// once under a check that remediates only while at most 40% are unhealthy:
// nothing is remediated, the check says why, and when the kubelets come
// back every instance is still there.
func TestMachineHealthCheckShortCircuits(t *testing.T) {
	// At upstream's pace: the kubelets come back a heartbeat apart, and a
	// check evaluated in between (two of five unhealthy, within 40%) would
	// remediate the last ones as they recover, as upstream's would.
	itest.WithReconcilerRateLimiting(t)
	f, _ := start(t, cloudOptions{}, managerOptions{spied: true})
	f.createPool(poolSpec{replicas: 5})
	f.waitConverged(5, v1, "", converge)
	f.createMHC(intstr.FromString("40%"), 30)
	f.waitMHC(5, 5, converge)
	before := f.InstanceIDs()

	stopped := f.SetPoolFault(0.6, core.FaultKubeletStopped)
	if len(stopped) != 3 {
		t.Fatalf("stopped %v, want 3 of 5", stopped)
	}
	testenv.Eventually(t, converge, func() error {
		m := f.mhc()
		c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.MachineHealthCheckRemediationAllowedCondition)
		// The message counts the Machines past the check's timeout when it
		// was last evaluated (upstream re-evaluates a short-circuited check
		// on its next event, not when the timeout passes); CurrentHealthy
		// already excludes all three.
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != clusterv1.MachineHealthCheckTooManyUnhealthyReason ||
			!strings.Contains(c.Message, "total: 5") || ptr.Deref(m.Status.CurrentHealthy, -1) != 2 {
			return fmt.Errorf("RemediationAllowed %+v, healthy %d", c, ptr.Deref(m.Status.CurrentHealthy, -1))
		}
		return nil
	})
	// The engine leaves them alone while the check says so: a few rounds of
	// the check and the engine go by.
	deadline := time.Now().Add(8 * time.Second)
	testenv.Eventually(t, 20*time.Second, func() error {
		if got := f.spy.deleted(); len(got) != 0 {
			t.Fatalf("instances deleted while remediation is short-circuited: %v", got)
		}
		for _, id := range stopped {
			if m := f.machineOf(id); m == nil || meta.FindStatusCondition(m.Status.Conditions, clusterv1.MachineOwnerRemediatedCondition) != nil {
				t.Fatalf("Machine of %s marked for remediation while short-circuited: %+v", id, m)
			}
		}
		if time.Now().Before(deadline) {
			return fmt.Errorf("watching")
		}
		return nil
	})
	for _, id := range stopped {
		f.SetInstanceFault(id, core.FaultNone)
	}
	f.waitConverged(5, v1, "", converge)
	f.waitMHC(5, 5, converge)
	if after := f.InstanceIDs(); !slices.Equal(after, before) {
		t.Errorf("instances %v after the kubelets came back, were %v", after, before)
	}
	if got := f.spy.deleted(); len(got) != 0 {
		t.Errorf("instances deleted: %v", got)
	}
}

// TestMachineHealthCheckReplacesAnInstanceThatNeverJoins: an instance that
// never joins is replaced once the check's nodeStartupTimeoutSeconds has
// passed (the engine's own join timeout is longer).
func TestMachineHealthCheckReplacesAnInstanceThatNeverJoins(t *testing.T) {
	f, _ := start(t, cloudOptions{}, managerOptions{spied: true})
	f.createPool(poolSpec{replicas: 2})
	f.waitConverged(2, v1, "", converge)
	f.createMHC(intstr.FromString("100%"), 30)
	f.waitMHC(2, 2, converge)

	if _, err := f.Cloud.Cloud().SetGroupFaults(f.group, core.GroupFaults{NeverJoins: 1}); err != nil {
		t.Fatal(err)
	}
	before := f.InstanceIDs()
	f.Scale(3)
	var stuck string
	testenv.Eventually(t, converge, func() error {
		for _, in := range f.Instances() {
			if !slices.Contains(before, in.ID) && in.Fault == core.FaultNeverJoins {
				stuck = in.ID
				return nil
			}
		}
		return fmt.Errorf("no instance that never joins yet")
	})
	created := time.Now()
	f.waitReplaced([]string{stuck}, 3, 2*time.Minute)
	if d := time.Since(created); d < 25*time.Second {
		t.Errorf("instance %s replaced %s after it was created, before the 30s nodeStartupTimeoutSeconds", stuck, d)
	}
	ev := f.waitPoolEvent(events.Remediating, stuck)
	if !strings.Contains(ev.Note, "Node failed to report startup") {
		t.Errorf("Remediating event: %q", ev.Note)
	}
	if got := f.spy.deleted(); len(got) != 1 || got[stuck] != 1 {
		t.Errorf("instances deleted: %v, want only %s, once", got, stuck)
	}
}

// TestRolloutAndRemediationShareTheBudgets: a kubelet stops while the pool
// rolls to a new version; the remediation and the roll together never
// leave fewer than desired - maxUnavailable instances available beyond the
// one already unavailable, nor more than desired + maxSurge.
func TestRolloutAndRemediationShareTheBudgets(t *testing.T) {
	f, _ := start(t, cloudOptions{}, managerOptions{})
	f.createPool(poolSpec{replicas: 4, maxSurge: intstr.FromInt32(1), maxUnavailable: intstr.FromInt32(1)})
	f.waitConverged(4, v1, "", converge)
	f.createMHC(intstr.FromString("100%"), 30)
	f.waitMHC(4, 4, converge)
	before := f.InstanceIDs()

	// The stopped kubelet is the one instance already unavailable.
	w := itest.WatchBudgets(f.Fixture, 4, 1, 2)
	f.SetInstanceFault(before[0], core.FaultKubeletStopped)
	f.SetVersion(v2)
	f.WaitRolled(before, 4, v2, 3*time.Minute)
	w.AssertHeld()
	f.waitMHC(4, 4, converge)
}

// TestRemediationSurvivesAManagerRestart: the manager stops while an
// instance's remediation waits for its drain; a new manager finishes it
// and remediates no instance twice, nor any other.
func TestRemediationSurvivesAManagerRestart(t *testing.T) {
	f, mgr := startChecked(t)

	victim := f.InstanceIDs()[0]
	// A pod its PodDisruptionBudget never lets go holds the drain until
	// nodeDrainTimeout.
	f.runPod("guarded", f.nodeName(victim), "guarded")
	f.pdb("guarded", 1, 0)
	f.SetInstanceFault(victim, core.FaultKubeletStopped)
	testenv.Eventually(t, converge, func() error {
		obj := &infrav1.LocalMachinePoolMachine{}
		if err := env.Client.Get(f.Ctx, f.Key(contract.InstanceObjectName(poolName, victim)), obj); err != nil {
			return err
		}
		if obj.Annotations[preview.DrainStartedAnnotation] == "" {
			return fmt.Errorf("the drain of %s has not started", victim)
		}
		return nil
	})
	mgr.Stop()
	if got := f.spy.deleted(); len(got) != 0 {
		t.Fatalf("instances deleted before the drain timed out: %v", got)
	}
	startManager(t, f, managerOptions{spied: true})
	f.waitReplaced([]string{victim}, 3, 2*time.Minute)
	if got := f.spy.deleted(); len(got) != 1 || got[victim] != 1 {
		t.Errorf("instances deleted: %v, want only %s, once", got, victim)
	}
}

// TestRemediationCapHoldsOneInFlight: with the pool's cap
// mpool.dev/remediation-max-in-flight at 1, two kubelets stop at once;
// each remediation waits for its drain (a pod the unreachable kubelet
// never lets go, until nodeDrainTimeout). A watch of the pool's Machines
// sees, whenever one of them is marked for remediation (OwnerRemediated
// reason MachineDeleting, set before its removal starts), no other marked
// Machine whose instance is still in the cloud: one remediation in flight
// at a time, the other waiting (RemediationDeferred); both are replaced,
// each deleted once.
func TestRemediationCapHoldsOneInFlight(t *testing.T) {
	f, _ := start(t, cloudOptions{}, managerOptions{spied: true})
	f.createPool(poolSpec{replicas: 4})
	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) {
		mp.Spec.Template.Spec.Deletion.NodeDrainTimeoutSeconds = ptr.To[int32](5)
		if mp.Annotations == nil {
			mp.Annotations = map[string]string{}
		}
		mp.Annotations[preview.RemediationMaxInFlightAnnotation] = "1"
	})
	f.waitConverged(4, v1, "", converge)
	f.createMHC(intstr.FromString("100%"), 30)
	f.waitMHC(4, 4, converge)

	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(f.Ctx, &clusterv1.MachineList{}, client.InNamespace(f.NS))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var (
		mu       sync.Mutex
		marked   = map[string]bool{} // Machine names marked MachineDeleting
		most     int
		deferred = map[string]bool{}
	)
	go func() {
		for ev := range w.ResultChan() {
			m, ok := ev.Object.(*clusterv1.Machine)
			if !ok {
				continue
			}
			c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.MachineOwnerRemediatedCondition)
			mu.Lock()
			switch {
			case ev.Type == watch.Deleted:
				delete(marked, m.Name)
			case c != nil && c.Reason == clusterv1.MachineSetMachineRemediationMachineDeletingReason:
				marked[m.Name] = true
			case c != nil && c.Reason == clusterv1.MachineSetMachineRemediationDeferredReason:
				deferred[m.Name] = true
			}
			// In flight: marked, and its instance not yet gone.
			n := 0
			for _, id := range itest.IDs(f.Instances()) {
				if marked[contract.InstanceObjectName(poolName, id)] {
					n++
				}
			}
			most = max(most, n)
			mu.Unlock()
		}
	}()

	victims := f.InstanceIDs()[:2]
	for i, v := range victims {
		f.runPod(fmt.Sprintf("stranded-%d", i), f.nodeName(v), "stranded")
		f.SetInstanceFault(v, core.FaultKubeletStopped)
	}
	f.waitReplaced(victims, 4, 2*converge)
	mu.Lock()
	defer mu.Unlock()
	if most != 1 {
		t.Errorf("at most %d remediations seen in flight at once, want 1 (the cap)", most)
	}
	if len(deferred) == 0 {
		t.Errorf("no remediation was deferred by the cap")
	}
	if got := f.spy.deleted(); len(got) != 2 || got[victims[0]] != 1 || got[victims[1]] != 1 {
		t.Errorf("instances deleted: %v, want %v, once each", got, victims)
	}
}

// startChecked starts a spied manager and a Running pool of three whose
// drains give up after 10 s, watched by a MachineHealthCheck (100%
// maxUnhealthy, 30 s) that has seen its three Machines.
func startChecked(t *testing.T) (*fixture, *testManager) {
	t.Helper()
	f, mgr := start(t, cloudOptions{}, managerOptions{spied: true})
	f.createPool(poolSpec{replicas: 3})
	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) {
		mp.Spec.Template.Spec.Deletion.NodeDrainTimeoutSeconds = ptr.To[int32](10)
	})
	f.waitConverged(3, v1, "", converge)
	f.createMHC(intstr.FromString("100%"), 30)
	f.waitMHC(3, 3, converge)
	return f, mgr
}
