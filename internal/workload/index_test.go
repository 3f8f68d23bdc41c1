package workload

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

func TestIndexFuncs(t *testing.T) {
	owner := Owner{ClusterName: "c1", Namespace: "ns", Kind: "MachinePool", Name: "mp"}
	tests := []struct {
		name      string
		node      *corev1.Node
		wantPID   []string
		wantOwner []string
	}{
		{
			name: "a bare Node is in neither index",
			node: &corev1.Node{},
		},
		{
			name:    "providerID is indexed as is",
			node:    &corev1.Node{Spec: corev1.NodeSpec{ProviderID: "azure:///a/b"}},
			wantPID: []string{"azure:///a/b"},
		},
		{
			name:      "complete owner annotations index the owner",
			node:      &corev1.Node{ObjectMeta: metav1.ObjectMeta{Annotations: owner.Annotations()}},
			wantOwner: []string{"ns/MachinePool/mp"},
		},
		{
			name: "partial owner annotations do not: another tool may have set one of them",
			node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
				clusterv1.OwnerNameAnnotation: "mp", clusterv1.OwnerKindAnnotation: "MachinePool"}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := providerIDIndexFunc(tc.node); !slices.Equal(got, tc.wantPID) {
				t.Errorf("providerID index = %v, want %v", got, tc.wantPID)
			}
			if got := ownerIndexFunc(tc.node); !slices.Equal(got, tc.wantOwner) {
				t.Errorf("owner index = %v, want %v", got, tc.wantOwner)
			}
		})
	}
}

func TestOwnerRoundTrip(t *testing.T) {
	o := Owner{ClusterName: "c1", Namespace: "ns", Kind: "MachinePool", Name: "mp"}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Annotations: o.Annotations()}}
	got, ok := OwnerOf(n)
	if !ok || got != o {
		t.Fatalf("OwnerOf = %+v, %v; want %+v", got, ok, o)
	}
	if !o.OwnedBy(n) {
		t.Fatal("OwnedBy = false for the owner's own annotations")
	}
	other := o
	other.Namespace = "ns2"
	if other.OwnedBy(n) {
		t.Fatal("a pool of the same name in another namespace must not own the Node")
	}
}

func TestNodeChanged(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	base := func() *corev1.Node {
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "n", UID: "u1", Labels: map[string]string{"a": "b"}},
			Spec:       corev1.NodeSpec{ProviderID: "p1"},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: t0, LastHeartbeatTime: t0,
			}}},
		}
	}
	tests := []struct {
		name   string
		mutate func(n *corev1.Node)
		want   bool
	}{
		{name: "no change", mutate: func(*corev1.Node) {}, want: false},
		{name: "heartbeat only: the bulk of Node updates, must be dropped", mutate: func(n *corev1.Node) {
			n.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(t0.Add(time.Minute))
			n.ResourceVersion = "2"
		}, want: false},
		{name: "ready flips", mutate: func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }, want: true},
		{name: "ready transition time moves (flapped between events)", mutate: func(n *corev1.Node) {
			n.Status.Conditions[0].LastTransitionTime = metav1.NewTime(t0.Add(time.Second))
		}, want: true},
		{name: "ready condition appears", mutate: func(n *corev1.Node) { n.Status.Conditions = nil }, want: true},
		{name: "providerID set", mutate: func(n *corev1.Node) { n.Spec.ProviderID = "p2" }, want: true},
		{name: "taint removed", mutate: func(n *corev1.Node) {
			n.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
		}, want: true},
		{name: "annotated", mutate: func(n *corev1.Node) { n.Annotations = map[string]string{"x": "y"} }, want: true},
		{name: "cordoned", mutate: func(n *corev1.Node) { n.Spec.Unschedulable = true }, want: true},
		{name: "recreated with the same name", mutate: func(n *corev1.Node) { n.UID = "u2" }, want: true},
		{name: "deleting", mutate: func(n *corev1.Node) { n.DeletionTimestamp = &t0 }, want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, n := base(), base()
			tc.mutate(n)
			if got := NodeChanged(o, n); got != tc.want {
				t.Errorf("NodeChanged = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestConnectionError(t *testing.T) {
	err := fmt.Errorf("reconciling: %w", &ConnectionError{
		Cluster: types.NamespacedName{Namespace: "ns", Name: "c"}, Reason: ReasonUnreachable, Err: errors.New("dial tcp: refused")})
	if !IsConnectionError(err) || !errors.Is(err, ErrClusterNotConnected) {
		t.Fatalf("IsConnectionError(%v) = false", err)
	}
	if got := ConnectionErrorReason(err); got != ReasonUnreachable {
		t.Fatalf("reason = %q", got)
	}
	if IsConnectionError(errors.New("other")) || ConnectionErrorReason(errors.New("other")) != "" {
		t.Fatal("an unrelated error must not be a connection error")
	}
}

func TestOldest(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Second))
	nodes := []*corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "c", CreationTimestamp: t1}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b", CreationTimestamp: t0}},
		{ObjectMeta: metav1.ObjectMeta{Name: "a", CreationTimestamp: t1}},
	}
	if got := oldestOf(nodes).Name; got != "b" {
		t.Fatalf("oldest = %s, want b", got)
	}
	nodes[1].CreationTimestamp = t1
	if got := oldestOf(nodes).Name; got != "a" {
		t.Fatalf("oldest among equals = %s, want a (by name)", got)
	}
}
