package testenv

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2/textlogger"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/capi"
	"github.com/mpool-dev/mpool/internal/parallel"
	"github.com/mpool-dev/mpool/sim/core"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// LogEnv names the environment variable that makes integration tests log
// to stderr at that verbosity (0, 1, ...); unset, they log nowhere.
const LogEnv = "MPOOL_TEST_LOG"

// Logger is the integration tests' logger: stderr at the verbosity of
// MPOOL_TEST_LOG, else a logger that discards.
func Logger() logr.Logger {
	v, err := strconv.Atoi(os.Getenv(LogEnv))
	if err != nil {
		return logr.Discard()
	}
	return textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(v), textlogger.Output(os.Stderr)))
}

// ControlPlaneEndpoint is this API server as a Cluster's
// spec.controlPlaneEndpoint.
func (e *Env) ControlPlaneEndpoint(t testing.TB) clusterv1.APIEndpoint {
	t.Helper()
	u, err := url.Parse(e.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return clusterv1.APIEndpoint{Host: u.Hostname(), Port: int32(port)}
}

// RegisterWorkloadCluster makes this API server the workload cluster of
// the Cluster namespace/cluster: the <cluster>-kubeconfig and <cluster>-ca
// Secrets Cluster API keeps (the Cluster itself is the caller's, with
// ControlPlaneEndpoint).
func (e *Env) RegisterWorkloadCluster(t testing.TB, namespace, cluster string) {
	t.Helper()
	labels := map[string]string{"cluster.x-k8s.io/cluster-name": cluster}
	for _, s := range []*corev1.Secret{
		{
			// Cluster API's names (workload.KubeconfigSecretName and
			// KubeconfigDataKey; that package's tests use this one), and
			// its cluster-name label: upstream's managers cache only the
			// Secrets that carry it.
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: cluster + "-kubeconfig", Labels: labels},
			Data:       map[string][]byte{"value": e.Kubeconfig},
		},
		{
			// With the CA's key, as Cluster API keeps it: upstream's
			// kubeadm bootstrap provider refuses a CA without one.
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: cluster + "-ca", Labels: labels},
			Data:       map[string][]byte{corev1.TLSCertKey: e.CAData, corev1.TLSPrivateKeyKey: e.ControlPlane.CAKeyData()},
		},
	} {
		if err := e.Client.Create(context.Background(), s); err != nil {
			t.Fatalf("creating Secret %s: %v", s.Name, err)
		}
	}
}

// JoinThisAPIServer configures a simulated cloud's node agent to join its
// VMs to this API server, with the tests' quick heartbeats and retries.
func (e *Env) JoinThisAPIServer(opts *core.Options) {
	opts.NodeAgent.Credentials = []*rest.Config{e.Config}
	opts.NodeAgent.HeartbeatInterval = 5 * time.Second
	opts.NodeAgent.AuthAttempts = 3
	opts.NodeAgent.RetryBackoff = 200 * time.Millisecond
	// A stopped kubelet's Node goes Unknown soon (InstanceFault
	// KubeletStopped), not after kube-controller-manager's 50s.
	opts.NodeAgent.NodeMonitorGracePeriod = 2 * time.Second
}

// DataSecret returns the bootstrap data Secret of the MachinePool key.
func (e *Env) DataSecret(t testing.TB, key types.NamespacedName) *corev1.Secret {
	t.Helper()
	mp := &clusterv1.MachinePool{}
	if err := e.Client.Get(context.Background(), key, mp); err != nil {
		t.Fatal(err)
	}
	name := ptr.Deref(mp.Spec.Template.Spec.Bootstrap.DataSecretName, "")
	if name == "" {
		t.Fatal("the MachinePool has no bootstrap data Secret")
	}
	s := &corev1.Secret{}
	if err := e.Client.Get(context.Background(), types.NamespacedName{Namespace: key.Namespace, Name: name}, s); err != nil {
		t.Fatal(err)
	}
	return s
}

// NodeReady reports whether the Node's Ready condition is True.
func NodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Reconciles returns how many reconciles the controller named controller
// (e.g. localmachinepool) has finished in this process
// (controller-runtime's reconcile_total).
func Reconciles(t testing.TB, controller string) int64 {
	t.Helper()
	return ReadControllerMetrics(t).Reconciles(controller)
}

// QueueDepth returns how many requests wait in the work queues of every
// controller of this process (controller-runtime's workqueue_depth): zero
// when no controller has work ready, whatever it will requeue later.
func QueueDepth(t testing.TB) int64 {
	t.Helper()
	return ReadControllerMetrics(t).QueueDepth
}

