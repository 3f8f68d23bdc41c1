package machinepool

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2/textlogger"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/mpool-dev/mpool/internal/kubeenv"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/internal/workload"
)

var env *testenv.Env

// TestMain starts the control plane, runs the tests, then stops the shared
// manager before the control plane so that no watch holds it up.
func TestMain(m *testing.M) {
	ctrl.SetLogger(testLogger())
	os.Exit(testenv.RunWith(m, &env, func(*testenv.Env) (func(), error) { return stopHarness, nil }))
}

// testLogger logs to stderr when MPOOL_TEST_LOG is a verbosity (0, 1, ...),
// and nowhere otherwise.
func testLogger() logr.Logger {
	v, err := strconv.Atoi(os.Getenv("MPOOL_TEST_LOG"))
	if err != nil {
		return logr.Discard()
	}
	return textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(v), textlogger.Output(os.Stderr)))
}

// The generic test providers: an infrastructure pool and its per-instance
// machines, and a bootstrap config. The tests play the providers by writing
// their spec and status.
const (
	infraGroup     = "infrastructure.test.mpool.dev"
	bootstrapGroup = "bootstrap.test.mpool.dev"
	testVersion    = "v1alpha1"
	infraPoolKind  = "TestInfraPool"
	infraMachKind  = "TestInfraMachine"
	bootstrapKind  = "TestBootstrapConfig"
)

var (
	infraAPIVersion     = infraGroup + "/" + testVersion
	bootstrapAPIVersion = bootstrapGroup + "/" + testVersion
)

func testCRD(group, kind string) *apiextensionsv1.CustomResourceDefinition {
	plural := strings.ToLower(kind) + "s"
	open := apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Kind: kind, ListKind: kind + "List", Plural: plural, Singular: strings.ToLower(kind),
			},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: testVersion, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": open, "status": open,
					},
				}},
			}},
		},
	}
}

// installTestCRDs installs the test providers' CRDs (idempotent).
func installTestCRDs(ctx context.Context) error {
	return kubeenv.InstallCRDs(ctx, env.Config, []*apiextensionsv1.CustomResourceDefinition{
		testCRD(infraGroup, infraPoolKind), testCRD(infraGroup, infraMachKind), testCRD(bootstrapGroup, bootstrapKind),
	})
}

// harness is the package's manager, started once by the first test that
// needs it and shared by all.
type harness struct {
	clock  *clocktesting.FakeClock
	cc     *workload.ClusterCache
	cancel context.CancelFunc
	done   chan struct{}
}

// stopHarness stops the shared manager, if it was started.
func stopHarness() {
	if shared == nil {
		return
	}
	shared.cancel()
	<-shared.done
}

var (
	harnessOnce sync.Once
	shared      *harness
	harnessErr  error
)

func startHarness(t testing.TB) *harness {
	t.Helper()
	harnessOnce.Do(func() {
		ctx := context.Background()
		if err := installTestCRDs(ctx); err != nil {
			harnessErr = err
			return
		}
		mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
			Scheme:                 env.Scheme,
			Metrics:                metricsserver.Options{BindAddress: "0"},
			HealthProbeBindAddress: "0",
			Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		})
		if err != nil {
			harnessErr = err
			return
		}
		cc, err := workload.New(workload.Options{SecretReader: mgr.GetClient(), Scheme: env.Scheme})
		if err != nil {
			harnessErr = err
			return
		}
		if err := mgr.Add(cc); err != nil {
			harnessErr = err
			return
		}
		clk := clocktesting.NewFakeClock(time.Now().Truncate(time.Second))
		r := &Reconciler{Client: mgr.GetClient(), ClusterCache: cc, Clock: clk}
		if err := r.SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 4}); err != nil {
			harnessErr = err
			return
		}
		mgrCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := mgr.Start(mgrCtx); err != nil {
				fmt.Fprintf(os.Stderr, "manager stopped: %v\n", err)
			}
		}()
		shared = &harness{clock: clk, cc: cc, cancel: cancel, done: done}
	})
	if harnessErr != nil {
		t.Fatalf("starting the test manager: %v", harnessErr)
	}
	return shared
}

