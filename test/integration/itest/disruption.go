package itest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/cli"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/testenv"
)

// GuardedApp is the app label of the pods a test's PodDisruptionBudget
// guards.
const GuardedApp = "guarded"

// RunGuardedPod runs a pod labelled app=GuardedApp on node and waits until
// the node agent, which plays the kubelet, reports it Running and Ready.
// The pod and the budget of GuardedApp are removed when the test ends:
// pods are bound to Nodes by name, and the next test's simulated instances
// may get the same names.
func (f *Fixture) RunGuardedPod(name, node string) {
	f.T.Helper()
	if _, err := f.CS.CoreV1().Pods(f.NS).Create(f.Ctx, GuardedPod(f.NS, name, node), metav1.CreateOptions{}); err != nil {
		f.T.Fatalf("creating pod %s: %v", name, err)
	}
	f.T.Cleanup(func() {
		_ = f.CS.PolicyV1().PodDisruptionBudgets(f.NS).Delete(context.Background(), GuardedApp, metav1.DeleteOptions{})
		_ = f.CS.CoreV1().Pods(f.NS).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	})
	testenv.Eventually(f.T, 30*time.Second, func() error {
		p, err := f.CS.CoreV1().Pods(f.NS).Get(f.Ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !PodReady(p) {
			return fmt.Errorf("pod %s is %s", name, p.Status.Phase)
		}
		return nil
	})
}

// GuardedPod is a pod labelled app=GuardedApp, bound to node. It has no
// termination grace period: once evicted it is gone, and a drain's time is
// the budget's alone.
func GuardedPod(ns, name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": GuardedApp}},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers:                    []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
}

// PodReady reports whether p is Running with its Ready condition True.
func PodReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// GuardingPDB creates (or updates) the PodDisruptionBudget of GuardedApp
// with minAvailable and waits until the disruption controller allows
// allowed disruptions.
func (f *Fixture) GuardingPDB(minAvailable, allowed int32) {
	f.T.Helper()
	pdbs := f.CS.PolicyV1().PodDisruptionBudgets(f.NS)
	want := policyv1.PodDisruptionBudgetSpec{
		MinAvailable: ptr.To(intstr.FromInt32(minAvailable)),
		Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": GuardedApp}},
	}
	b, err := pdbs.Get(f.Ctx, GuardedApp, metav1.GetOptions{})
	switch {
	case err == nil:
		b.Spec = want
		_, err = pdbs.Update(f.Ctx, b, metav1.UpdateOptions{})
	default:
		_, err = pdbs.Create(f.Ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: GuardedApp, Namespace: f.NS}, Spec: want}, metav1.CreateOptions{})
	}
	if err != nil {
		f.T.Fatal(err)
	}
	testenv.Eventually(f.T, 30*time.Second, func() error {
		b, err := pdbs.Get(f.Ctx, GuardedApp, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if b.Status.ObservedGeneration != b.Generation || b.Status.DisruptionsAllowed != allowed {
			return fmt.Errorf("budget %s allows %d disruptions, want %d (status %+v)", GuardedApp, b.Status.DisruptionsAllowed, allowed, b.Status)
		}
		return nil
	})
}

// annotate sets (or, with an empty value, removes) the MachinePool's
// annotations kv (key, value, key, value...).
func annotate(mp *clusterv1.MachinePool, kv ...string) {
	if mp.Annotations == nil {
		mp.Annotations = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(mp.Annotations, kv[i])
			continue
		}
		mp.Annotations[kv[i]] = kv[i+1]
	}
}

// ResumeRollout runs 'mpool rollout resume' on the fixture's pool: it
// lifts a pause the engine set itself (removing the progress record from
// the infra pool).
func (f *Fixture) ResumeRollout() {
	f.T.Helper()
	var out strings.Builder
	if err := cli.ResumeRollout(f.Ctx, f.Env.Client, f.NS, f.Provider.PoolName, &out); err != nil {
		f.T.Fatal(err)
	}
	f.T.Logf("rollout resume: %s", out.String())
}

// CheckUndrainableSchedule proves the Schedule undrainable-node behavior
// on the fixture's converged pool of n instances (a rolling
// update that surges, never below n): every Node runs a pod that a
// PodDisruptionBudget never lets go, and the version changes to to. The
// first drain ends at the pool's nodeDrainTimeout (5 s) with its instance
// kept, its Node schedulable again and the rollout paused by the engine
// (DrainBlocked, naming the Node and the budget); no old instance is
// deleted; restart (which stops the manager and starts another) keeps the
// pause. Once the budget allows evictions, resuming completes the roll.
func (f *Fixture) CheckUndrainableSchedule(n int, to string, timeout time.Duration, restart func()) {
	f.T.Helper()
	before := f.InstanceIDs()
	for i, node := range f.PoolNodes() {
		f.RunGuardedPod(fmt.Sprintf("%s-%d", GuardedApp, i), node.Name)
	}
	f.GuardingPDB(int32(n), 0)
	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) {
		annotate(mp, preview.UndrainableNodeBehaviorAnnotation, string(preview.UndrainableSchedule))
		mp.Spec.Template.Spec.Deletion.NodeDrainTimeoutSeconds = ptr.To[int32](5)
		mp.Spec.Template.Spec.Version = to
	})
	f.WaitCondition(timeout, infrav1.RolloutProgressingCondition, infrav1.DrainBlockedReason, "PodDisruptionBudget "+f.NS+"/"+GuardedApp)
	blocked := f.PoolCondition(infrav1.RolloutProgressingCondition).Message
	node := ""
	for _, nd := range f.PoolNodes() {
		if strings.Contains(blocked, nd.Name) {
			node = nd.Name
		}
	}
	if node == "" {
		f.T.Fatalf("the DrainBlocked pause %q names none of the pool's Nodes", blocked)
	}
	f.assertPausedOn(before, node, timeout)

	f.T.Log("a restarted manager keeps the pause")
	restart()
	f.WaitCondition(timeout, infrav1.RolloutProgressingCondition, infrav1.DrainBlockedReason, node)
	f.assertPausedOn(before, node, timeout)

	f.T.Log("the budget allows evictions; resume")
	f.GuardingPDB(0, int32(n))
	f.ResumeRollout()
	f.WaitRolled(before, n, to, 2*timeout)
}

