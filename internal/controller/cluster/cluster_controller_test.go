package cluster

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	kevents "k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/mpool-dev/mpool/api/conditions"
	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/internal/workload"
)

func createCluster(t *testing.T, ns, name string, mutate ...func(*clusterv1.Cluster)) {
	t.Helper()
	// Upstream v1beta2 refuses a Cluster with an empty spec.
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: clusterv1.ClusterSpec{Paused: ptr.To(false)}}
	for _, m := range mutate {
		m(c)
	}
	if err := env.Client.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
}

func putKubeconfig(t *testing.T, ns, cluster string, kubeconfig []byte) {
	t.Helper()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: workload.KubeconfigSecretName(cluster)},
		Data:       map[string][]byte{workload.KubeconfigDataKey: kubeconfig},
	}
	if err := env.Client.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

// waitCluster polls the Cluster until check passes.
func waitCluster(t *testing.T, ns, name string, check func(c *clusterv1.Cluster) error) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func() error {
		c := &clusterv1.Cluster{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, c); err != nil {
			return err
		}
		return check(c)
	})
}

func wantCondition(c *clusterv1.Cluster, t string, status metav1.ConditionStatus, reason string) error {
	for _, cond := range c.Status.Conditions {
		if cond.Type == t {
			if cond.Status != status || (reason != "" && cond.Reason != reason) {
				return fmt.Errorf("%s = %s/%s (%s), want %s/%s", t, cond.Status, cond.Reason, cond.Message, status, reason)
			}
			return nil
		}
	}
	return fmt.Errorf("no %s condition", t)
}

func TestReachableClusterIsProvisioned(t *testing.T) {
	ns := env.NewNamespace(t)
	createCluster(t, ns, "c1")
	putKubeconfig(t, ns, "c1", env.Kubeconfig)
	waitCluster(t, ns, "c1", func(c *clusterv1.Cluster) error {
		if !ptr.Deref(c.Status.Initialization.ControlPlaneInitialized, false) || !ptr.Deref(c.Status.Initialization.InfrastructureProvisioned, false) || c.Status.Phase != string(clusterv1.ClusterPhaseProvisioned) {
			return fmt.Errorf("status %+v", c.Status)
		}
		for _, ct := range []string{conditions.WorkloadClusterReachableCondition, conditions.ControlPlaneReadyCondition, clusterv1.InfrastructureReadyCondition, clusterv1.ReadyCondition} {
			if err := wantCondition(c, ct, metav1.ConditionTrue, ""); err != nil {
				return err
			}
		}
		if c.Status.ObservedGeneration != c.Generation {
			return fmt.Errorf("observedGeneration %d", c.Status.ObservedGeneration)
		}
		return nil
	})

	// Deleting the Cluster drops its workload client and cache.
	key := client.ObjectKey{Namespace: ns, Name: "c1"}
	if !cc.Connected(key) {
		t.Fatal("a provisioned Cluster must be connected")
	}
	if err := env.Client.Delete(context.Background(), &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"}}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		if cc.Connected(key) {
			return fmt.Errorf("still connected")
		}
		return nil
	})
}

func TestMissingSecretSaysWhyAndRecovers(t *testing.T) {
	ns := env.NewNamespace(t)
	createCluster(t, ns, "c1")
	waitCluster(t, ns, "c1", func(c *clusterv1.Cluster) error {
		if ptr.Deref(c.Status.Initialization.ControlPlaneInitialized, false) {
			return fmt.Errorf("control plane ready without a kubeconfig")
		}
		if c.Status.Phase != string(clusterv1.ClusterPhaseProvisioning) {
			return fmt.Errorf("phase %s", c.Status.Phase)
		}
		if err := wantCondition(c, clusterv1.ReadyCondition, metav1.ConditionFalse, conditions.WaitingForControlPlaneReason); err != nil {
			return err
		}
		return wantCondition(c, conditions.WorkloadClusterReachableCondition, metav1.ConditionFalse, workload.ReasonSecretNotFound)
	})
	// The Secret appears: its watch brings the Cluster back at once.
	putKubeconfig(t, ns, "c1", env.Kubeconfig)
	waitCluster(t, ns, "c1", func(c *clusterv1.Cluster) error {
		if c.Status.Phase != string(clusterv1.ClusterPhaseProvisioned) {
			return fmt.Errorf("phase %s", c.Status.Phase)
		}
		return wantCondition(c, conditions.WorkloadClusterReachableCondition, metav1.ConditionTrue, conditions.ReachableReason)
	})
}

func TestUnreachableAPIServer(t *testing.T) {
	ns := env.NewNamespace(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	cfg, err := clientcmd.Load(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		c.Server = "https://" + addr
	}
	kc, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	createCluster(t, ns, "c1")
	putKubeconfig(t, ns, "c1", kc)
	waitCluster(t, ns, "c1", func(c *clusterv1.Cluster) error {
		return wantCondition(c, conditions.WorkloadClusterReachableCondition, metav1.ConditionFalse, workload.ReasonUnreachable)
	})
}

func TestInfrastructureRef(t *testing.T) {
	ns := env.NewNamespace(t)
	createCluster(t, ns, "c1", func(c *clusterv1.Cluster) {
		// An infrastructure kind the API serves, whose object does not exist.
		c.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: infrav1.AWSClusterKind, Name: "infra"}
	})
	putKubeconfig(t, ns, "c1", env.Kubeconfig)
	waitCluster(t, ns, "c1", func(c *clusterv1.Cluster) error {
		if !ptr.Deref(c.Status.Initialization.ControlPlaneInitialized, false) || ptr.Deref(c.Status.Initialization.InfrastructureProvisioned, false) || c.Status.Phase != string(clusterv1.ClusterPhaseProvisioning) {
			return fmt.Errorf("status %+v", c.Status)
		}
		return wantCondition(c, clusterv1.InfrastructureReadyCondition, metav1.ConditionFalse, conditions.ObjectNotFoundReason)
	})
}