// fixture is one test's cluster, providers and pool, in its own namespace.
type fixture struct {
	t       *testing.T
	ns      string
	cluster string
	h       *harness
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	h := startHarness(t)
	f := &fixture{t: t, ns: env.NewNamespace(t), cluster: "c1", h: h}
	// Upstream v1beta2 refuses a Cluster with an empty spec.
	f.create(&clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: f.cluster}, Spec: clusterv1.ClusterSpec{Paused: ptr.To(false)}})
	f.create(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: workload.KubeconfigSecretName(f.cluster)},
		Data:       map[string][]byte{workload.KubeconfigDataKey: env.Kubeconfig},
	})
	return f
}

func (f *fixture) create(obj client.Object) {
	f.t.Helper()
	if err := env.Client.Create(context.Background(), obj); err != nil {
		f.t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

func (f *fixture) key(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: f.ns, Name: name}
}

// providerID returns a providerID unique to this test.
func (f *fixture) providerID(i int) string { return fmt.Sprintf("test:///%s/vm-%d", f.ns, i) }

// nodeName returns a Node name unique to this test (Nodes are cluster-scoped
// and every test shares the workload cluster).
func (f *fixture) nodeName(i int) string { return fmt.Sprintf("%s-node-%d", f.ns, i) }

func newUnstructured(apiVersion, kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// providers creates a not-ready bootstrap config and infrastructure pool.
func (f *fixture) providers(name string) {
	f.create(newUnstructured(bootstrapAPIVersion, bootstrapKind, f.ns, name))
	f.create(newUnstructured(infraAPIVersion, infraPoolKind, f.ns, name))
}

// pool creates a MachinePool referencing the providers called name.
func (f *fixture) pool(name string, replicas *int32, mutate ...func(*clusterv1.MachinePool)) *clusterv1.MachinePool {
	mp := &clusterv1.MachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
		Spec: clusterv1.MachinePoolSpec{
			ClusterName: f.cluster,
			Replicas:    replicas,
			Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				ClusterName: f.cluster,
				Version:     "v1.31.2",
				Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: bootstrapGroup, Kind: bootstrapKind, Name: name,
				}},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infraGroup, Kind: infraPoolKind, Name: name},
			}},
		},
	}
	for _, m := range mutate {
		m(mp)
	}
	f.create(mp)
	return mp
}

// setFields sets fields (path "a.b.c" -> value; nil removes it) on a
// test-provider object, then applies each of also to the copy being
// written, in one update retried on conflicts with the controller's
// patches.
func (f *fixture) setFields(apiVersion, kind, name string, fields map[string]any, also ...func(*unstructured.Unstructured) error) {
	f.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u := newUnstructured(apiVersion, kind, f.ns, name)
		if err := env.Client.Get(context.Background(), f.key(name), u); err != nil {
			return err
		}
		for path, v := range fields {
			p := strings.Split(path, ".")
			if v == nil {
				unstructured.RemoveNestedField(u.Object, p...)
				continue
			}
			if err := unstructured.SetNestedField(u.Object, v, p...); err != nil {
				return err
			}
		}
		for _, fn := range also {
			if err := fn(u); err != nil {
				return err
			}
		}
		return env.Client.Update(context.Background(), u)
	})
	if err != nil {
		f.t.Fatalf("updating %s %s: %v", kind, name, err)
	}
}

func (f *fixture) setBootstrap(name string, fields map[string]any) {
	f.setFields(bootstrapAPIVersion, bootstrapKind, name, fields)
}

func (f *fixture) setInfra(name string, fields map[string]any) {
	f.setFields(infraAPIVersion, infraPoolKind, name, fields)
}

// ids returns the providerIDs 1..n of this test as a JSON list.
func (f *fixture) ids(from, to int) []any {
	var out []any
	for i := from; i <= to; i++ {
		out = append(out, f.providerID(i))
	}
	return out
}

// node creates Node i with its providerID and the uninitialized taint, and
// sets its Ready condition.
func (f *fixture) node(i int, ready bool) *corev1.Node {
	f.t.Helper()
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: f.nodeName(i)},
		Spec: corev1.NodeSpec{
			ProviderID: f.providerID(i),
			Taints:     []corev1.Taint{{Key: UninitializedTaint, Effect: corev1.TaintEffectNoSchedule}},
		},
	}
	f.create(n)
	f.setNodeReady(i, ready, f.h.clock.Now())
	return n
}

