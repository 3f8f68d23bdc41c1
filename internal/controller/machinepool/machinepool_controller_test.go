package machinepool

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	kevents "k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/api/conditions"
	"github.com/mpool-dev/mpool/internal/events"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/internal/workload"
)

// runningPool walks a two-replica pool to Running and returns its name.
func (f *fixture) runningPool(name string, replicas int32) {
	f.t.Helper()
	f.providers(name)
	f.pool(name, ptr.To(replicas))
	f.setBootstrap(name, map[string]any{"status.ready": true, "status.dataSecretName": name + "-data"})
	f.setInfra(name, map[string]any{
		"status.ready": true, "status.replicas": int64(replicas), "spec.providerIDList": f.ids(1, int(replicas)),
	})
	for i := 1; i <= int(replicas); i++ {
		f.node(i, true)
	}
	f.waitPhase(name, clusterv1.MachinePoolPhaseRunning)
}

// scale sets the pool's spec.replicas to n.
func (f *fixture) scale(name string, n int32) {
	f.t.Helper()
	mp := f.getPool(name)
	orig := mp.DeepCopy()
	mp.Spec.Replicas = ptr.To(n)
	if err := env.Client.Patch(context.Background(), mp, client.MergeFrom(orig)); err != nil {
		f.t.Fatalf("scaling MachinePool %s to %d: %v", name, n, err)
	}
}

func TestPhasesPendingToRunning(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.providers("mp")
	f.pool("mp", ptr.To[int32](2))

	// Pending: the bootstrap config is not ready. The controller owns the
	// referenced objects and labels them with the cluster.
	f.waitPhase("mp", clusterv1.MachinePoolPhasePending)
	var mp *clusterv1.MachinePool
	f.eventually("mp", func(got *clusterv1.MachinePool) error {
		if !strings.Contains(strings.Join(got.Finalizers, ","), clusterv1.MachinePoolFinalizer) {
			return fmt.Errorf("finalizers = %v", got.Finalizers)
		}
		mp = got
		return nil
	})
	testenv.Eventually(t, 10*time.Second, func() error {
		for _, u := range []*unstructured.Unstructured{
			newUnstructured(bootstrapAPIVersion, bootstrapKind, f.ns, "mp"),
			newUnstructured(infraAPIVersion, infraPoolKind, f.ns, "mp"),
		} {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
				return err
			}
			if u.GetLabels()[clusterv1.ClusterNameLabel] != f.cluster {
				return fmt.Errorf("%s labels = %v", u.GetKind(), u.GetLabels())
			}
			refs := u.GetOwnerReferences()
			if len(refs) != 1 || refs[0].Kind != "MachinePool" || refs[0].UID != mp.UID || !ptr.Deref(refs[0].Controller, false) {
				return fmt.Errorf("%s owner refs = %+v", u.GetKind(), refs)
			}
		}
		return nil
	})
	f.eventually("mp", func(mp *clusterv1.MachinePool) error {
		return wantCondition(mp, conditions.BootstrapReadyCondition, metav1.ConditionFalse, clusterv1.WaitingForBootstrapDataReason)
	})

	// Provisioning: bootstrap ready, its data secret copied into the template.
	f.setBootstrap("mp", map[string]any{"status.ready": true, "status.dataSecretName": "mp-bootstrap-data"})
	mp = f.waitPhase("mp", clusterv1.MachinePoolPhaseProvisioning)
	if got := ptr.Deref(mp.Spec.Template.Spec.Bootstrap.DataSecretName, "<nil>"); got != "mp-bootstrap-data" {
		t.Fatalf("dataSecretName = %s", got)
	}
	if err := wantCondition(mp, conditions.BootstrapReadyCondition, metav1.ConditionTrue, ""); err != nil {
		t.Fatal(err)
	}
	if init := mp.Status.Initialization; !ptr.Deref(init.BootstrapDataSecretCreated, false) || ptr.Deref(init.InfrastructureProvisioned, false) {
		t.Fatalf("bootstrapDataSecretCreated/infrastructureProvisioned = %v/%v", init.BootstrapDataSecretCreated, init.InfrastructureProvisioned)
	}

	// Provisioned: infrastructure ready, replicas and providerIDList synced.
	f.setInfra("mp", map[string]any{"status.ready": true, "status.replicas": int64(2), "spec.providerIDList": f.ids(1, 2)})
	mp = f.waitPhase("mp", clusterv1.MachinePoolPhaseProvisioned)
	if ptr.Deref(mp.Status.Replicas, -1) != 2 || len(mp.Spec.ProviderIDList) != 2 || mp.Spec.ProviderIDList[0] != f.providerID(1) {
		t.Fatalf("replicas %v, providerIDList %v", mp.Status.Replicas, mp.Spec.ProviderIDList)
	}
	for _, c := range []struct {
		t      string
		status metav1.ConditionStatus
	}{
		{clusterv1.InfrastructureReadyCondition, metav1.ConditionTrue},
		{conditions.ReplicasReadyCondition, metav1.ConditionFalse},
		{clusterv1.ReadyCondition, metav1.ConditionFalse},
		{conditions.AvailableCondition, metav1.ConditionFalse},
		{conditions.ScalingUpCondition, metav1.ConditionFalse},
		{conditions.ScalingDownCondition, metav1.ConditionFalse},
		{conditions.UpToDateCondition, metav1.ConditionUnknown},
		{clusterv1.PausedCondition, metav1.ConditionFalse},
	} {
		if err := wantCondition(mp, c.t, c.status, ""); err != nil {
			t.Error(err)
		}
	}

	// One Node joins, not Ready yet: still Provisioned, one nodeRef.
	n1 := f.node(1, false)
	f.eventually("mp", func(mp *clusterv1.MachinePool) error {
		if len(mp.Status.NodeRefs) != 1 || mp.Status.NodeRefs[0].UID != n1.UID || ptr.Deref(mp.Status.ReadyReplicas, 0) != 0 {
			return fmt.Errorf("nodeRefs %+v, ready %v", mp.Status.NodeRefs, mp.Status.ReadyReplicas)
		}
		return nil
	})
	if mp := f.getPool("mp"); mp.Status.Phase != string(clusterv1.MachinePoolPhaseProvisioned) {
		t.Fatalf("phase %s with an unready Node", mp.Status.Phase)
	}

	// Running: as many Ready Nodes as replicas.
	f.setNodeReady(1, true, f.h.clock.Now())
	f.node(2, true)
	mp = f.waitPhase("mp", clusterv1.MachinePoolPhaseRunning)
	if ptr.Deref(mp.Status.ReadyReplicas, -1) != 2 || ptr.Deref(mp.Status.AvailableReplicas, -1) != 2 || unavailableReplicas(mp) != 0 || len(mp.Status.NodeRefs) != 2 {
		t.Fatalf("status %+v", mp.Status)
	}
	for _, ct := range []string{clusterv1.ReadyCondition, conditions.ReplicasReadyCondition, conditions.AvailableCondition} {
		if err := wantCondition(mp, ct, metav1.ConditionTrue, ""); err != nil {
			t.Error(err)
		}
	}
	if mp.Status.ObservedGeneration != mp.Generation {
		t.Errorf("observedGeneration %d, generation %d", mp.Status.ObservedGeneration, mp.Generation)
	}

	// Matched Nodes are annotated with their cluster and pool and lose the
	// uninitialized taint.
	testenv.Eventually(t, 10*time.Second, func() error {
		for i := 1; i <= 2; i++ {
			n := &corev1.Node{}
			if err := env.Client.Get(ctx, client.ObjectKey{Name: f.nodeName(i)}, n); err != nil {
				return err
			}
			if n.Annotations[clusterv1.OwnerNameAnnotation] != "mp" || n.Annotations[clusterv1.OwnerKindAnnotation] != "MachinePool" ||
				n.Annotations[clusterv1.ClusterNameAnnotation] != f.cluster || n.Annotations[clusterv1.ClusterNamespaceAnnotation] != f.ns {
				return fmt.Errorf("node %s annotations %v", n.Name, n.Annotations)
			}
			if hasTaint(n, UninitializedTaint) {
				return fmt.Errorf("node %s still has the uninitialized taint", n.Name)
			}
		}
		return nil
	})
	// The bootstrap data and the infrastructure pool are told in the phase
	// changes they brought, not in events of their own.
	for _, note := range []string{
		"Phase changed from Pending to Provisioning: bootstrap data is ready",
		"Phase changed from Provisioning to Provisioned: the infrastructure pool is ready",
	} {
		testenv.Eventually(t, 10*time.Second, func() error { return f.hasEventNote("mp", events.PhaseChanged, note) })
	}
	for _, reason := range []string{events.BootstrapReady, events.InfrastructureReady} {
		if err := f.hasEvent("mp", reason); err == nil {
			t.Errorf("a %s event beside the phase change that tells it", reason)
		}
	}
}

