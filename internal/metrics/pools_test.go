package metrics

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/testenv"
)

var poolMetrics = []string{ReplicasMetric, PhaseMetric, RolloutProgressMetric, InstancesMetric}

// TestPoolCollector builds two pools in a real API server and checks every
// series the collector exports for them, then deletes one and checks that
// its series are gone.
//
// pool-a has a LocalMachinePool that reports per-instance objects: three
// Running and Ready (two up to date), one Booting (up to date, not Ready:
// not counted by the rollout progress), one Failed, one without a state
// (Unknown), one being deleted (up to date, but not counted as such), and
// one controlled by another pool (ignored).
// Its unavailable replicas are spec.replicas less status.availableReplicas.
// pool-b has no spec.replicas yet and its infrastructure pool does not
// exist: only the status replicas and the phase are known, and the one
// replica spec.replicas defaults to is unavailable.
func TestPoolCollector(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t)

	a := createMachinePool(t, ns, "pool-a", "c1", ptr.To[int32](4), clusterv1.MachinePoolStatus{
		Phase: string(clusterv1.MachinePoolPhaseProvisioned), Replicas: ptr.To[int32](6), ReadyReplicas: ptr.To[int32](3), AvailableReplicas: ptr.To[int32](2),
	})
	infraA := createInfraPool(t, ns, "pool-a", infrav1.LocalMachinePoolMachineKind)
	other := createInfraPool(t, ns, "other", infrav1.LocalMachinePoolMachineKind)
	for _, in := range []struct {
		name   string
		owner  *infrav1.LocalMachinePool
		state  infrav1.LocalInstanceState
		latest bool
	}{
		{"a-0", infraA, infrav1.LocalInstanceRunning, true},
		{"a-1", infraA, infrav1.LocalInstanceRunning, true},
		{"a-2", infraA, infrav1.LocalInstanceRunning, false},
		{"a-3", infraA, infrav1.LocalInstanceBooting, true},
		{"a-4", infraA, infrav1.LocalInstanceFailed, false},
		{"a-5", infraA, "", false},
		{"a-6", infraA, infrav1.LocalInstanceRunning, true}, // deleted below
		{"o-0", other, infrav1.LocalInstanceRunning, true},
	} {
		createInstance(t, ns, in.name, in.owner, in.state, in.latest)
	}
	deleting := &infrav1.LocalMachinePoolMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a-6"}}
	if err := env.Client.Delete(ctx, deleting); err != nil {
		t.Fatal(err)
	}
	createMachinePool(t, ns, "pool-b", "c2", nil, clusterv1.MachinePoolStatus{
		Phase: string(clusterv1.MachinePoolPhaseProvisioning), Replicas: ptr.To[int32](1),
	})

	c := NewPoolCollector(ctx, client.NewNamespacedClient(env.Client, ns), provider.Adapters())
	want := header +
		series(ReplicasMetric, "c1", "pool-a", ns, "state", map[string]float64{
			"desired": 4, "current": 6, "ready": 3, "available": 2, "unavailable": 2, "up_to_date": 3,
		}) +
		series(ReplicasMetric, "c2", "pool-b", ns, "state", map[string]float64{
			"current": 1, "ready": 0, "available": 0, "unavailable": 1,
		}) +
		phases("c1", "pool-a", ns, clusterv1.MachinePoolPhaseProvisioned) +
		phases("c2", "pool-b", ns, clusterv1.MachinePoolPhaseProvisioning) +
		fmt.Sprintf("%s{cluster=%q,name=%q,namespace=%q} 0.5\n", RolloutProgressMetric, "c1", "pool-a", ns) +
		series(InstancesMetric, "c1", "pool-a", ns, "state", map[string]float64{
			"Pending": 0, "Booting": 1, "Running": 3, "Failed": 1, "Deleting": 1, "Unknown": 1,
		})
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), poolMetrics...); err != nil {
		t.Fatal(err)
	}
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Fatalf("lint: %v %v", problems, err)
	}

	// A deleted pool's series go with it; the other pool's stay.
	if err := env.Client.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	want = header +
		series(ReplicasMetric, "c2", "pool-b", ns, "state", map[string]float64{
			"current": 1, "ready": 0, "available": 0, "unavailable": 1,
		}) +
		phases("c2", "pool-b", ns, clusterv1.MachinePoolPhaseProvisioning)
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), poolMetrics...); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(c, RolloutProgressMetric, InstancesMetric); n != 0 {
		t.Fatalf("%d rollout and instance series remain after pool-a was deleted", n)
	}
}

