package local

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/controller/kubeadmconfig"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

const converge = 90 * time.Second

func TestPoolOfThreeJoinsThroughTheBootstrapToken(t *testing.T) {
	f, mgr := start(t, cloudOptions{}, managerOptions{})
	f.createPool(poolSpec{replicas: 3})
	f.waitConverged(3, v1, "ubuntu-2404", converge)

	for _, n := range f.PoolNodes() {
		if n.Labels["mpool.dev/pool"] != poolName {
			t.Errorf("Node %s lacks the label from the bootstrap data's join configuration: %v", n.Name, n.Labels)
		}
	}
	lp := &infrav1.LocalMachinePool{}
	if err := env.Client.Get(f.Ctx, f.Key(poolName), lp); err != nil {
		t.Fatal(err)
	}
	if lp.Status.InfrastructureMachineKind != infrav1.LocalMachinePoolMachineKind || !slices.IsSorted(lp.Spec.ProviderIDList) || len(lp.Status.Instances) != 3 {
		t.Errorf("pool status: %+v, providerIDList %v", lp.Status, lp.Spec.ProviderIDList)
	}
	if err := itest.ConditionsTrue(lp.Status.Conditions, infrav1.ScaleGroupReadyCondition, infrav1.ScaleGroupModelUpdatedCondition, infrav1.ScaleGroupDesiredReplicasCondition, clusterv1.ReadyCondition); err != nil {
		t.Error(err)
	}
	machines := &infrav1.LocalMachinePoolMachineList{}
	if err := env.Client.List(f.Ctx, machines, client.InNamespace(f.NS)); err != nil {
		t.Fatal(err)
	}
	for _, m := range machines.Items {
		// Owned, not controlled, by the pool (contract.PoolOwner): Cluster
		// API's Machine controller controls it beside upstream.
		owner := contract.PoolOwner(&m, "LocalMachinePool")
		if owner == nil || owner.UID != lp.UID || metav1.GetControllerOf(&m) != nil || m.Labels[clusterv1.MachinePoolNameLabel] != poolName || m.Labels[clusterv1.ClusterNameLabel] != clusterName ||
			m.Name != poolName+"-"+m.Spec.InstanceID || m.Status.Version != v1 || m.Status.Zone == "" {
			t.Errorf("LocalMachinePoolMachine %s: %+v %+v %+v", m.Name, m.ObjectMeta.Labels, m.Spec, m.Status)
		}
	}

	// A converged pool costs one cloud read and no write per reconcile.
	const pokes = 5
	n := f.SteadyState(t, mgr, pokes)
	c := mgr.ScaleGroup.Counts()
	t.Logf("steady state: %d reconciles, %d cloud reads, %d cloud writes", n, c.Reads(), c.Writes())
	if c.Writes() != 0 || c.Reads() != n || n < pokes {
		t.Errorf("steady state cost %d reads and %d writes for %d reconciles, want one read and no write each", c.Reads(), c.Writes(), n)
	}
}

