package workload

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTrimNodeKeepsWhatMpoolReads(t *testing.T) {
	ready := corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: "n", Labels: map[string]string{"l": "v"}, Annotations: map[string]string{"a": "v"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}},
		},
		Spec: corev1.NodeSpec{ProviderID: "local:///g/1", Unschedulable: true, Taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{
			Phase:       corev1.NodeRunning,
			Conditions:  []corev1.NodeCondition{ready},
			NodeInfo:    corev1.NodeSystemInfo{KubeletVersion: "v1.31.0", KernelVersion: "6.1", MachineID: "m"},
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
			Images:      []corev1.ContainerImage{{Names: []string{"registry.k8s.io/pause:3.10"}, SizeBytes: 1 << 20}},
			Addresses:   []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}},
		},
	}
	out, err := trimNode(n)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Node)
	if got.ManagedFields != nil {
		t.Error("managed fields kept")
	}
	if got.Labels["l"] != "v" || got.Annotations["a"] != "v" || got.Spec.ProviderID != "local:///g/1" || !got.Spec.Unschedulable || len(got.Spec.Taints) != 1 {
		t.Errorf("metadata or spec changed: %+v %+v", got.ObjectMeta, got.Spec)
	}
	if len(got.Status.Conditions) != 1 || got.Status.Conditions[0] != ready || got.Status.NodeInfo.KubeletVersion != "v1.31.0" || got.Status.Phase != corev1.NodeRunning {
		t.Errorf("conditions, phase or kubelet version lost: %+v", got.Status)
	}
	if got.Status.Images != nil || got.Status.Capacity != nil || got.Status.Allocatable != nil || got.Status.Addresses != nil || got.Status.NodeInfo.KernelVersion != "" {
		t.Errorf("unread status kept: %+v", got.Status)
	}
	if out, err := trimNode(&corev1.Secret{}); err != nil || out == nil {
		t.Errorf("another kind: %v, %v", out, err)
	}
}