// ControllerMetrics is one read of the controllers' metrics of this
// process: what Reconciles and QueueDepth report, from a single gather of
// controller-runtime's registry. A gather runs every collector registered
// there, the manager's pool collector among them, which reads every pool
// and per-instance object: a loop that needs several figures at once takes
// them from one read.
type ControllerMetrics struct {
	// reconciles is the finished reconciles by controller name.
	reconciles map[string]int64
	// active is the reconciles under way by controller name.
	active map[string]int64
	// QueueDepth is the requests waiting in every controller's work queue.
	QueueDepth int64
	// QueueWait is the time requests of every controller's work queue
	// waited in it before a worker took them (workqueue_queue_duration_seconds:
	// its sum in seconds and its count), and ReconcileTime the time its
	// reconciles took (controller_runtime_reconcile_time_seconds): what,
	// of a change's way through the manager, waiting for a turn and the
	// work itself each took.
	QueueWait, ReconcileTime Histogram
}

// Histogram is the sum and count of a Prometheus histogram, over all its
// series.
type Histogram struct {
	Sum   float64
	Count uint64
}

// Since is h less before: the observations made between the two reads.
func (h Histogram) Since(before Histogram) Histogram {
	return Histogram{Sum: h.Sum - before.Sum, Count: h.Count - before.Count}
}

// Plus is h and other together.
func (h Histogram) Plus(other Histogram) Histogram {
	return Histogram{Sum: h.Sum + other.Sum, Count: h.Count + other.Count}
}

// Mean is the mean observation (0 with none).
func (h Histogram) Mean() float64 {
	if h.Count == 0 {
		return 0
	}
	return h.Sum / float64(h.Count)
}

func (h *Histogram) add(mf *dto.MetricFamily) {
	for _, m := range mf.GetMetric() {
		h.Sum += m.GetHistogram().GetSampleSum()
		h.Count += m.GetHistogram().GetSampleCount()
	}
}

// Reconciles is how many reconciles the controller named controller had
// finished.
func (m ControllerMetrics) Reconciles(controller string) int64 { return m.reconciles[controller] }

// Active is how many reconciles of the controller named controller were
// under way (controller-runtime's active_workers).
func (m ControllerMetrics) Active(controller string) int64 { return m.active[controller] }

// ReadControllerMetrics gathers controller-runtime's registry once.
func ReadControllerMetrics(t testing.TB) ControllerMetrics {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := ControllerMetrics{reconciles: map[string]int64{}, active: map[string]int64{}}
	for _, mf := range families {
		switch mf.GetName() {
		case "controller_runtime_reconcile_total":
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "controller" {
						out.reconciles[l.GetValue()] += int64(m.GetCounter().GetValue())
					}
				}
			}
		case "controller_runtime_active_workers":
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "controller" {
						out.active[l.GetValue()] += int64(m.GetGauge().GetValue())
					}
				}
			}
		case "workqueue_depth":
			for _, m := range mf.GetMetric() {
				out.QueueDepth += int64(m.GetGauge().GetValue())
			}
		case "workqueue_queue_duration_seconds":
			out.QueueWait.add(mf)
		case "controller_runtime_reconcile_time_seconds":
			out.ReconcileTime.add(mf)
		}
	}
	return out
}

// PokeUntilReconciled annotates obj (a fresh copy read by its key) until
// the controller named controller has finished n more reconciles.
func (e *Env) PokeUntilReconciled(t testing.TB, obj client.Object, controller string, n int64) {
	t.Helper()
	before := Reconciles(t, controller)
	i := 0
	Eventually(t, 30*time.Second, func() error {
		if got := Reconciles(t, controller) - before; got < n {
			i++
			patch := fmt.Sprintf(`{"metadata":{"annotations":{"test.mpool.dev/poke":%q}}}`, strconv.Itoa(i))
			if err := e.Client.Patch(context.Background(), obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
				return err
			}
			return fmt.Errorf("%d reconciles of %d", got, n)
		}
		return nil
	})
}

// CreateLocalPool creates, in the Cluster namespace/cluster, a
// LocalMachinePool pool named name of 0 replicas on version (MachinePool,
// LocalMachinePool, KubeadmConfig), as examples/local does: the benchmarks
// compare a cloud provider's pool with it in the same run.
func (e *Env) CreateLocalPool(t testing.TB, namespace, cluster, name, version string) {
	t.Helper()
	for _, o := range []client.Object{
		&infrav1.LocalMachinePool{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Spec: infrav1.LocalMachinePoolSpec{
				Template: infrav1.LocalMachinePoolMachineTemplate{InstanceType: "sim.small", Image: "ubuntu-2404", Zones: []string{"zone-a", "zone-b", "zone-c"}},
			},
		},
		&bootstrapv1.KubeadmConfig{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Spec: bootstrapv1.KubeadmConfigSpec{JoinConfiguration: bootstrapv1.JoinConfiguration{
				NodeRegistration: bootstrapv1.NodeRegistrationOptions{Name: `{{ ds.meta_data["local_hostname"] }}`},
			}},
		},
		&clusterv1.MachinePool{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Spec: clusterv1.MachinePoolSpec{
				ClusterName: cluster,
				Replicas:    ptr.To[int32](0),
				Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
					ClusterName: cluster,
					Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
						APIGroup: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfig", Name: name,
					}},
					InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "LocalMachinePool", Name: name},
					Version:           version,
				}},
			},
		},
	} {
		if err := e.Client.Create(context.Background(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, name, err)
		}
	}
}

