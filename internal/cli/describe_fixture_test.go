package cli

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/api/conditions"
	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/testenv"
)

// fixture is a Cluster "demo" with a 3-replica MachinePool "workers" in the
// middle of a rollout, in namespace ns: a KubeadmConfig, a LocalMachinePool
// and three instances — workers-a up to date and Ready, workers-b stale and
// Ready, workers-c up to date with a NotReady Node — each with a pool
// Machine and a Node. Statuses are written through the status subresource
// as the controllers would; no controller runs.
type fixture struct {
	ns string
	// clock is 42m30s after the MachinePool's creation, so that every age
	// reads "42m" however long the setup took.
	clock clock.PassiveClock
	// now is the clock's time.
	now time.Time
}

// instanceSpec describes one instance of the fixture.
type instanceSpec struct {
	suffix, zone string
	upToDate     bool
	nodeReady    bool
}

var fixtureInstances = []instanceSpec{
	{suffix: "a", zone: "zone-1", upToDate: true, nodeReady: true},
	{suffix: "b", zone: "zone-2", upToDate: false, nodeReady: true},
	{suffix: "c", zone: "zone-3", upToDate: true, nodeReady: false},
}

func newFixture(t *testing.T, ns string) *fixture {
	t.Helper()
	ctx := context.Background()
	c := env.Client
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})

	mp := &clusterv1.MachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "workers", Labels: map[string]string{clusterv1.ClusterNameLabel: "demo"}},
		Spec: clusterv1.MachinePoolSpec{
			ClusterName: "demo",
			Replicas:    ptr.To[int32](3),
			Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				ClusterName: "demo",
				Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfig", Name: "workers",
				}},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: infrav1.GroupVersion.Group, Kind: "LocalMachinePool", Name: "workers",
				},
				Version: "v1.37.1",
			}},
		},
	}
	for _, is := range fixtureInstances {
		mp.Spec.ProviderIDList = append(mp.Spec.ProviderIDList, fmt.Sprintf("local:///%s/workers/%s", ns, is.suffix))
	}
	create(t, mp)
	f := &fixture{ns: ns, now: mp.CreationTimestamp.Add(42*time.Minute + 30*time.Second)}
	f.clock = clocktesting.NewFakePassiveClock(f.now)

	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "demo"},
		Spec:       clusterv1.ClusterSpec{ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "127.0.0.1", Port: 6443}},
	}
	create(t, cluster)
	cluster.Status = clusterv1.ClusterStatus{
		Phase: string(clusterv1.ClusterPhaseProvisioned),
		Initialization: clusterv1.ClusterInitializationStatus{
			InfrastructureProvisioned: ptr.To(true),
			ControlPlaneInitialized:   ptr.To(true),
		},
		Conditions: []metav1.Condition{
			f.cond(clusterv1.ReadyCondition, metav1.ConditionTrue, clusterv1.ReadyReason, ""),
			f.cond(conditions.ControlPlaneReadyCondition, metav1.ConditionTrue, clusterv1.ReadyReason, ""),
		},
	}
	updateStatus(t, cluster)
	create(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "demo-kubeconfig"},
		Data:       map[string][]byte{"value": env.Kubeconfig},
	})

	kc := &bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "workers"}}
	create(t, kc)
	kc.Status.Initialization.DataSecretCreated = ptr.To(true)
	kc.Status.DataSecretName = "workers-bootstrap"
	kc.Status.Conditions = []metav1.Condition{f.cond(clusterv1.ReadyCondition, metav1.ConditionTrue, clusterv1.ReadyReason, "")}
	updateStatus(t, kc)

	lmp := &infrav1.LocalMachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "workers"},
		Spec: infrav1.LocalMachinePoolSpec{
			Template: infrav1.LocalMachinePoolMachineTemplate{InstanceType: "sim.d2", Image: "ubuntu-2404", Zones: []string{"zone-1", "zone-2", "zone-3"}},
			Strategy: infrav1.MachinePoolDeploymentStrategy{
				Type: infrav1.RollingUpdateMachinePoolDeploymentStrategyType,
				RollingUpdate: &infrav1.MachineRollingUpdateDeployment{
					MaxSurge:       ptr.To(intstr.FromString("25%")),
					MaxUnavailable: ptr.To(intstr.FromInt32(1)),
					DeletePolicy:   infrav1.OldestDeletePolicyType,
				},
			},
		},
	}
	create(t, lmp)
	lmp.Status = infrav1.LocalMachinePoolStatus{
		Ready:                     true,
		Replicas:                  3,
		ModelHash:                 "m2",
		InfrastructureMachineKind: infrav1.LocalMachinePoolMachineKind,
		ObservedGeneration:        lmp.Generation,
		Conditions: []metav1.Condition{
			f.cond(clusterv1.ReadyCondition, metav1.ConditionTrue, clusterv1.ReadyReason, "Scale group default-workers has capacity 3"),
			f.cond(infrav1.ScaleGroupReadyCondition, metav1.ConditionTrue, clusterv1.ReadyReason, "Scale group default-workers has capacity 3"),
			f.cond(infrav1.ScaleGroupModelUpdatedCondition, metav1.ConditionFalse, infrav1.ScaleGroupModelOutOfDateReason, "1 of 3 instances run an older model than m2"),
			f.cond(infrav1.ScaleGroupDesiredReplicasCondition, metav1.ConditionTrue, clusterv1.ReadyReason, "3 of 3 replicas"),
			f.cond(rolloutProgressingCondition, metav1.ConditionTrue, "WaitingForAvailable", "workers-c is not available yet"),
			f.cond(infrav1.RemediatingCondition, metav1.ConditionTrue, clusterv1.MachineSetRemediatingReason,
				"remediating 1 instance (c: Condition Ready on Node is reporting status False for more than 1m0s)"),
		},
	}
	for _, is := range fixtureInstances {
		lmp.Status.Instances = append(lmp.Status.Instances, infrav1.LocalMachinePoolInstanceStatus{
			InstanceID: is.suffix, ProviderID: f.providerID(is.suffix), Zone: is.zone,
			State: infrav1.LocalInstanceRunning, Ready: is.nodeReady, LatestModelApplied: is.upToDate,
		})
	}
	updateStatus(t, lmp)

	for _, is := range fixtureInstances {
		f.createInstance(t, is)
	}

	mp.Status = clusterv1.MachinePoolStatus{
		Replicas:          ptr.To[int32](3),
		ReadyReplicas:     ptr.To[int32](2),
		AvailableReplicas: ptr.To[int32](2),
		UpToDateReplicas:  ptr.To[int32](2),
		Phase:             string(clusterv1.MachinePoolPhaseProvisioned),
		Initialization: clusterv1.MachinePoolInitializationStatus{
			BootstrapDataSecretCreated: ptr.To(true),
			InfrastructureProvisioned:  ptr.To(true),
		},
		ObservedGeneration: mp.Generation,
		Conditions: []metav1.Condition{
			f.cond(clusterv1.ReadyCondition, metav1.ConditionFalse, conditions.WaitingForReplicasReadyReason, "ReplicasReady: 2 of 3 replicas ready (3 instances)"),
			f.cond(conditions.BootstrapReadyCondition, metav1.ConditionTrue, clusterv1.ReadyReason, ""),
			f.cond(clusterv1.InfrastructureReadyCondition, metav1.ConditionTrue, clusterv1.ReadyReason, ""),
			f.cond(conditions.ReplicasReadyCondition, metav1.ConditionFalse, conditions.WaitingForReplicasReadyReason, "2 of 3 replicas ready (3 instances)"),
			f.cond("Available", metav1.ConditionFalse, "NotAvailable", "2 of 3 replicas available (Ready for at least 0s)"),
			f.cond("UpToDate", metav1.ConditionFalse, "NotUpToDate", "1 of 3 machines do not run the latest model"),
			f.cond("ScalingUp", metav1.ConditionFalse, "NotScalingUp", ""),
			f.cond("ScalingDown", metav1.ConditionFalse, "NotScalingDown", ""),
			f.cond(clusterv1.PausedCondition, metav1.ConditionFalse, clusterv1.NotPausedReason, ""),
		},
	}
	updateStatus(t, mp)
	if err := c.Get(ctx, client.ObjectKeyFromObject(mp), mp); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) providerID(suffix string) string {
	return fmt.Sprintf("local:///%s/workers/%s", f.ns, suffix)
}

