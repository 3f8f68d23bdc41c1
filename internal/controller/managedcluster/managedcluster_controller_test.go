package managedcluster

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/condition"
	"github.com/mpool-dev/mpool/internal/testenv"
)

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := env.Client.Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
}

func controlPlane(ns, name string) *infrav1.AzureManagedControlPlane {
	return &infrav1.AzureManagedControlPlane{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: infrav1.AzureManagedControlPlaneSpec{SubscriptionID: "00000000-0000-4000-8000-00000000b001", ResourceGroupName: "rg",
			Location: "eastus", Version: "v1.31.2"}}
}

// capzCluster is a Cluster in CAPZ's aks shape: infrastructureRef the
// AzureManagedCluster, controlPlaneRef cp (none when cp is "").
func capzCluster(ns, name, cpKind, cp string) *clusterv1.Cluster {
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: clusterv1.ClusterSpec{Paused: ptr.To(false),
		InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: infrav1.AzureManagedClusterKind, Name: name}}}
	if cp != "" {
		c.Spec.ControlPlaneRef = clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: cpKind, Name: cp}
	}
	return c
}

// waitReady polls the AzureManagedCluster until its status.ready is ready
// and its Ready condition has reason and a message containing msg.
func waitReady(t *testing.T, ns, name string, ready bool, reason, msg string) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func() error {
		amc := &infrav1.AzureManagedCluster{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, amc); err != nil {
			return err
		}
		c := condition.Get(amc, clusterv1.ReadyCondition)
		if c == nil {
			return fmt.Errorf("no Ready condition")
		}
		if amc.Status.Ready != ready || c.Status != map[bool]metav1.ConditionStatus{true: metav1.ConditionTrue, false: metav1.ConditionFalse}[ready] ||
			c.Reason != reason || !strings.Contains(c.Message, msg) {
			return fmt.Errorf("ready %v, Ready %s/%s %q; want %v/%s containing %q", amc.Status.Ready, c.Status, c.Reason, c.Message, ready, reason, msg)
		}
		return nil
	})
}

// The AzureManagedCluster is ready once its Cluster's controlPlaneRef names
// an AzureManagedControlPlane that exists, and says what is missing until
// then; the control plane appearing makes it ready without another write.
func TestReadyFromTheClustersControlPlane(t *testing.T) {
	ns := env.NewNamespace(t)
	create(t, &infrav1.AzureManagedCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "aks"}})
	waitReady(t, ns, "aks", false, infrav1.WaitingForClusterReason, "No Cluster in namespace "+ns+" names AzureManagedCluster aks")

	create(t, capzCluster(ns, "aks", "", ""))
	waitReady(t, ns, "aks", false, infrav1.WaitingForControlPlaneRefReason, "Cluster aks has no spec.controlPlaneRef")

	c := &clusterv1.Cluster{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "aks"}, c); err != nil {
		t.Fatal(err)
	}
	before := c.DeepCopy()
	c.Spec.ControlPlaneRef = clusterv1.ContractVersionedObjectReference{APIGroup: "controlplane.cluster.x-k8s.io", Kind: "KubeadmControlPlane", Name: "aks"}
	if err := env.Client.Patch(context.Background(), c, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	waitReady(t, ns, "aks", false, infrav1.WaitingForControlPlaneRefReason, "spec.controlPlaneRef is a KubeadmControlPlane")

	before = c.DeepCopy()
	c.Spec.ControlPlaneRef = clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: infrav1.AzureManagedControlPlaneKind, Name: "aks-cp"}
	if err := env.Client.Patch(context.Background(), c, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	waitReady(t, ns, "aks", false, infrav1.WaitingForControlPlaneRefReason, "AzureManagedControlPlane aks-cp, Cluster aks's spec.controlPlaneRef, does not exist")

	create(t, controlPlane(ns, "aks-cp"))
	waitReady(t, ns, "aks", true, infrav1.ControlPlaneFoundReason, "AzureManagedControlPlane aks-cp")

	// The control plane goes: not ready again, saying so.
	if err := env.Client.Delete(context.Background(), controlPlane(ns, "aks-cp")); err != nil {
		t.Fatal(err)
	}
	waitReady(t, ns, "aks", false, infrav1.WaitingForControlPlaneRefReason, "does not exist")
}

// CAPZ's webhook keeps the endpoint once set; mpool's CRD rules do, saying
// what to do instead.
func TestControlPlaneEndpointRules(t *testing.T) {
	ns := env.NewNamespace(t)
	ctx := context.Background()
	bad := &infrav1.AzureManagedCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "noport"},
		Spec: infrav1.AzureManagedClusterSpec{ControlPlaneEndpoint: clusterv1beta1.APIEndpoint{Host: "aks.example"}}}
	if err := env.Client.Create(ctx, bad); err == nil || !strings.Contains(err.Error(), "spec.controlPlaneEndpoint.port must be between 1 and 65535 when host is set") {
		t.Fatalf("a host without a port: got %v", err)
	}
	amc := &infrav1.AzureManagedCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "aks"},
		Spec: infrav1.AzureManagedClusterSpec{ControlPlaneEndpoint: clusterv1beta1.APIEndpoint{Host: "aks.example", Port: 443}}}
	create(t, amc)
	for _, tc := range []struct {
		name   string
		mutate func(*infrav1.AzureManagedCluster)
		want   string
	}{
		{name: "another host", mutate: func(a *infrav1.AzureManagedCluster) { a.Spec.ControlPlaneEndpoint.Host = "other.example" },
			want: "spec.controlPlaneEndpoint.host is immutable once set"},
		{name: "another port", mutate: func(a *infrav1.AzureManagedCluster) { a.Spec.ControlPlaneEndpoint.Port = 6443 },
			want: "spec.controlPlaneEndpoint.port is immutable once set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A patch: the controller writes the status meanwhile.
			changed := amc.DeepCopy()
			tc.mutate(changed)
			if err := env.Client.Patch(ctx, changed, client.MergeFrom(amc)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
	// An unset endpoint may be filled in, as CAPZ fills it from AKS.
	empty := &infrav1.AzureManagedCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "empty"}}
	create(t, empty)
	filled := empty.DeepCopy()
	filled.Spec.ControlPlaneEndpoint = clusterv1beta1.APIEndpoint{Host: "aks.example", Port: 443}
	if err := env.Client.Patch(ctx, filled, client.MergeFrom(empty)); err != nil {
		t.Fatalf("filling in an unset endpoint: %v", err)
	}
}