func TestMinReadySecondsUsesTheInjectedClock(t *testing.T) {
	f := newFixture(t)
	f.providers("mp")
	f.pool("mp", ptr.To[int32](1), func(mp *clusterv1.MachinePool) { mp.Spec.Template.Spec.MinReadySeconds = ptr.To[int32](600) })
	f.setBootstrap("mp", map[string]any{"status.ready": true, "status.dataSecretName": "d"})
	f.setInfra("mp", map[string]any{"status.ready": true, "status.replicas": int64(1), "spec.providerIDList": f.ids(1, 1)})
	f.node(1, true)
	mp := f.waitPhase("mp", clusterv1.MachinePoolPhaseRunning)
	if ptr.Deref(mp.Status.AvailableReplicas, 0) != 0 || unavailableReplicas(mp) != 1 {
		t.Fatalf("available/unavailable = %v/%d before minReadySeconds", mp.Status.AvailableReplicas, unavailableReplicas(mp))
	}
	if err := wantCondition(mp, conditions.AvailableCondition, metav1.ConditionFalse, conditions.NotAvailableReason); err != nil {
		t.Fatal(err)
	}
	// Ten minutes later (by the controller's clock) the Node is available.
	// The shared fake clock only moves forward, so this cannot break other
	// tests.
	f.h.clock.Step(601 * time.Second)
	f.setNodeReady(1, true, f.h.clock.Now().Add(-602*time.Second)) // a real change: an event to reconcile on
	f.eventually("mp", func(mp *clusterv1.MachinePool) error {
		if ptr.Deref(mp.Status.AvailableReplicas, -1) != 1 {
			return fmt.Errorf("available %v", mp.Status.AvailableReplicas)
		}
		return wantCondition(mp, conditions.AvailableCondition, metav1.ConditionTrue, conditions.AvailableReason)
	})
}