// assertPausedOn waits until node (of a blocked drain) is schedulable again
// and no removal of an old instance is in flight, then checks that every
// instance of before still lives: a paused rollout deletes nothing.
func (f *Fixture) assertPausedOn(before []string, node string, timeout time.Duration) {
	f.T.Helper()
	testenv.Eventually(f.T, timeout, func() error {
		n, err := f.CS.CoreV1().Nodes().Get(f.Ctx, node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if n.Spec.Unschedulable {
			return fmt.Errorf("Node %s still cordoned", node)
		}
		return nil
	})
	live := f.InstanceIDs()
	for _, id := range before {
		if !slices.Contains(live, id) {
			f.T.Fatalf("old instance %s was deleted while the rollout was paused on %s (live %v)", id, node, live)
		}
	}
}

// CheckMaintenanceWindow proves a maintenance window on the fixture's
// converged pool of n instances: a change to to made while the
// window is closed replaces nothing and says until when; restart (which
// stops the manager and starts another) still waits; once the window is
// open the pool rolls to to.
func (f *Fixture) CheckMaintenanceWindow(n int, to string, timeout time.Duration, restart func()) {
	f.T.Helper()
	before := f.InstanceIDs()
	opens := time.Now().UTC().Add(12 * time.Hour).Truncate(time.Hour)
	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) {
		annotate(mp, preview.MaintenanceWindowScheduleAnnotation, fmt.Sprintf("0 %d * * *", opens.Hour()),
			preview.MaintenanceWindowDurationAnnotation, "1h")
		mp.Spec.Template.Spec.Version = to
	})
	until := "until " + opens.Format(time.RFC3339)
	f.WaitCondition(timeout, infrav1.RolloutProgressingCondition, infrav1.OutsideMaintenanceWindowReason, until)
	if got := f.InstanceIDs(); !sameSet(got, before) {
		f.T.Fatalf("instances %v outside the window; want %v untouched", got, before)
	}

	f.T.Log("a restarted manager still waits")
	restart()
	f.WaitCondition(timeout, infrav1.RolloutProgressingCondition, infrav1.OutsideMaintenanceWindowReason, until)
	if got := f.InstanceIDs(); !sameSet(got, before) {
		f.T.Fatalf("instances %v outside the window; want %v untouched", got, before)
	}

	f.T.Log("the window is open: the pool rolls")
	now := time.Now().UTC()
	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) {
		annotate(mp, preview.MaintenanceWindowScheduleAnnotation, fmt.Sprintf("%d %d * * *", now.Minute(), now.Hour()),
			preview.MaintenanceWindowDurationAnnotation, "2h")
	})
	f.WaitRolled(before, n, to, 2*timeout)
}

// sameSet reports whether a and b hold the same strings.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// CheckBlueGreen proves the BlueGreen strategy on the fixture's converged
// pool of n instances: a change to version to creates the full new set
// beside the old one (the group peaks at 2n instances), drains the old set
// in batches of one and, after a short soak, deletes it; Ready schedulable
// Nodes of the pool never fall below n, watched from outside.
func (f *Fixture) CheckBlueGreen(n int, to string, timeout time.Duration) {
	f.T.Helper()
	before := f.InstanceIDs()
	serving := WatchServing(f, n)
	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) {
		annotate(mp, preview.RolloutStrategyAnnotation, preview.StrategyBlueGreen,
			preview.BlueGreenBatchSizeAnnotation, "1",
			preview.BlueGreenPoolSoakAnnotation, "3s")
		mp.Spec.Template.Spec.Version = to
	})
	f.WaitRolled(before, n, to, 2*timeout)
	if peak := serving.AssertAtLeast(); peak != 2*n {
		f.T.Errorf("the group held at most %d instances during the blue-green rollout, want %d (the full green set beside the blue one)", peak, 2*n)
	}
	if a := Pool[client.Object](f).GetAnnotations(); a[preview.BlueGreenAnnotation] != "" {
		f.T.Errorf("the blue-green record is left on the pool: %s", a[preview.BlueGreenAnnotation])
	}
}

// DisruptionChecks runs CheckUndrainableSchedule, CheckMaintenanceWindow
// (each across a manager restart) and CheckBlueGreen as subtests, each on
// a pool of n instances that start returns converged, rolling to version
// to.
func DisruptionChecks(t *testing.T, n int, to string, timeout time.Duration, start func(t *testing.T) (*Fixture, *Manager)) {
	restarts := func(f *Fixture, m *Manager) func() {
		return func() {
			m.Stop()
			m = f.StartManager()
		}
	}
	t.Run("UndrainableSchedule", func(t *testing.T) {
		f, m := start(t)
		f.CheckUndrainableSchedule(n, to, timeout, restarts(f, m))
	})
	t.Run("MaintenanceWindow", func(t *testing.T) {
		f, m := start(t)
		f.CheckMaintenanceWindow(n, to, timeout, restarts(f, m))
	})
	t.Run("BlueGreen", func(t *testing.T) {
		f, _ := start(t)
		f.CheckBlueGreen(n, to, timeout)
	})
}