func TestPausedCluster(t *testing.T) {
	ns := env.NewNamespace(t)
	createCluster(t, ns, "c1", func(c *clusterv1.Cluster) { c.Spec.Paused = ptr.To(true) })
	putKubeconfig(t, ns, "c1", env.Kubeconfig)
	waitCluster(t, ns, "c1", func(c *clusterv1.Cluster) error {
		if ptr.Deref(c.Status.Initialization.ControlPlaneInitialized, false) {
			return fmt.Errorf("a paused Cluster was reconciled")
		}
		return wantCondition(c, clusterv1.PausedCondition, metav1.ConditionTrue, clusterv1.PausedReason)
	})
}

// TestPlacementKindMarkedReady: an infrastructure object of a placement
// kind (AWSCluster here) is marked ready, since mpool provisions nothing
// for it, and the Cluster is Provisioned; one another controller manages
// (cluster.x-k8s.io/managed-by) waits for that controller.
func TestPlacementKindMarkedReady(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t)
	for name, managedBy := range map[string]string{"placed": "", "external": "someone-else"} {
		aws := &infrav1.AWSCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: infrav1.AWSClusterSpec{Region: "us-east-1"}}
		if managedBy != "" {
			aws.Annotations = map[string]string{clusterv1.ManagedByAnnotation: managedBy}
		}
		if err := env.Client.Create(ctx, aws); err != nil {
			t.Fatal(err)
		}
		createCluster(t, ns, name, func(c *clusterv1.Cluster) {
			c.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: infrav1.AWSClusterKind, Name: name}
		})
		putKubeconfig(t, ns, name, env.Kubeconfig)
	}
	waitCluster(t, ns, "placed", func(c *clusterv1.Cluster) error {
		if c.Status.Phase != string(clusterv1.ClusterPhaseProvisioned) {
			return fmt.Errorf("phase %s", c.Status.Phase)
		}
		return wantCondition(c, clusterv1.InfrastructureReadyCondition, metav1.ConditionTrue, conditions.PlacementOnlyReason)
	})
	placed := &infrav1.AWSCluster{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "placed"}, placed); err != nil || !placed.Status.Ready {
		t.Fatalf("AWSCluster placed: ready %v, %v", placed.Status.Ready, err)
	}
	waitCluster(t, ns, "external", func(c *clusterv1.Cluster) error {
		if c.Status.Phase != string(clusterv1.ClusterPhaseProvisioning) {
			return fmt.Errorf("phase %s", c.Status.Phase)
		}
		return wantCondition(c, clusterv1.InfrastructureReadyCondition, metav1.ConditionFalse, conditions.WaitingForInfrastructureReason)
	})
	external := &infrav1.AWSCluster{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "external"}, external); err != nil || external.Status.Ready {
		t.Fatalf("AWSCluster external, managed by another controller: ready %v, %v", external.Status.Ready, err)
	}
}

// TestStaleReadWritesNothingAgain: a reconcile writes a Cluster's status,
// and the reconcile after it, seconds later, reads the Cluster from a cache
// that has not shown that write yet. It must not write the status again
// with every condition's transition time moved (it did, for about half the
// Clusters created at once). The Cluster has no kubeconfig Secret, so each
// reconcile computes the same status.
func TestStaleReadWritesNothingAgain(t *testing.T) {
	ns := env.NewNamespace(t)
	createCluster(t, ns, "c1")
	key := client.ObjectKey{Namespace: ns, Name: "c1"}
	stale := &clusterv1.Cluster{}
	if err := env.Client.Get(context.Background(), key, stale); err != nil {
		t.Fatal(err)
	}
	stale.Status = clusterv1.ClusterStatus{}
	var patches int
	direct, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	c := interceptor.NewClient(direct, interceptor.Funcs{
		Get: func(_ context.Context, _ client.WithWatch, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
			stale.DeepCopyInto(obj.(*clusterv1.Cluster))
			return nil
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			patches++
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	clk := clocktesting.NewFakePassiveClock(time.Now())
	r := &Reconciler{Client: c, ClusterCache: cc, Clock: clk, Recorder: kevents.NewFakeRecorder(100)}
	reconcile := func() {
		t.Helper()
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err != nil {
			t.Fatal(err)
		}
	}
	reconcile()
	if patches != 1 {
		t.Fatalf("the first reconcile sent %d status patches, want 1", patches)
	}
	clk.SetTime(clk.Now().Add(5 * time.Second))
	reconcile()
	if patches != 1 {
		t.Errorf("a reconcile from the copy before the status write sent %d more status patches, want none", patches-1)
	}
}