func TestNoBootstrapDataNeeded(t *testing.T) {
	f := newFixture(t)
	f.create(newUnstructured(infraAPIVersion, infraPoolKind, f.ns, "mp"))
	f.pool("mp", ptr.To[int32](1), func(mp *clusterv1.MachinePool) {
		mp.Spec.Template.Spec.Bootstrap = clusterv1.Bootstrap{DataSecretName: ptr.To("")}
	})
	mp := f.waitPhase("mp", clusterv1.MachinePoolPhaseProvisioning)
	if err := wantCondition(mp, conditions.BootstrapReadyCondition, metav1.ConditionTrue, conditions.NoBootstrapDataReason); err != nil {
		t.Fatal(err)
	}
}

func TestScalingUpAndDown(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.runningPool("mp", 2)

	// Scale up: the infra pool has fewer instances than desired.
	f.scale("mp", 3)
	mp := f.waitPhase("mp", clusterv1.MachinePoolPhaseScalingUp)
	if err := wantCondition(mp, conditions.ScalingUpCondition, metav1.ConditionTrue, conditions.ScalingUpReason); err != nil {
		t.Fatal(err)
	}
	f.setInfra("mp", map[string]any{"status.replicas": int64(3), "spec.providerIDList": f.ids(1, 3)})
	f.waitPhase("mp", clusterv1.MachinePoolPhaseProvisioned)
	f.node(3, true)
	f.waitPhase("mp", clusterv1.MachinePoolPhaseRunning)
	testenv.Eventually(t, 10*time.Second, func() error { return f.hasEvent("mp", events.ScalingUp) })

	// Scale down: more instances than desired, then the provider removes two
	// and their Nodes (which the pool annotated) are deleted.
	f.scale("mp", 1)
	mp = f.waitPhase("mp", clusterv1.MachinePoolPhaseScalingDown)
	if err := wantCondition(mp, conditions.ScalingDownCondition, metav1.ConditionTrue, conditions.ScalingDownReason); err != nil {
		t.Fatal(err)
	}
	f.setInfra("mp", map[string]any{"status.replicas": int64(1), "spec.providerIDList": f.ids(1, 1)})
	mp = f.waitPhase("mp", clusterv1.MachinePoolPhaseRunning)
	if len(mp.Status.NodeRefs) != 1 || ptr.Deref(mp.Status.ReadyReplicas, -1) != 1 {
		t.Fatalf("nodeRefs %v ready %v", mp.Status.NodeRefs, mp.Status.ReadyReplicas)
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		for i := 2; i <= 3; i++ {
			if err := gone(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: f.nodeName(i)}}); err != nil {
				return err
			}
		}
		return nil
	})
	if err := env.Client.Get(ctx, client.ObjectKey{Name: f.nodeName(1)}, &corev1.Node{}); err != nil {
		t.Fatalf("the remaining Node must stay: %v", err)
	}
	testenv.Eventually(t, 10*time.Second, func() error { return f.hasEvent("mp", events.ScalingDown) })
	testenv.Eventually(t, 10*time.Second, func() error { return f.hasEvent("mp", events.NodeDeleted) })
}

func TestUnannotatedNodesAreNotDeleted(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.runningPool("mp", 1)
	// A Node with a providerID the pool never listed is not the pool's.
	stranger := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: f.nodeName(99)}, Spec: corev1.NodeSpec{ProviderID: f.providerID(99)}}
	f.create(stranger)
	f.setInfra("mp", map[string]any{"status.replicas": int64(0), "spec.providerIDList": nil})
	f.scale("mp", 0)
	f.waitPhase("mp", clusterv1.MachinePoolPhaseRunning)
	testenv.Eventually(t, 10*time.Second, func() error {
		return gone(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: f.nodeName(1)}})
	})
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(stranger), &corev1.Node{}); err != nil {
		t.Fatalf("a Node the pool did not annotate must stay: %v", err)
	}
}

func TestFailedWithTheInfraPoolsMessage(t *testing.T) {
	f := newFixture(t)
	f.runningPool("mp", 1)
	f.setInfra("mp", map[string]any{
		"status.failureReason":  "InsufficientQuota",
		"status.failureMessage": "quota exceeded for Standard_D4s_v5 in westeurope",
	})
	mp := f.waitPhase("mp", clusterv1.MachinePoolPhaseFailed)
	if reason, message := v1beta1Failure(mp); ptr.Deref(reason, "") != "InsufficientQuota" ||
		!strings.Contains(ptr.Deref(message, ""), "quota exceeded for Standard_D4s_v5 in westeurope") {
		t.Fatalf("failure %v / %v", reason, message)
	}
	if err := wantCondition(mp, clusterv1.ReadyCondition, metav1.ConditionFalse, conditions.FailedReason); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, func() error { return f.hasEvent("mp", events.Failed) })

	// The user fixes it, the provider clears the failure: the pool recovers.
	f.setInfra("mp", map[string]any{"status.failureReason": nil, "status.failureMessage": nil})
	mp = f.waitPhase("mp", clusterv1.MachinePoolPhaseRunning)
	if reason, message := v1beta1Failure(mp); message != nil || reason != nil {
		t.Fatalf("failure not cleared: %+v", mp.Status)
	}
}