func TestScaleFollowsDeletePolicyAndDrainsFirst(t *testing.T) {
	f, _ := start(t, cloudOptions{}, managerOptions{spied: true})
	f.createPool(poolSpec{replicas: 3, maxUnavailable: intstr.FromInt32(3)})
	f.waitConverged(3, v1, "", converge)

	f.Scale(5)
	f.waitConverged(5, v1, "", converge)

	// Oldest first: the three oldest go when scaling to 2.
	live := f.Instances()
	slices.SortFunc(live, func(a, b core.Instance) int { return a.CreatedAt.Compare(b.CreatedAt) })
	guarded, plain, third := live[0].ID, live[1].ID, live[2].ID
	keep := []string{live[3].ID, live[4].ID}
	slices.Sort(keep)
	f.runPod("guarded", f.nodeName(guarded), "guarded")
	f.pdb("guarded", 1, 0)
	f.runPod("plain", f.nodeName(plain), "plain")
	f.runPod("survivor", f.nodeName(keep[0]), "survivor")

	f.Scale(2)
	testenv.Eventually(t, converge, func() error {
		ids := itest.IDs(f.Instances())
		if slices.Contains(ids, plain) || slices.Contains(ids, third) {
			return fmt.Errorf("live instances %v still include %s or %s", ids, plain, third)
		}
		return nil
	})
	// The PodDisruptionBudget allows no eviction: the oldest instance stays,
	// cordoned, with its pod, however often the pool is reconciled.
	ids := itest.IDs(f.Instances())
	if !slices.Contains(ids, guarded) {
		t.Fatalf("instance %s went although its pod's PodDisruptionBudget allows no eviction (live: %v)", guarded, ids)
	}
	node, err := f.CS.CoreV1().Nodes().Get(f.Ctx, f.nodeName(guarded), metav1.GetOptions{})
	if err != nil || !node.Spec.Unschedulable {
		t.Errorf("Node of %s should be cordoned: %v", guarded, err)
	}
	if !f.podExists("guarded") {
		t.Error("the guarded pod was evicted against its PodDisruptionBudget")
	}
	lp := &infrav1.LocalMachinePool{}
	if err := env.Client.Get(f.Ctx, f.Key(poolName), lp); err != nil {
		t.Fatal(err)
	}
	m := &infrav1.LocalMachinePoolMachine{}
	if err := env.Client.Get(f.Ctx, f.Key(contract.InstanceObjectName(poolName, guarded)), m); err != nil {
		t.Fatal(err)
	}
	if m.Status.State != infrav1.LocalInstanceDeleting || m.Annotations[preview.DrainStartedAnnotation] == "" {
		t.Errorf("blocked victim's LocalMachinePoolMachine: state %s, annotations %v", m.Status.State, m.Annotations)
	}

	f.pdb("guarded", 0, -1)
	f.waitConverged(2, v1, "", converge)
	if got := itest.IDs(f.Instances()); !slices.Equal(got, keep) {
		t.Errorf("kept %v, want the two newest %v", got, keep)
	}
	if f.podExists("guarded") || f.podExists("plain") || !f.podExists("survivor") {
		t.Error("pods of victims must be evicted, the survivor's pod kept")
	}
	f.spy.assertClean()
}

func TestRollingUpgradeKeepsTheBudgets(t *testing.T) {
	for _, tc := range []struct {
		name           string
		replicas       int
		maxSurge       intstr.IntOrString
		maxUnavailable intstr.IntOrString
		surge, unavail int // resolved against replicas
		change         func(*fixture)
		version, image string
	}{
		{
			name: "version with maxSurge 1 maxUnavailable 0", replicas: 3,
			maxSurge: intstr.FromInt32(1), maxUnavailable: intstr.FromInt32(0), surge: 1, unavail: 0,
			change: func(f *fixture) { f.SetVersion(v2) }, version: v2, image: "ubuntu-2404",
		},
		{
			name: "image with maxSurge 25% maxUnavailable 1", replicas: 5,
			maxSurge: intstr.FromString("25%"), maxUnavailable: intstr.FromInt32(1), surge: 2, unavail: 1,
			change: func(f *fixture) {
				f.updateLocalPool(func(p *infrav1.LocalMachinePool) { p.Spec.Template.Image = "ubuntu-2604" })
			},
			version: v1, image: "ubuntu-2604",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := start(t, cloudOptions{}, managerOptions{spied: true})
			f.createPool(poolSpec{replicas: int32(tc.replicas), maxSurge: tc.maxSurge, maxUnavailable: tc.maxUnavailable})
			f.waitConverged(tc.replicas, v1, "ubuntu-2404", converge)
			before := itest.IDs(f.Instances())
			for i, id := range before {
				f.runPod(fmt.Sprintf("app-%d", i), f.nodeName(id), "app")
			}

			w := itest.WatchBudgets(f.Fixture, tc.replicas, tc.surge, tc.unavail)
			tc.change(f)
			f.waitConverged(tc.replicas, tc.version, tc.image, 2*converge)
			w.AssertHeld()

			after := itest.IDs(f.Instances())
			for _, id := range before {
				if slices.Contains(after, id) {
					t.Errorf("instance %s was not replaced", id)
				}
			}
			f.spy.assertClean()
		})
	}
}