// TestPoolCollectorReadsEveryProvider counts the instances of an Azure, an
// AWS and an EKS pool in mpool's one vocabulary: each provider records its
// cloud's own word (provisioningState Succeeded, lifecycle state InService,
// EC2 state running), which its reader maps. Reading status.state, as the
// collector once did, counted every one of them Unknown.
func TestPoolCollectorReadsEveryProvider(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t)
	mk := func(pool client.Object, kind string, statuses ...func(contract.InstanceObject)) {
		t.Helper()
		if err := env.Client.Create(ctx, pool); err != nil {
			t.Fatal(err)
		}
		createMachinePoolOf(t, ns, pool.GetName(), kind)
		a := adapterOf(t, kind)
		for i, write := range statuses {
			obj := a.NewInstance()
			obj.SetNamespace(ns)
			obj.SetName(fmt.Sprintf("%s-%d", pool.GetName(), i))
			obj.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(pool, infrav1.GroupVersion.WithKind(kind))})
			a.WriteInstanceSpec(obj, fmt.Sprint(i), fmt.Sprintf("p:///%s/%d", pool.GetName(), i))
			if err := env.Client.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
			write(obj)
			if err := env.Client.Status().Update(ctx, obj); err != nil {
				t.Fatal(err)
			}
		}
	}
	azure := func(state infrav1.ProvisioningState, failed bool) func(contract.InstanceObject) {
		return func(o contract.InstanceObject) {
			st := &o.(*infrav1.AzureMachinePoolMachine).Status
			st.ProvisioningState, st.Ready, st.LatestModelApplied = &state, state == infrav1.Succeeded && !failed, true
			if failed {
				st.FailureReason = ptr.To("InstanceFailed")
			}
		}
	}
	aws := func(state string) func(contract.InstanceObject) {
		return func(o contract.InstanceObject) {
			st := &o.(*infrav1.AWSMachinePoolMachine).Status
			st.LifecycleState, st.Ready, st.LatestModelApplied = state, state == "InService", true
		}
	}
	eks := func(state string) func(contract.InstanceObject) {
		return func(o contract.InstanceObject) {
			st := &o.(*infrav1.AWSManagedMachinePoolMachine).Status
			st.State, st.Ready, st.LatestModelApplied = state, state == "running", true
		}
	}
	mk(&infrav1.AzureMachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "az"}, Spec: infrav1.AzureMachinePoolSpec{
		Template: infrav1.AzureMachinePoolMachineTemplate{VMSize: "Standard_D2s_v3", OSDisk: infrav1.OSDisk{OSType: "Linux", DiskSizeGB: ptr.To[int32](30)}},
	}}, "AzureMachinePool",
		azure(infrav1.Succeeded, false), azure(infrav1.Succeeded, false), azure(infrav1.Creating, false), azure(infrav1.Failed, true))
	mk(&infrav1.AWSMachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "asg"}, Spec: infrav1.AWSMachinePoolSpec{
		MaxSize: 5, AWSLaunchTemplate: infrav1.AWSLaunchTemplate{InstanceType: "m5.large"},
	}}, "AWSMachinePool",
		aws("InService"), aws("Pending:Wait"), aws("Terminating"))
	mk(&infrav1.AWSManagedMachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ng"}}, "AWSManagedMachinePool",
		eks("running"), eks("pending"))

	c := NewPoolCollector(ctx, client.NewNamespacedClient(env.Client, ns), provider.Adapters())
	want := header[strings.Index(header, "# HELP mpool_machinepool_instances"):strings.Index(header, "# HELP mpool_machinepool_phase")] +
		series(InstancesMetric, "c", "az", ns, "state", map[string]float64{"Pending": 1, "Booting": 0, "Running": 2, "Failed": 1, "Deleting": 0}) +
		series(InstancesMetric, "c", "asg", ns, "state", map[string]float64{"Pending": 0, "Booting": 1, "Running": 1, "Failed": 0, "Deleting": 1}) +
		series(InstancesMetric, "c", "ng", ns, "state", map[string]float64{"Pending": 1, "Booting": 0, "Running": 1, "Failed": 0, "Deleting": 0})
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), InstancesMetric); err != nil {
		t.Fatal(err)
	}
}

// adapterOf is the registry's adapter of an infra pool kind.
func adapterOf(t *testing.T, kind string) contract.Adapter {
	t.Helper()
	for _, a := range provider.Adapters() {
		if a.Kinds().Pool == kind {
			return a
		}
	}
	t.Fatalf("no provider serves %s", kind)
	return nil
}

// createMachinePoolOf creates a MachinePool of cluster "c" whose
// infrastructure is the pool of kind named name.
func createMachinePoolOf(t *testing.T, ns, name, kind string) {
	t.Helper()
	mp := &clusterv1.MachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1.MachinePoolSpec{ClusterName: "c", Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
			ClusterName:       "c",
			Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To("")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: kind, Name: name},
		}}},
	}
	if err := env.Client.Create(context.Background(), mp); err != nil {
		t.Fatalf("creating MachinePool %s: %v", name, err)
	}
}