func (f *fixture) nodeName(suffix string) string { return f.ns + "-" + suffix }

// createInstance creates a LocalMachinePoolMachine, its pool Machine and its
// Node.
func (f *fixture) createInstance(t *testing.T, is instanceSpec) {
	t.Helper()
	name := "workers-" + is.suffix
	labels := map[string]string{clusterv1.ClusterNameLabel: "demo", clusterv1.MachinePoolNameLabel: "workers"}
	m := &infrav1.LocalMachinePoolMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name, Labels: labels},
		Spec:       infrav1.LocalMachinePoolMachineSpec{ProviderID: f.providerID(is.suffix), InstanceID: is.suffix},
	}
	create(t, m)
	m.Status = infrav1.LocalMachinePoolMachineStatus{
		Ready:              is.nodeReady,
		LatestModelApplied: is.upToDate,
		Zone:               is.zone,
		State:              infrav1.LocalInstanceRunning,
		Version:            "v1.37.1",
		NodeRef:            &corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: f.nodeName(is.suffix)},
		Conditions:         []metav1.Condition{f.cond(infrav1.InstanceReadyCondition, metav1.ConditionTrue, clusterv1.ReadyReason, "")},
	}
	if !is.nodeReady {
		m.Status.Conditions[0] = f.cond(infrav1.InstanceReadyCondition, metav1.ConditionFalse, "NodeNotReady", "Node "+f.nodeName(is.suffix)+" is not Ready")
	}
	updateStatus(t, m)

	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name, Labels: labels},
		Spec: clusterv1.MachineSpec{
			ClusterName: "demo",
			Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To("workers-bootstrap")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infrav1.GroupVersion.Group, Kind: infrav1.LocalMachinePoolMachineKind, Name: name,
			},
			ProviderID: f.providerID(is.suffix),
		},
	}
	create(t, machine)
	// A MachineHealthCheck covers the pool: the NotReady instance is
	// unhealthy and being remediated.
	machine.Status.Conditions = []metav1.Condition{f.cond(clusterv1.MachineHealthCheckSucceededCondition, metav1.ConditionTrue, clusterv1.MachineHealthCheckSucceededReason, "")}
	if !is.nodeReady {
		machine.Status.Conditions = []metav1.Condition{
			f.cond(clusterv1.MachineHealthCheckSucceededCondition, metav1.ConditionFalse, clusterv1.MachineHealthCheckUnhealthyNodeReason,
				"Health check failed:\n  * Condition Ready on Node is reporting status False for more than 1m0s"),
			f.cond(clusterv1.MachineOwnerRemediatedCondition, metav1.ConditionFalse, clusterv1.MachineSetMachineRemediationMachineDeletingReason, "Machine is deleting"),
		}
	}
	updateStatus(t, machine)

	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: f.nodeName(is.suffix)},
		Spec:       corev1.NodeSpec{ProviderID: f.providerID(is.suffix)},
	}
	create(t, node)
	ready := corev1.NodeCondition{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status",
		LastHeartbeatTime: metav1.NewTime(f.now), LastTransitionTime: metav1.NewTime(f.now.Add(-40*time.Minute - 10*time.Second)),
	}
	if !is.nodeReady {
		ready.Status, ready.Reason, ready.Message = corev1.ConditionFalse, "KubeletNotReady", "container runtime is down"
		ready.LastTransitionTime = metav1.NewTime(f.now.Add(-3*time.Minute - 5*time.Second))
	}
	node.Status.Conditions = []corev1.NodeCondition{ready}
	updateStatus(t, node)
}