func TestDeletingAPoolMachineReplacesThatInstance(t *testing.T) {
	f, _ := start(t, cloudOptions{}, managerOptions{spied: true})
	f.createPool(poolSpec{replicas: 3})
	f.waitConverged(3, v1, "", converge)

	before := itest.IDs(f.Instances())
	victim := before[1]
	f.runPod("app", f.nodeName(victim), "app")
	machine := &clusterv1.Machine{}
	if err := env.Client.Get(f.Ctx, f.Key(contract.InstanceObjectName(poolName, victim)), machine); err != nil {
		t.Fatalf("the pool Machine of %s: %v", victim, err)
	}
	if err := env.Client.Delete(f.Ctx, machine); err != nil {
		t.Fatal(err)
	}

	testenv.Eventually(t, converge, func() error {
		if ids := itest.IDs(f.Instances()); slices.Contains(ids, victim) {
			return fmt.Errorf("instance %s survives the deletion of its Machine (live: %v)", victim, ids)
		}
		return nil
	})
	f.waitConverged(3, v1, "", converge)
	after := itest.IDs(f.Instances())
	var kept int
	for _, id := range before {
		if slices.Contains(after, id) {
			kept++
		}
	}
	if kept != 2 {
		t.Errorf("instances before %v, after %v: exactly the deleted Machine's instance should be replaced", before, after)
	}
	if f.podExists("app") {
		t.Error("the pod on the deleted instance's Node was not evicted")
	}
	if d := f.spy.deleted(); len(d) != 1 || d[victim] != 1 {
		t.Errorf("deleted instances %v, want only %s", d, victim)
	}
	f.spy.assertClean()
}

func TestSkipMachinePoolModelReconciliation(t *testing.T) {
	f, _ := start(t, cloudOptions{}, managerOptions{skipModelReconciliation: true, spied: true})
	f.createPool(poolSpec{replicas: 3, deletePolicy: infrav1.NewestDeletePolicyType})
	f.waitConverged(3, v1, "", converge)
	old := itest.IDs(f.Instances())
	oldHash := f.Instances()[0].ModelHash

	// A new version: the model changes, the instances stay.
	f.SetVersion(v2)
	var lp infrav1.LocalMachinePool
	testenv.Eventually(t, converge, func() error {
		if err := env.Client.Get(f.Ctx, f.Key(poolName), &lp); err != nil {
			return err
		}
		c := meta.FindStatusCondition(lp.Status.Conditions, infrav1.ScaleGroupModelUpdatedCondition)
		if lp.Status.ModelHash == oldHash || c == nil || c.Status != metav1.ConditionFalse {
			return fmt.Errorf("model %s, ScaleGroupModelUpdated %+v", lp.Status.ModelHash, c)
		}
		if p := meta.FindStatusCondition(lp.Status.Conditions, infrav1.RolloutProgressingCondition); p == nil || p.Reason != infrav1.ConvergedReason {
			return fmt.Errorf("RolloutProgressing %+v: the stale instances must not keep the rollout going", p)
		}
		return nil
	})
	if got := itest.IDs(f.Instances()); !slices.Equal(got, old) {
		t.Fatalf("instances %v replaced (was %v) although the gate keeps stale instances", got, old)
	}

	// Scaling out adds an instance on the new model.
	f.Scale(4)
	testenv.Eventually(t, converge, func() error { return f.readyOnModels(4, map[string]int{oldHash: 3, lp.Status.ModelHash: 1}) })
	// Scaling in follows deletePolicy (Newest) and not staleness: the new
	// instance goes, the stale ones stay.
	f.Scale(3)
	testenv.Eventually(t, converge, func() error {
		if got := itest.IDs(f.Instances()); !slices.Equal(got, old) {
			return fmt.Errorf("live %v, want the stale %v", got, old)
		}
		return f.readyOnModels(3, map[string]int{oldHash: 3})
	})
	// Deleting an instance's Machine replaces it on the new model.
	m := &clusterv1.Machine{}
	if err := env.Client.Get(f.Ctx, f.Key(contract.InstanceObjectName(poolName, old[0])), m); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(f.Ctx, m); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, converge, func() error { return f.readyOnModels(3, map[string]int{oldHash: 2, lp.Status.ModelHash: 1}) })
	f.spy.assertClean()
}

// readyOnModels checks that the pool has n live instances, all with Ready
// Nodes, with the given count per model hash.
func (f *fixture) readyOnModels(n int, models map[string]int) error {
	live := f.Instances()
	if len(live) != n {
		return fmt.Errorf("%d live instances, want %d", len(live), n)
	}
	got := map[string]int{}
	for _, in := range live {
		if in.Join != core.JoinJoined {
			return fmt.Errorf("instance %s has not joined", in.ID)
		}
		got[in.ModelHash]++
	}
	for h, want := range models {
		if got[h] != want {
			return fmt.Errorf("instances per model %v, want %v", got, models)
		}
	}
	if nodes := f.PoolNodes(); len(nodes) != n {
		return fmt.Errorf("%d Nodes, want %d", len(nodes), n)
	}
	return nil
}