func TestMissingInfraPoolAndMalformedStatus(t *testing.T) {
	f := newFixture(t)
	f.create(newUnstructured(bootstrapAPIVersion, bootstrapKind, f.ns, "mp"))
	f.pool("mp", ptr.To[int32](1))
	f.setBootstrap("mp", map[string]any{"status.ready": true, "status.dataSecretName": "d"})
	f.waitPhase("mp", clusterv1.MachinePoolPhaseProvisioning)
	f.eventually("mp", func(mp *clusterv1.MachinePool) error {
		return wantCondition(mp, clusterv1.InfrastructureReadyCondition, metav1.ConditionFalse, conditions.ObjectNotFoundReason)
	})
	testenv.Eventually(t, 10*time.Second, func() error { return f.hasEvent("mp", events.ExternalObjectNotFound) })

	// The infra pool appears (no owner reference yet: found through the
	// reference index) with a malformed status: reported, no panic.
	u := newUnstructured(infraAPIVersion, infraPoolKind, f.ns, "mp")
	u.Object["status"] = map[string]any{"ready": "yes"}
	f.create(u)
	f.eventually("mp", func(mp *clusterv1.MachinePool) error {
		c := conditionOf(mp, clusterv1.InfrastructureReadyCondition)
		if c == nil || c.Reason != conditions.WaitingForInfrastructureReason || !strings.Contains(c.Message, "not a bool") {
			return fmt.Errorf("InfrastructureReady = %+v", c)
		}
		return nil
	})
	f.setInfra("mp", map[string]any{"status.ready": true, "status.replicas": int64(0)})
	f.waitPhase("mp", clusterv1.MachinePoolPhaseScalingUp)
}