// ScaleMachinePool sets the replicas of the MachinePool key.
func (e *Env) ScaleMachinePool(t testing.TB, key types.NamespacedName, n int32) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)
	mp := &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	if err := e.Client.Patch(context.Background(), mp, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

// WaitRunning waits, cheaply, until the MachinePool key is Running with n
// Ready replicas.
func (e *Env) WaitRunning(t testing.TB, key types.NamespacedName, n int, timeout time.Duration) {
	t.Helper()
	Eventually(t, timeout, func() error {
		mp := &clusterv1.MachinePool{}
		if err := e.Client.Get(context.Background(), key, mp); err != nil {
			return err
		}
		if mp.Status.Phase != string(clusterv1.MachinePoolPhaseRunning) || ptr.Deref(mp.Status.ReadyReplicas, 0) != int32(n) || ptr.Deref(mp.Status.Replicas, 0) != int32(n) {
			return fmt.Errorf("MachinePool %s %s, %d replicas, %d ready; want Running with %d", key.Name, mp.Status.Phase, ptr.Deref(mp.Status.Replicas, 0), ptr.Deref(mp.Status.ReadyReplicas, 0), n)
		}
		return nil
	})
}

// CompareScaleUp is the cloud scale-up benchmarks' timed part: with the
// timer stopped and both pools Running at 0, it measures 0 → n until
// Running for the LocalMachinePool's MachinePool local, then for the
// cloud's MachinePool pool, logs both and reports them as local-s,
// <cloud>-s and <cloud>/local. Between the two it waits, untimed, until the
// local pool's Nodes are settled (waitNodesSettled), so that its remaining
// Node writes do not load the API server during the second measurement
// only.
func (e *Env) CompareScaleUp(b *testing.B, n int, local, pool types.NamespacedName, cloud string) {
	b.Helper()
	measure := func(key types.NamespacedName) time.Duration {
		b.StartTimer()
		start := time.Now()
		e.ScaleMachinePool(b, key, int32(n))
		e.WaitRunning(b, key, n, 30*time.Minute)
		took := time.Since(start)
		b.StopTimer()
		return took
	}
	l := measure(local)
	e.waitNodesSettled(b, local, n, 10*time.Minute)
	c := measure(pool)
	b.Logf("0 → %d until Running: local %.1f s, %s %.1f s (%.2f×)", n, l.Seconds(), cloud, c.Seconds(), c.Seconds()/l.Seconds())
	b.ReportMetric(l.Seconds(), "local-s")
	b.ReportMetric(c.Seconds(), cloud+"-s")
	b.ReportMetric(c.Seconds()/l.Seconds(), cloud+"/local")
}

// waitNodesSettled waits until n Nodes carry the owner annotation of
// MachinePool key and no uninitialized taint: the core controller writes
// them after the pool turns Running.
func (e *Env) waitNodesSettled(t testing.TB, key types.NamespacedName, n int, timeout time.Duration) {
	t.Helper()
	Eventually(t, timeout, func() error {
		nodes := &corev1.NodeList{}
		if err := e.Client.List(context.Background(), nodes); err != nil {
			return err
		}
		settled := 0
		for i := range nodes.Items {
			nd := &nodes.Items[i]
			if nd.Annotations[clusterv1.OwnerNameAnnotation] != key.Name || nd.Annotations[clusterv1.ClusterNamespaceAnnotation] != key.Namespace {
				continue
			}
			tainted := false
			for _, tn := range nd.Spec.Taints {
				tainted = tainted || tn.Key == capi.NodeUninitializedTaintKey
			}
			if !tainted {
				settled++
			}
		}
		if settled < n {
			return fmt.Errorf("%d of %d Nodes of MachinePool %s annotated and untainted", settled, n, key)
		}
		return nil
	})
}

// BenchN is a pool benchmark's size: MPOOL_BENCH_N, else 1,000 (10 with
// MPOOL_BENCH_SMALL=1, as hack/bench-smoke.sh runs them).
func BenchN() int {
	n := 1000
	if v := os.Getenv("MPOOL_BENCH_SMALL"); v != "" && v != "0" {
		n = 10
	}
	if v, err := strconv.Atoi(os.Getenv("MPOOL_BENCH_N")); err == nil && v > 0 {
		n = v
	}
	return n
}

// DeleteNodes deletes the Nodes match selects, many at a time (pool
// benchmarks leave thousands).
func (e *Env) DeleteNodes(t testing.TB, match func(*corev1.Node) bool) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Errorf("listing Nodes: %v", err)
		return
	}
	err = parallel.ForEach(context.Background(), 16, len(nodes.Items), func(ctx context.Context, i int) error {
		n := &nodes.Items[i]
		if !match(n) {
			return nil
		}
		if err := cs.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		return nil
	})
	if err != nil {
		t.Errorf("deleting Nodes: %v", err)
	}
}