func TestRolloutProgress(t *testing.T) {
	tests := []struct {
		name           string
		ready, desired int32
		want           float64
	}{
		{name: "half way", ready: 2, desired: 4, want: 0.5},
		{name: "done", ready: 4, desired: 4, want: 1},
		{name: "surge instances do not push it past 1", ready: 5, desired: 4, want: 1},
		{name: "nothing desired is nothing to roll", ready: 0, desired: 0, want: 1},
		{name: "not started", ready: 0, desired: 3, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rolloutProgress(tt.ready, tt.desired); got != tt.want {
				t.Fatalf("rolloutProgress(%d, %d) = %v, want %v", tt.ready, tt.desired, got, tt.want)
			}
		})
	}
}

const header = `
# HELP mpool_machinepool_instances Instances of a MachinePool by lifecycle state, one vocabulary for every provider (Pending, Booting, Running, Failed, Deleting; Unknown before the controller first reports an instance).
# TYPE mpool_machinepool_instances gauge
# HELP mpool_machinepool_phase Phase of a MachinePool: 1 for its current status.phase, 0 for the others.
# TYPE mpool_machinepool_phase gauge
# HELP mpool_machinepool_replicas Replicas of a MachinePool by state: desired (spec.replicas), current (instances of the infrastructure pool), ready (Node Ready), available (Ready for minReadySeconds), unavailable (desired but not available) and up_to_date (instances running the pool's latest model, when the infrastructure pool reports per-instance objects).
# TYPE mpool_machinepool_replicas gauge
# HELP mpool_machinepool_rollout_progress_ratio Fraction of a MachinePool's desired replicas that run its latest model and are Ready, from 0 to 1; 1 when the rollout is complete or no replicas are desired.
# TYPE mpool_machinepool_rollout_progress_ratio gauge
`

// series renders one pool's series of metric in the text format, labels
// sorted by name as testutil compares them.
func series(metric, cluster, name, ns, label string, values map[string]float64) string {
	var b strings.Builder
	for v, x := range values {
		fmt.Fprintf(&b, "%s{cluster=%q,name=%q,namespace=%q,%s=%q} %g\n", metric, cluster, name, ns, label, v, x)
	}
	return b.String()
}

// phases renders one pool's mpool_machinepool_phase series.
func phases(cluster, name, ns string, current clusterv1.MachinePoolPhase) string {
	values := map[string]float64{}
	for _, p := range Phases {
		values[string(p)] = 0
	}
	values[string(current)] = 1
	return series(PhaseMetric, cluster, name, ns, "phase", values)
}

// createMachinePool creates a MachinePool backed by the LocalMachinePool of
// the same name, then writes status through the status subresource.
func createMachinePool(t *testing.T, ns, name, cluster string, replicas *int32, status clusterv1.MachinePoolStatus) *clusterv1.MachinePool {
	t.Helper()
	mp := &clusterv1.MachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1.MachinePoolSpec{
			ClusterName: cluster,
			Replicas:    replicas,
			Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				ClusterName: cluster,
				Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To(name + "-bootstrap")},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: infrav1.GroupVersion.Group, Kind: "LocalMachinePool", Name: name,
				},
			}},
		},
	}
	if err := env.Client.Create(context.Background(), mp); err != nil {
		t.Fatalf("creating MachinePool %s: %v", name, err)
	}
	mp.Status = status
	if err := env.Client.Status().Update(context.Background(), mp); err != nil {
		t.Fatalf("writing the status of MachinePool %s: %v", name, err)
	}
	return mp
}

// createInfraPool creates a LocalMachinePool reporting machineKind.
func createInfraPool(t *testing.T, ns, name, machineKind string) *infrav1.LocalMachinePool {
	t.Helper()
	p := &infrav1.LocalMachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := env.Client.Create(context.Background(), p); err != nil {
		t.Fatalf("creating LocalMachinePool %s: %v", name, err)
	}
	p.Status.Ready = true
	p.Status.InfrastructureMachineKind = machineKind
	if err := env.Client.Status().Update(context.Background(), p); err != nil {
		t.Fatalf("writing the status of LocalMachinePool %s: %v", name, err)
	}
	return p
}