func TestRolloutPauseAnnotation(t *testing.T) {
	f, _ := start(t, cloudOptions{}, managerOptions{})
	f.createPool(poolSpec{replicas: 2})
	f.waitConverged(2, v1, "", converge)
	before := itest.IDs(f.Instances())

	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) {
		if mp.Annotations == nil {
			mp.Annotations = map[string]string{}
		}
		mp.Annotations[preview.RolloutPausedAnnotation] = "true"
		mp.Spec.Template.Spec.Version = v2
	})
	testenv.Eventually(t, converge, func() error {
		lp := &infrav1.LocalMachinePool{}
		if err := env.Client.Get(f.Ctx, f.Key(poolName), lp); err != nil {
			return err
		}
		c := meta.FindStatusCondition(lp.Status.Conditions, infrav1.RolloutProgressingCondition)
		m := meta.FindStatusCondition(lp.Status.Conditions, infrav1.ScaleGroupModelUpdatedCondition)
		if c == nil || c.Reason != "Paused" || m == nil || m.Status != metav1.ConditionFalse {
			return fmt.Errorf("RolloutProgressing %+v, ScaleGroupModelUpdated %+v", c, m)
		}
		return nil
	})
	if got := itest.IDs(f.Instances()); !slices.Equal(got, before) {
		t.Fatalf("a paused rollout replaced instances: %v, was %v", got, before)
	}

	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) { delete(mp.Annotations, preview.RolloutPausedAnnotation) })
	f.waitConverged(2, v2, "", converge)
}

func TestManagerRestartMidRollout(t *testing.T) {
	f, first := start(t, cloudOptions{bootDelay: 300 * time.Millisecond, bootJitter: 200 * time.Millisecond}, managerOptions{spied: true})
	f.createPool(poolSpec{replicas: 4, maxSurge: intstr.FromInt32(1), maxUnavailable: intstr.FromInt32(0)})
	f.waitConverged(4, v1, "", converge)
	live := f.Instances()
	slices.SortFunc(live, func(a, b core.Instance) int { return a.CreatedAt.Compare(b.CreatedAt) })
	before := itest.IDs(live)
	// The oldest instance goes first; its pod's budget blocks its drain.
	oldest := live[0].ID
	f.runPod("guarded", f.nodeName(oldest), "guarded")
	f.pdb("guarded", 1, 0)
	for i, in := range live[1:] {
		f.runPod(fmt.Sprintf("app-%d", i), f.nodeName(in.ID), "app")
	}

	w := itest.WatchBudgets(f.Fixture, 4, 1, 0)
	f.SetVersion(v2)
	// Kill the manager while it drains the oldest instance.
	obj := f.Key(contract.InstanceObjectName(poolName, oldest))
	var started string
	testenv.Eventually(t, converge, func() error {
		m := &infrav1.LocalMachinePoolMachine{}
		if err := env.Client.Get(f.Ctx, obj, m); err != nil {
			return err
		}
		if started = m.Annotations[preview.DrainStartedAnnotation]; started == "" {
			return fmt.Errorf("the drain of %s has not started", oldest)
		}
		return nil
	})
	first.Stop()
	t.Logf("manager stopped while draining %s (started %s); deleted so far: %v", oldest, started, f.spy.deleted())

	// A new manager resumes: the blocked drain stays blocked, the rollout
	// goes on around it within the budgets.
	startManager(t, f, managerOptions{spied: true})
	testenv.Eventually(t, converge, func() error {
		for _, id := range before[1:] {
			if f.spy.deleted()[id] > 0 {
				return nil
			}
		}
		return fmt.Errorf("no other old instance replaced yet: deleted %v", f.spy.deleted())
	})
	m := &infrav1.LocalMachinePoolMachine{}
	if err := env.Client.Get(f.Ctx, obj, m); err != nil {
		t.Fatal(err)
	}
	if got := m.Annotations[preview.DrainStartedAnnotation]; got != started {
		t.Errorf("the drain of %s restarted at %s; it started at %s", oldest, got, started)
	}
	if !slices.Contains(itest.IDs(f.Instances()), oldest) || !f.podExists("guarded") {
		t.Errorf("instance %s went although its pod's budget allows no eviction", oldest)
	}

	f.pdb("guarded", 0, -1)
	f.waitConverged(4, v2, "", 2*converge)
	w.AssertHeld()
	f.spy.assertClean()
	after := itest.IDs(f.Instances())
	for _, id := range before {
		if slices.Contains(after, id) {
			t.Errorf("instance %s was not replaced", id)
		}
		if f.spy.deleted()[id] != 1 {
			t.Errorf("instance %s deleted %d times", id, f.spy.deleted()[id])
		}
	}
	// Nothing orphaned: the group holds exactly the pool's instances, and
	// waitConverged checked one Node, one LocalMachinePoolMachine and one
	// Machine per instance.
	if g := f.Group(); len(g.Instances) != 4 {
		t.Errorf("cloud group has %v", itest.InstanceStates(g))
	}
}