// cond is a condition that last changed 5 minutes before the fixture's now.
func (f *fixture) cond(t string, s metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(f.now.Add(-5 * time.Minute))}
}

// create creates obj. The fixture's names are fixed, for golden files, so
// an object left by an earlier run of the test in this process (-count) is
// deleted and created again; nothing holds a finalizer on them.
func create(t *testing.T, obj client.Object) {
	t.Helper()
	ctx := context.Background()
	err := env.Client.Create(ctx, obj)
	if apierrors.IsAlreadyExists(err) {
		if _, ok := obj.(*corev1.Namespace); ok {
			return
		}
		if err := env.Client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("deleting %T %s left by an earlier run: %v", obj, obj.GetName(), err)
		}
		testenv.Eventually(t, 10*time.Second, func() error {
			err = env.Client.Create(ctx, obj)
			if apierrors.IsAlreadyExists(err) {
				return err
			}
			return nil
		})
	}
	if err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// updateStatus writes obj's status through the status subresource, keeping
// the status it was given.
func updateStatus(t *testing.T, obj client.Object) {
	t.Helper()
	if err := env.Client.Status().Update(context.Background(), obj); err != nil {
		t.Fatalf("updating the status of %T %s: %v", obj, obj.GetName(), err)
	}
}

// patchStatus reads obj again, applies mutate and writes its status,
// retrying on conflicts.
func patchStatus[T client.Object](t *testing.T, obj T, mutate func(T)) {
	t.Helper()
	ctx := context.Background()
	testenv.Eventually(t, 10*time.Second, func() error {
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}, obj); err != nil {
			return err
		}
		mutate(obj)
		err := env.Client.Status().Update(ctx, obj)
		if apierrors.IsConflict(err) {
			return err
		}
		if err != nil {
			t.Fatalf("updating the status of %T %s: %v", obj, obj.GetName(), err)
		}
		return nil
	})
}