// createInstance creates a LocalMachinePoolMachine controlled by owner, with
// a finalizer (so that deleting it leaves it Deleting) and the given status.
func createInstance(t *testing.T, ns, name string, owner *infrav1.LocalMachinePool, state infrav1.LocalInstanceState, latest bool) {
	t.Helper()
	m := &infrav1.LocalMachinePoolMachine{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       ns,
			Name:            name,
			Finalizers:      []string{infrav1.LocalMachinePoolMachineFinalizer},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(owner, infrav1.GroupVersion.WithKind("LocalMachinePool"))},
		},
		Spec: infrav1.LocalMachinePoolMachineSpec{ProviderID: "local:///" + ns + "/" + name},
	}
	if err := env.Client.Create(context.Background(), m); err != nil {
		t.Fatalf("creating LocalMachinePoolMachine %s: %v", name, err)
	}
	m.Status.State = state
	m.Status.LatestModelApplied = latest
	m.Status.Ready = state == infrav1.LocalInstanceRunning
	if err := env.Client.Status().Update(context.Background(), m); err != nil {
		t.Fatalf("writing the status of LocalMachinePoolMachine %s: %v", name, err)
	}
}

// TestAddToManager runs a manager with the collector wired in and reads the
// metrics from the registry it was given: through the manager's cache (the
// per-instance objects unstructured, as the MachinePool controller reads
// them), and only while the manager runs.
func TestAddToManager(t *testing.T) {
	ns := env.NewNamespace(t)
	createMachinePool(t, ns, "pool", "c", ptr.To[int32](2), clusterv1.MachinePoolStatus{
		Phase: string(clusterv1.MachinePoolPhaseRunning), Replicas: ptr.To[int32](2), ReadyReplicas: ptr.To[int32](2), AvailableReplicas: ptr.To[int32](2),
	})
	infra := createInfraPool(t, ns, "pool", infrav1.LocalMachinePoolMachineKind)
	createInstance(t, ns, "pool-0", infra, infrav1.LocalInstanceRunning, true)
	createInstance(t, ns, "pool-1", infra, infrav1.LocalInstanceRunning, false)

	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	if err := AddToManager(mgr, reg, provider.Adapters()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()

	want := header +
		series(ReplicasMetric, "c", "pool", ns, "state", map[string]float64{
			"desired": 2, "current": 2, "ready": 2, "available": 2, "unavailable": 0, "up_to_date": 1,
		}) +
		phases("c", "pool", ns, clusterv1.MachinePoolPhaseRunning) +
		fmt.Sprintf("%s{cluster=%q,name=%q,namespace=%q} 0.5\n", RolloutProgressMetric, "c", "pool", ns) +
		series(InstancesMetric, "c", "pool", ns, "state", map[string]float64{
			"Pending": 0, "Booting": 0, "Running": 2, "Failed": 0, "Deleting": 0,
		})
	testenv.Eventually(t, 30*time.Second, func() error {
		return testutil.GatherAndCompare(reg, strings.NewReader(want), poolMetrics...)
	})
	if n, err := testutil.GatherAndCount(reg, CollectErrorsMetric); err != nil || n != 1 {
		t.Fatalf("%s: %d series (%v), want 1", CollectErrorsMetric, n, err)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("manager: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the manager did not stop within 30s")
	}
	if n, err := testutil.GatherAndCount(reg); err != nil || n != 0 {
		t.Fatalf("%d series remain after the manager stopped (%v), want none", n, err)
	}
}

// TestPoolCollectorRolloutStopped: a rollout the engine stopped itself
// (RolloutProgressing False, reason ReplacementsFailing) is 1 under its
// reason, 0 under the others, so that an alert needs no condition parsing.
func TestPoolCollectorRolloutStopped(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t)
	createMachinePool(t, ns, "pool", "c1", ptr.To[int32](2), clusterv1.MachinePoolStatus{Phase: string(clusterv1.MachinePoolPhaseRunning)})
	pool := createInfraPool(t, ns, "pool", infrav1.LocalMachinePoolMachineKind)
	pool.Status.Conditions = []metav1.Condition{{
		Type: infrav1.RolloutProgressingCondition, Status: metav1.ConditionFalse, Reason: infrav1.ReplacementsFailingReason,
		Message: "Rollout paused by the engine", LastTransitionTime: metav1.Now(),
	}}
	if err := env.Client.Status().Update(ctx, pool); err != nil {
		t.Fatal(err)
	}
	c := NewPoolCollector(ctx, client.NewNamespacedClient(env.Client, ns), provider.Adapters())
	values := map[string]float64{}
	for _, r := range StopReasons {
		values[r] = 0
	}
	values[infrav1.ReplacementsFailingReason] = 1
	want := `
# HELP mpool_machinepool_rollout_stopped Whether the rollout engine stopped a MachinePool's rollout itself, by reason: 1 for the current one (RolloutBlocked: the cloud cannot create the new model; ProgressDeadlineExceeded, ReplacementsFailing: the engine paused a rollout that stopped making progress), 0 for the others.
# TYPE mpool_machinepool_rollout_stopped gauge
` + series(RolloutStoppedMetric, "c1", "pool", ns, "reason", values)
	testenv.Eventually(t, 30*time.Second, func() error {
		return testutil.CollectAndCompare(c, strings.NewReader(want), RolloutStoppedMetric)
	})
}