func TestFaultsConvergeWithinTwiceTheRequests(t *testing.T) {
	run := func(name string, faults core.Faults) (total int64) {
		t.Run(name, func(t *testing.T) { total = runFaults(t, faults) })
		return total
	}
	// "Throttling and 5xx at 20%": a fifth of the requests are answered
	// with a fault, half 429 with Retry-After, half 5xx. The harsher mix of
	// 20% each (36% of requests failing; at best 1.56x the requests) is
	// measured too, and logged.
	clean := run("fault-free", core.Faults{})
	faulty := run("10% throttling and 10% 5xx", core.Faults{ThrottleRate: 0.1, ErrorRate: 0.1, RetryAfter: time.Second})
	harsh := run("20% throttling and 20% 5xx", core.Faults{ThrottleRate: 0.2, ErrorRate: 0.2, RetryAfter: time.Second})
	if clean == 0 || faulty == 0 || harsh == 0 {
		t.Fatal("a run did not finish")
	}
	t.Logf("fault-free: %d requests; 20%% faults: %d requests (%.2fx); 20%% throttling and 20%% 5xx: %d requests (%.2fx)",
		clean, faulty, float64(faulty)/float64(clean), harsh, float64(harsh)/float64(clean))
	if faulty > 2*clean {
		t.Errorf("with 20%% faults the pool needed %d cloud requests, more than twice the %d of the fault-free run", faulty, clean)
	}
}

// runFaults creates a pool of 5, rolls it to a new version on a cloud with
// faults, and returns the cloud requests it took.
func runFaults(t *testing.T, faults core.Faults) int64 {
	f, _ := start(t, cloudOptions{faults: faults, seed: 7}, managerOptions{})
	f.createPool(poolSpec{replicas: 5})
	f.waitConverged(5, v1, "", 2*converge)
	f.SetVersion(v2)
	f.waitConverged(5, v2, "", 2*converge)
	st := f.Cloud.Stats()
	var failed int64
	for _, r := range st.Requests {
		if r.Status >= 400 {
			failed += r.Count
		}
	}
	t.Logf("%d cloud requests, %d answered with an error: %+v", st.Total(), failed, st.Requests)
	return st.Total()
}

func TestDeletingThePoolLeavesNothing(t *testing.T) {
	f, _ := start(t, cloudOptions{}, managerOptions{spied: true})
	f.createPool(poolSpec{replicas: 3})
	f.waitConverged(3, v1, "", converge)
	f.runPod("app", f.nodeName(f.Instances()[0].ID), "app")
	cfg := &bootstrapv1.KubeadmConfig{}
	if err := env.Client.Get(f.Ctx, f.Key(poolName), cfg); err != nil {
		t.Fatal(err)
	}
	tokens := client.MatchingLabels{kubeadmconfig.TokenConfigUIDLabel: string(cfg.UID)}
	if n := f.count(&corev1.SecretList{}, client.InNamespace(metav1.NamespaceSystem), tokens); n == 0 {
		t.Fatal("the pool joined without a bootstrap token Secret")
	}

	mp := &clusterv1.MachinePool{}
	if err := env.Client.Get(f.Ctx, f.Key(poolName), mp); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(f.Ctx, mp); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, converge, func() error {
		for _, obj := range []client.Object{&clusterv1.MachinePool{}, &infrav1.LocalMachinePool{}} {
			if err := env.Client.Get(f.Ctx, f.Key(poolName), obj); !apierrors.IsNotFound(err) {
				return fmt.Errorf("%T still exists (%v)", obj, err)
			}
		}
		if _, err := f.Cloud.Cloud().GetGroup(f.group); core.CodeOf(err) != core.CodeNotFound {
			return fmt.Errorf("the cloud still has group %s (%v)", f.group, err)
		}
		if n := len(f.PoolNodes()); n != 0 {
			return fmt.Errorf("%d Nodes left", n)
		}
		for _, c := range []struct {
			list client.ObjectList
			opts []client.ListOption
		}{
			{&infrav1.LocalMachinePoolMachineList{}, []client.ListOption{client.InNamespace(f.NS)}},
			{&clusterv1.MachineList{}, []client.ListOption{client.InNamespace(f.NS)}},
			{&bootstrapv1.KubeadmConfigList{}, []client.ListOption{client.InNamespace(f.NS)}},
			// The bootstrap data Secret; the kubeconfig and CA Secrets stay.
			{&corev1.SecretList{}, []client.ListOption{client.InNamespace(f.NS), client.MatchingFields{"metadata.name": poolName}}},
			// The bootstrap tokens in the workload cluster.
			{&corev1.SecretList{}, []client.ListOption{client.InNamespace(metav1.NamespaceSystem), tokens}},
		} {
			if n := f.count(c.list, c.opts...); n != 0 {
				return fmt.Errorf("%d %T items left", n, c.list)
			}
		}
		return nil
	})
	if f.podExists("app") {
		t.Error("the pool's Nodes were not drained")
	}
	f.spy.assertClean()
}