func (f *fixture) setNodeReady(i int, ready bool, since time.Time) {
	f.t.Helper()
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n := &corev1.Node{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Name: f.nodeName(i)}, n); err != nil {
			return err
		}
		n.Status.Conditions = []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: st, Reason: "Test",
			LastTransitionTime: metav1.NewTime(since), LastHeartbeatTime: metav1.NewTime(since),
		}}
		return env.Client.Status().Update(context.Background(), n)
	})
	if err != nil {
		f.t.Fatalf("setting Node %d ready=%v: %v", i, ready, err)
	}
}

func (f *fixture) getPool(name string) *clusterv1.MachinePool {
	f.t.Helper()
	mp := &clusterv1.MachinePool{}
	if err := env.Client.Get(context.Background(), f.key(name), mp); err != nil {
		f.t.Fatalf("reading MachinePool %s: %v", name, err)
	}
	return mp
}

// eventually polls check on the pool until it returns nil.
func (f *fixture) eventually(name string, check func(mp *clusterv1.MachinePool) error) {
	f.t.Helper()
	testenv.Eventually(f.t, 30*time.Second, func() error {
		mp := &clusterv1.MachinePool{}
		if err := env.Client.Get(context.Background(), f.key(name), mp); err != nil {
			return err
		}
		return check(mp)
	})
}

func (f *fixture) waitPhase(name string, phase clusterv1.MachinePoolPhase) *clusterv1.MachinePool {
	f.t.Helper()
	var got *clusterv1.MachinePool
	f.eventually(name, func(mp *clusterv1.MachinePool) error {
		if mp.Status.Phase != string(phase) {
			return fmt.Errorf("phase %q, want %q; conditions %s", mp.Status.Phase, phase, condSummary(mp))
		}
		got = mp
		return nil
	})
	return got
}

func condSummary(mp *clusterv1.MachinePool) string {
	var b strings.Builder
	for _, c := range mp.Status.Conditions {
		fmt.Fprintf(&b, "[%s=%s %s: %s] ", c.Type, c.Status, c.Reason, c.Message)
	}
	return b.String()
}

func conditionOf(mp *clusterv1.MachinePool, t string) *metav1.Condition {
	for i := range mp.Status.Conditions {
		if mp.Status.Conditions[i].Type == t {
			return &mp.Status.Conditions[i]
		}
	}
	return nil
}

// wantCondition checks condition t's status (and reason when not empty).
func wantCondition(mp *clusterv1.MachinePool, t string, status metav1.ConditionStatus, reason string) error {
	c := conditionOf(mp, t)
	if c == nil {
		return fmt.Errorf("no %s condition", t)
	}
	if c.Status != status || (reason != "" && c.Reason != reason) {
		return fmt.Errorf("%s = %s/%s (%s), want %s/%s", t, c.Status, c.Reason, c.Message, status, reason)
	}
	return nil
}

// gone reports whether obj no longer exists.
func gone(obj client.Object) error {
	err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("%T %s still exists (deletionTimestamp %v, finalizers %v)", obj, obj.GetName(), obj.GetDeletionTimestamp(), obj.GetFinalizers())
}

// hasEvent reports whether an event with reason was recorded for the pool.
func (f *fixture) hasEvent(pool, reason string) error {
	return f.hasEventNote(pool, reason, "")
}

// hasEventNote is hasEvent for an event whose note is note ("": any note).
func (f *fixture) hasEventNote(pool, reason, note string) error {
	list := &corev1.EventList{}
	if err := env.Client.List(context.Background(), list, client.InNamespace(f.ns)); err != nil {
		return err
	}
	var notes []string
	for _, e := range list.Items {
		if e.InvolvedObject.Name == pool && e.Reason == reason {
			if note == "" || e.Message == note {
				return nil
			}
			notes = append(notes, e.Message)
		}
	}
	if note != "" {
		return fmt.Errorf("no %s event %q for %s (its %s events: %q)", reason, note, pool, reason, notes)
	}
	return fmt.Errorf("no %s event for %s", reason, pool)
}

// consistently polls cond for d and fails on the first error: the bounded
// way to assert that something does not happen.
func consistently(t *testing.T, d time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if err := cond(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