func TestPaused(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.providers("mp")
	f.pool("mp", ptr.To[int32](1))
	f.waitPhase("mp", clusterv1.MachinePoolPhasePending)

	setPaused := func(paused bool) {
		c := &clusterv1.Cluster{}
		if err := env.Client.Get(ctx, f.key(f.cluster), c); err != nil {
			t.Fatal(err)
		}
		orig := c.DeepCopy()
		c.Spec.Paused = ptr.To(paused)
		if err := env.Client.Patch(ctx, c, client.MergeFrom(orig)); err != nil {
			t.Fatal(err)
		}
	}
	setPaused(true)
	f.eventually("mp", func(mp *clusterv1.MachinePool) error {
		return wantCondition(mp, clusterv1.PausedCondition, metav1.ConditionTrue, clusterv1.PausedReason)
	})
	f.setBootstrap("mp", map[string]any{"status.ready": true, "status.dataSecretName": "d"})
	consistently(t, 2*time.Second, func() error {
		if mp := f.getPool("mp"); mp.Status.Phase != string(clusterv1.MachinePoolPhasePending) || mp.Spec.Template.Spec.Bootstrap.DataSecretName != nil {
			return fmt.Errorf("a paused pool moved: phase %s", mp.Status.Phase)
		}
		return nil
	})
	setPaused(false)
	mp := f.waitPhase("mp", clusterv1.MachinePoolPhaseProvisioning)
	if err := wantCondition(mp, clusterv1.PausedCondition, metav1.ConditionFalse, clusterv1.NotPausedReason); err != nil {
		t.Fatal(err)
	}

	// The paused annotation on the pool itself works too.
	mp = f.getPool("mp")
	orig := mp.DeepCopy()
	mp.Annotations = map[string]string{clusterv1.PausedAnnotation: ""}
	if err := env.Client.Patch(ctx, mp, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	f.eventually("mp", func(mp *clusterv1.MachinePool) error {
		return wantCondition(mp, clusterv1.PausedCondition, metav1.ConditionTrue, clusterv1.PausedReason)
	})
}

func TestAutoscalerAnnotations(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	bounds := func(mp *clusterv1.MachinePool) {
		mp.Annotations = map[string]string{
			clusterv1.AutoscalerMinSizeAnnotation: "2",
			clusterv1.AutoscalerMaxSizeAnnotation: "5",
		}
	}
	// A new pool starts at the minimum.
	f.providers("as")
	f.pool("as", nil, bounds)
	f.eventually("as", func(mp *clusterv1.MachinePool) error {
		if ptr.Deref(mp.Spec.Replicas, -1) != 2 {
			return fmt.Errorf("replicas %v", mp.Spec.Replicas)
		}
		return nil
	})
	testenv.Eventually(t, 10*time.Second, func() error { return f.hasEvent("as", events.ReplicasDefaulted) })

	// Unsetting replicas on a running pool clamps the observed size.
	f.setBootstrap("as", map[string]any{"status.ready": true, "status.dataSecretName": "d"})
	f.setInfra("as", map[string]any{"status.ready": true, "status.replicas": int64(7), "spec.providerIDList": f.ids(1, 7)})
	f.eventually("as", func(mp *clusterv1.MachinePool) error {
		if ptr.Deref(mp.Status.Replicas, -1) != 7 {
			return fmt.Errorf("status.replicas %v", mp.Status.Replicas)
		}
		return nil
	})
	// kubectl apply without replicas, as the autoscaler docs recommend.
	if err := env.Client.Patch(ctx, f.getPool("as"), client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"replicas":null}}`))); err != nil {
		t.Fatal(err)
	}
	f.eventually("as", func(mp *clusterv1.MachinePool) error {
		if ptr.Deref(mp.Spec.Replicas, -1) != 5 {
			return fmt.Errorf("replicas %v, want the maximum 5", mp.Spec.Replicas)
		}
		return nil
	})

	// Without annotations: 1.
	f.providers("plain")
	f.pool("plain", nil)
	f.eventually("plain", func(mp *clusterv1.MachinePool) error {
		if ptr.Deref(mp.Spec.Replicas, -1) != 1 {
			return fmt.Errorf("replicas %v", mp.Spec.Replicas)
		}
		return nil
	})
}

func TestReplicasManagedByTakesReplicasFromTheInfraPool(t *testing.T) {
	f := newFixture(t)
	f.providers("mp")
	f.pool("mp", ptr.To[int32](1), func(mp *clusterv1.MachinePool) {
		mp.Annotations = map[string]string{clusterv1.ReplicasManagedByAnnotation: "external-autoscaler"}
	})
	f.setBootstrap("mp", map[string]any{"status.ready": true, "status.dataSecretName": "d"})
	f.setInfra("mp", map[string]any{"status.ready": true, "status.replicas": int64(4), "spec.providerIDList": f.ids(1, 4)})
	f.eventually("mp", func(mp *clusterv1.MachinePool) error {
		if ptr.Deref(mp.Spec.Replicas, -1) != 4 {
			return fmt.Errorf("replicas %v", mp.Spec.Replicas)
		}
		return nil
	})
	testenv.Eventually(t, 10*time.Second, func() error { return f.hasEvent("mp", events.ReplicasSynced) })
	f.setInfra("mp", map[string]any{"status.replicas": int64(2), "spec.providerIDList": f.ids(1, 2)})
	f.eventually("mp", func(mp *clusterv1.MachinePool) error {
		if ptr.Deref(mp.Spec.Replicas, -1) != 2 || mp.Status.Phase != string(clusterv1.MachinePoolPhaseProvisioned) {
			return fmt.Errorf("replicas %v phase %s", mp.Spec.Replicas, mp.Status.Phase)
		}
		return nil
	})
}

// infraMachine creates infrastructure machine i of pool with its providerID.
func (f *fixture) infraMachine(pool string, i int, latest any) string {
	f.t.Helper()
	name := fmt.Sprintf("%s-vm-%d", pool, i)
	u := newUnstructured(infraAPIVersion, infraMachKind, f.ns, name)
	u.SetLabels(map[string]string{clusterv1.MachinePoolNameLabel: pool, clusterv1.ClusterNameLabel: f.cluster})
	u.Object["spec"] = map[string]any{"providerID": f.providerID(i)}
	status := map[string]any{"ready": true}
	if latest != nil {
		status["latestModelApplied"] = latest
	}
	u.Object["status"] = status
	f.create(u)
	return name
}

func TestPoolMachines(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.runningPool("mp", 2)
	m1 := f.infraMachine("mp", 1, true)
	m2 := f.infraMachine("mp", 2, false)
	f.setInfra("mp", map[string]any{"status.infrastructureMachineKind": infraMachKind})

	machine := func(name string) (*clusterv1.Machine, error) {
		m := &clusterv1.Machine{}
		return m, env.Client.Get(ctx, f.key(name), m)
	}
	mpObj := f.getPool("mp")
	testenv.Eventually(t, 20*time.Second, func() error {
		for i, name := range []string{m1, m2} {
			m, err := machine(name)
			if err != nil {
				return err
			}
			if m.Labels[clusterv1.MachinePoolNameLabel] != "mp" || m.Labels[clusterv1.ClusterNameLabel] != f.cluster {
				return fmt.Errorf("labels %v", m.Labels)
			}
			if c := metav1.GetControllerOf(m); c == nil || c.UID != mpObj.UID {
				return fmt.Errorf("controller %v", c)
			}
			if m.Spec.ProviderID != f.providerID(i+1) || m.Spec.InfrastructureRef.Name != name ||
				m.Spec.InfrastructureRef.Kind != infraMachKind || m.Spec.InfrastructureRef.APIGroup != infraGroup || m.Spec.Version != "v1.31.2" {
				return fmt.Errorf("spec %+v", m.Spec)
			}
			if !m.Status.NodeRef.IsDefined() || m.Status.NodeRef.Name != f.nodeName(i+1) {
				return fmt.Errorf("nodeRef %v", m.Status.NodeRef)
			}
			want := metav1.ConditionTrue
			if i == 1 {
				want = metav1.ConditionFalse
			}
			var upToDate *metav1.Condition
			for j := range m.Status.Conditions {
				if m.Status.Conditions[j].Type == conditions.UpToDateCondition {
					upToDate = &m.Status.Conditions[j]
				}
			}
			if upToDate == nil || upToDate.Status != want {
				return fmt.Errorf("machine %s UpToDate %+v, want %s", name, upToDate, want)
			}
		}
		return nil
	})
	f.eventually("mp", func(mp *clusterv1.MachinePool) error {
		return wantCondition(mp, conditions.UpToDateCondition, metav1.ConditionFalse, conditions.NotUpToDateReason)
	})
	testenv.Eventually(t, 10*time.Second, func() error { return f.hasEvent("mp", events.MachineCreated) })

	// The delete-machine annotation is carried to the infra machine.
	m, err := machine(m2)
	if err != nil {
		t.Fatal(err)
	}
	orig := m.DeepCopy()
	m.Annotations = map[string]string{clusterv1.DeleteMachineAnnotation: "yes"}
	if err := env.Client.Patch(ctx, m, client.MergeFrom(orig)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		u := newUnstructured(infraAPIVersion, infraMachKind, f.ns, m2)
		if err := env.Client.Get(ctx, f.key(m2), u); err != nil {
			return err
		}
		if _, ok := u.GetAnnotations()[clusterv1.DeleteMachineAnnotation]; !ok {
			return fmt.Errorf("annotations %v", u.GetAnnotations())
		}
		return nil
	})

	// Deleting a Machine deletes its infra machine, then the Machine goes.
	if err := env.Client.Delete(ctx, m); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, func() error {
		if err := gone(newUnstructured(infraAPIVersion, infraMachKind, f.ns, m2)); err != nil {
			return err
		}
		return gone(&clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: m2}})
	})

	// An infra machine that disappears takes its Machine with it.
	if err := env.Client.Delete(ctx, newUnstructured(infraAPIVersion, infraMachKind, f.ns, m1)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, func() error {
		return gone(&clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: m1}})
	})
}

func TestDeletionLeavesNothingBehind(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.runningPool("mp", 2)
	im := f.infraMachine("mp", 1, true)
	f.setInfra("mp", map[string]any{"status.infrastructureMachineKind": infraMachKind})
	testenv.Eventually(t, 20*time.Second, func() error {
		_, err := (func() (*clusterv1.Machine, error) {
			m := &clusterv1.Machine{}
			return m, env.Client.Get(ctx, f.key(im), m)
		})()
		return err
	})
	// Nodes that are annotated by the pool before deletion.
	testenv.Eventually(t, 10*time.Second, func() error {
		list, err := f.h.cc.NodesOwnedBy(ctx, f.key(f.cluster), workload.Owner{ClusterName: f.cluster, Namespace: f.ns, Kind: "MachinePool", Name: "mp"})
		if err != nil {
			return err
		}
		if len(list) != 2 {
			return fmt.Errorf("%d owned Nodes", len(list))
		}
		return nil
	})

	if err := env.Client.Delete(ctx, f.getPool("mp")); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		for _, obj := range []client.Object{
			&clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "mp"}},
			newUnstructured(bootstrapAPIVersion, bootstrapKind, f.ns, "mp"),
			newUnstructured(infraAPIVersion, infraPoolKind, f.ns, "mp"),
			newUnstructured(infraAPIVersion, infraMachKind, f.ns, im),
			&clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: im}},
			&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: f.nodeName(1)}},
			&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: f.nodeName(2)}},
		} {
			if err := gone(obj); err != nil {
				return err
			}
		}
		return nil
	})
	for _, reason := range []string{events.DeletingBootstrapConfig, events.DeletingInfrastructure, events.DeletingMachines, events.DeletingNodes, events.Deleted} {
		if err := f.hasEvent("mp", reason); err != nil {
			t.Error(err)
		}
	}
}

func TestDeletionWithAnUnreachableWorkloadClusterIsBounded(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.providers("mp")
	f.pool("mp", ptr.To[int32](1), func(mp *clusterv1.MachinePool) {
		mp.Spec.Template.Spec.Deletion.NodeDeletionTimeoutSeconds = ptr.To[int32](1)
	})
	f.setBootstrap("mp", map[string]any{"status.ready": true, "status.dataSecretName": "d"})
	f.setInfra("mp", map[string]any{"status.ready": true, "status.replicas": int64(1), "spec.providerIDList": f.ids(1, 1)})
	f.node(1, true)
	f.waitPhase("mp", clusterv1.MachinePoolPhaseRunning)

	// The workload cluster's credentials go away.
	if err := env.Client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: workload.KubeconfigSecretName(f.cluster)}}); err != nil {
		t.Fatal(err)
	}
	f.eventually("mp", func(mp *clusterv1.MachinePool) error {
		return wantCondition(mp, conditions.ReplicasReadyCondition, metav1.ConditionUnknown, conditions.WorkloadClusterNotConnectedReason)
	})
	if err := env.Client.Delete(ctx, f.getPool("mp")); err != nil {
		t.Fatal(err)
	}
	// The fake clock decides when the timeout has passed.
	testenv.Eventually(t, 30*time.Second, func() error {
		f.h.clock.Step(time.Second)
		return gone(&clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "mp"}})
	})
	if err := f.hasEvent("mp", events.NodeDeletionTimedOut); err != nil {
		t.Fatal(err)
	}
}

// watchPools watches the MachinePools of the test's namespace from now on:
// every version written after it returns, in order.
func (f *fixture) watchPools(ctx context.Context) watch.Interface {
	f.t.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		f.t.Fatal(err)
	}
	list := &clusterv1.MachinePoolList{}
	if err := wc.List(ctx, list, client.InNamespace(f.ns)); err != nil {
		f.t.Fatal(err)
	}
	w, err := wc.Watch(ctx, &clusterv1.MachinePoolList{}, client.InNamespace(f.ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		f.t.Fatal(err)
	}
	return w
}

// TestFirstReconcileWritesItsMetadataOnce: a new pool's finalizer, Cluster
// label and owner reference are written in one patch, and the reconcile goes
// on in the same pass: no version of the pool carries the finalizer without
// the rest, and its first status already says why it is Pending.
func TestFirstReconcileWritesItsMetadataOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.providers("mp")
	w := f.watchPools(ctx)
	defer w.Stop()
	f.pool("mp", ptr.To[int32](2))
	f.waitPhase("mp", clusterv1.MachinePoolPhasePending)

	// Every version up to the first with a status, in order.
	var versions []*clusterv1.MachinePool
	timeout := time.After(30 * time.Second)
	for len(versions) == 0 || versions[len(versions)-1].Status.Phase == "" {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the watch ended")
			}
			if mp, ok := ev.Object.(*clusterv1.MachinePool); ok && mp.Name == "mp" {
				versions = append(versions, mp)
			}
		case <-timeout:
			t.Fatalf("no version of the pool with a phase within 30s; saw %d versions", len(versions))
		}
	}
	metaWrites := 0
	for i, mp := range versions {
		hasFinalizer := strings.Contains(strings.Join(mp.Finalizers, ","), clusterv1.MachinePoolFinalizer)
		if !hasFinalizer {
			continue
		}
		if mp.Labels[clusterv1.ClusterNameLabel] != f.cluster || len(mp.OwnerReferences) != 1 || mp.OwnerReferences[0].Kind != "Cluster" {
			t.Errorf("version %d carries the finalizer without the Cluster label and owner reference: labels %v, owners %+v", i, mp.Labels, mp.OwnerReferences)
		}
		if i == 0 || !strings.Contains(strings.Join(versions[i-1].Finalizers, ","), clusterv1.MachinePoolFinalizer) {
			metaWrites++
		}
	}
	if metaWrites != 1 {
		t.Errorf("the finalizer appeared in %d writes, want 1", metaWrites)
	}
	first := versions[len(versions)-1]
	if len(first.Status.Conditions) == 0 {
		t.Errorf("the first status (phase %s) has no conditions: the reconcile that wrote the finalizer did not go on", first.Status.Phase)
	}
	if n := len(versions); n != 3 {
		t.Errorf("saw %d versions before the first status (created, metadata, status), want 3", n)
	}
}

// TestStaleReadWritesNothingTwice: a reconcile that reads the pool as it was
// before this controller's last writes (a cache that has not caught up)
// works from what those writes left, and writes neither the metadata nor the
// status again. A Reconciler of its own, reading the pool through a client
// that keeps returning its first copy; the shared manager reconciles the
// pool too, so only this Reconciler's own requests are counted.
func TestStaleReadWritesNothingTwice(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.providers("mp")
	f.pool("mp", ptr.To[int32](2))
	stale := &clusterv1.MachinePool{}
	if err := env.Client.Get(ctx, f.key("mp"), stale); err != nil {
		t.Fatal(err)
	}
	var patches atomic.Int32
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return testenv.RoundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodPatch && strings.Contains(r.URL.Path, "/machinepools/") {
				patches.Add(1)
			}
			return rt.RoundTrip(r)
		})
	})
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{
		Client:         testenv.StaleClient{Client: c, Stale: stale},
		ClusterCache:   f.h.cc,
		Clock:          f.h.clock,
		Recorder:       kevents.NewFakeRecorder(100),
		externalReader: env.Client,
	}
	reconcile := func() error {
		_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: f.key("mp")})
		return err
	}
	// The shared manager reconciles the new pool at the same time, and a
	// write of this first reconcile (the bootstrap config's owner, say) can
	// lose the race to it: a conflict, which a controller retries.
	first := reconcile()
	for i := 0; apierrors.IsConflict(first) && i < 10; i++ {
		first = reconcile()
	}
	if first != nil {
		t.Fatalf("Reconcile: %v", first)
	}
	if patches.Load() == 0 {
		t.Fatal("the first reconcile of a new pool wrote nothing")
	}
	patches.Store(0)
	if err := reconcile(); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	if n := patches.Load(); n != 0 {
		t.Errorf("a reconcile that read the pool from before the last writes wrote it %d times again", n)
	}
}

// setInfraStatusCurrent sets fields on the infrastructure pool name in one
// update and, when current, says in status.observedGeneration that its
// status observed the generation that update makes (the test CRD has no
// status subresource: every change moves the generation by one); otherwise
// status.observedGeneration is left behind, as a provider's spec write
// leaves it until its status write.
func (f *fixture) setInfraStatusCurrent(name string, fields map[string]any, current bool) {
	f.t.Helper()
	var want int64
	f.setFields(infraAPIVersion, infraPoolKind, name, fields, func(u *unstructured.Unstructured) error {
		want = u.GetGeneration() + 1
		if !current {
			return nil
		}
		return unstructured.SetNestedField(u.Object, want, "status", "observedGeneration")
	})
	u := newUnstructured(infraAPIVersion, infraPoolKind, f.ns, name)
	if err := env.Client.Get(context.Background(), f.key(name), u); err != nil {
		f.t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); current && (u.GetGeneration() != want || got != want) {
		f.t.Fatalf("%s %s: generation %d, status.observedGeneration %d after the update, want both %d", infraPoolKind, name, u.GetGeneration(), got, want)
	}
}

// TestStatusWaitsForTheInfraPoolsStatus: when the infrastructure pool's
// spec moved ahead of its status (its providerIDList written, the status
// that observed it not yet: status.observedGeneration older than its
// generation), the MachinePool copies the providerIDList but writes no
// status from the two halves (the new Node counted ready, the replicas
// still the old count); the provider's status write brings it to Running.
// A status that stays behind is waited for InfraStatusWait at most.
func TestStatusWaitsForTheInfraPoolsStatus(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.runningPool("mp", 2)
	f.setInfraStatusCurrent("mp", nil, true)
	f.node(3, true)

	w := f.watchPools(ctx)
	defer w.Stop()

	f.scale("mp", 3)
	f.waitPhase("mp", clusterv1.MachinePoolPhaseScalingUp)
	// The provider's two writes: the spec, then (once the MachinePool has
	// copied the providerIDList) the status.
	f.setInfraStatusCurrent("mp", map[string]any{"spec.providerIDList": f.ids(1, 3)}, false)
	f.eventually("mp", func(mp *clusterv1.MachinePool) error {
		if n := len(mp.Spec.ProviderIDList); n != 3 {
			return fmt.Errorf("%d providerIDs, want 3", n)
		}
		return nil
	})
	f.setInfraStatusCurrent("mp", map[string]any{"status.replicas": int64(3)}, true)
	f.eventually("mp", func(mp *clusterv1.MachinePool) error {
		if mp.Status.Phase != string(clusterv1.MachinePoolPhaseRunning) || ptr.Deref(mp.Status.Replicas, 0) != 3 || ptr.Deref(mp.Status.ReadyReplicas, 0) != 3 || mp.Status.ObservedGeneration != mp.Generation {
			return fmt.Errorf("phase %s, replicas %d, ready %d, observedGeneration %d of %d", mp.Status.Phase,
				ptr.Deref(mp.Status.Replicas, 0), ptr.Deref(mp.Status.ReadyReplicas, 0), mp.Status.ObservedGeneration, mp.Generation)
		}
		return nil
	})
	// Every version the watch saw up to Running: none from the two halves,
	// and from the MachinePool's copy of the providerIDList on, no status
	// written before Running (not even one that moves only its
	// conditions' observedGeneration to the generation of that copy).
	timeout := time.After(30 * time.Second)
	var prev *clusterv1.MachinePool
	for running := false; !running; {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the watch ended")
			}
			mp, ok := ev.Object.(*clusterv1.MachinePool)
			if !ok || mp.Name != "mp" {
				continue
			}
			if r, ready := ptr.Deref(mp.Status.Replicas, 0), ptr.Deref(mp.Status.ReadyReplicas, 0); ready > r {
				t.Errorf("a status written from the infrastructure pool's new spec and old status: replicas %d, ready %d (resourceVersion %s)", r, ready, mp.ResourceVersion)
			}
			running = mp.Status.Phase == string(clusterv1.MachinePoolPhaseRunning) && ptr.Deref(mp.Status.Replicas, 0) == 3
			if prev != nil && len(prev.Spec.ProviderIDList) == 3 && !running && !equality.Semantic.DeepEqual(prev.Status, mp.Status) {
				t.Errorf("a status written while the infrastructure pool's status was behind its spec (resourceVersion %s): phase %s, replicas %d, ready %d, conditions %s",
					mp.ResourceVersion, mp.Status.Phase, ptr.Deref(mp.Status.Replicas, 0), ptr.Deref(mp.Status.ReadyReplicas, 0), condSummary(mp))
			}
			prev = mp
		case <-timeout:
			t.Fatal("the watch did not show the pool Running with 3 replicas within 30s")
		}
	}

	// A status that never catches up: the MachinePool's status waits
	// InfraStatusWait by its clock (the test's, stepped here), then is
	// written anyway (Node 3 no longer ready).
	f.setInfraStatusCurrent("mp", map[string]any{"spec.note": "the provider stopped"}, false)
	f.setNodeReady(3, false, f.h.clock.Now())
	testenv.Eventually(t, 30*time.Second, func() error {
		f.h.clock.Step(InfraStatusWait / 4)
		mp := f.getPool("mp")
		if ready := ptr.Deref(mp.Status.ReadyReplicas, 0); ready != 2 {
			return fmt.Errorf("ready %d, want 2", ready)
		}
		return nil
	})
}