// count lists and counts objects.
func (f *fixture) count(list client.ObjectList, opts ...client.ListOption) int {
	f.T.Helper()
	if err := env.Client.List(f.Ctx, list, opts...); err != nil {
		f.T.Fatal(err)
	}
	n, err := meta.ExtractList(list)
	if err != nil {
		f.T.Fatal(err)
	}
	return len(n)
}

// runPod runs a pod on node and waits until the simulated VM's node agent,
// which plays the kubelet, reports it Running and Ready (the eviction API
// ignores budgets for pods that are not running). The pod keeps the default
// grace period: the node agent finishes its deletion when it is evicted.
func (f *fixture) runPod(name, node, app string) {
	f.T.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.NS, Labels: map[string]string{"app": app}},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	if _, err := f.CS.CoreV1().Pods(f.NS).Create(f.Ctx, p, metav1.CreateOptions{}); err != nil {
		f.T.Fatalf("creating pod %s: %v", name, err)
	}
	testenv.Eventually(f.T, 30*time.Second, func() error {
		p, err := f.CS.CoreV1().Pods(f.NS).Get(f.Ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && p.Status.Phase == corev1.PodRunning {
				return nil
			}
		}
		return fmt.Errorf("pod %s is %s", name, p.Status.Phase)
	})
}

func (f *fixture) podExists(name string) bool {
	f.T.Helper()
	_, err := f.CS.CoreV1().Pods(f.NS).Get(f.Ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		f.T.Fatal(err)
	}
	return true
}

// pdb creates, or changes, a PodDisruptionBudget for app requiring
// minAvailable pods, and waits until the disruption controller has seen the
// change and, unless wantAllowed is negative, says it allows wantAllowed
// disruptions. (Once a budget allows an eviction, a drain may use it at
// once: then only the change is waited for.)
func (f *fixture) pdb(app string, minAvailable, wantAllowed int32) {
	f.T.Helper()
	pdbs := f.CS.PolicyV1().PodDisruptionBudgets(f.NS)
	_, err := pdbs.Get(f.Ctx, app, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = pdbs.Create(f.Ctx, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: f.NS},
			Spec: policyv1.PodDisruptionBudgetSpec{
				MinAvailable: ptr.To(intstr.FromInt32(minAvailable)),
				Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			},
		}, metav1.CreateOptions{})
	case err == nil:
		patch := fmt.Sprintf(`{"spec":{"minAvailable":%d}}`, minAvailable)
		_, err = pdbs.Patch(f.Ctx, app, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	}
	if err != nil {
		f.T.Fatal(err)
	}
	testenv.Eventually(f.T, 30*time.Second, func() error {
		b, err := pdbs.Get(f.Ctx, app, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if b.Status.ObservedGeneration != b.Generation || wantAllowed >= 0 && b.Status.DisruptionsAllowed != wantAllowed {
			return fmt.Errorf("budget %s: observed generation %d of %d, %d disruptions allowed, want %d (status %+v)",
				app, b.Status.ObservedGeneration, b.Generation, b.Status.DisruptionsAllowed, wantAllowed, b.Status)
		}
		return nil
	})
}
