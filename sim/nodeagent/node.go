package nodeagent

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/mpool-dev/mpool/sim/cloudinit"
)

// LeaseNamespace holds the Nodes' heartbeat Leases.
const LeaseNamespace = corev1.NamespaceNodeLease

// SimulatedAnnotation marks Nodes registered by the simulated cloud.
const SimulatedAnnotation = "cloudsim.mpool.dev/simulated"

// register creates the Node (status included: the API server keeps a Node's
// status on create, so this is one request) and its Lease; both are updated
// in place when they already exist, so a retried or resumed join converges.
func (a *Agent) register(ctx context.Context, cs kubernetes.Interface, inst Instance, jc *cloudinit.JoinConfig) error {
	now := a.clock.Now()
	node := buildNode(inst, jc, now)
	created, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	switch {
	case err == nil:
		// The API server's TaintNodesByCondition admission adds
		// node.kubernetes.io/not-ready to every new Node; the node lifecycle
		// controller removes it once the Node is Ready. None runs here, so
		// the simulated cloud plays that part.
		if !equalTaints(created.Spec.Taints, node.Spec.Taints) {
			if created, err = a.setTaints(ctx, cs, node.Name, node.Spec.Taints); err != nil {
				return err
			}
		}
		node = created
	case apierrors.IsAlreadyExists(err):
		meta := map[string]any{
			"metadata": map[string]any{"labels": node.Labels, "annotations": node.Annotations},
			"spec":     map[string]any{"providerID": node.Spec.ProviderID, "taints": nonNil(node.Spec.Taints)},
		}
		b, _ := json.Marshal(meta)
		if _, err := cs.CoreV1().Nodes().Patch(ctx, node.Name, types.MergePatchType, b, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("updating the existing node: %w", err)
		}
		status, _ := json.Marshal(map[string]any{"status": node.Status})
		patched, err := cs.CoreV1().Nodes().PatchStatus(ctx, node.Name, status)
		if err != nil {
			return fmt.Errorf("updating the node's status: %w", err)
		}
		node = patched
	default:
		return fmt.Errorf("creating the node: %w", err)
	}

	a.mu.Lock()
	dur := a.leaseDuration()
	a.mu.Unlock()
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name:      node.Name,
			Namespace: LeaseNamespace,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID,
			}},
		},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(node.Name),
			LeaseDurationSeconds: ptr.To(dur),
			RenewTime:            ptr.To(metav1.NewMicroTime(now)),
		},
	}
	_, err = cs.CoordinationV1().Leases(LeaseNamespace).Create(ctx, lease, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return a.patchLease(ctx, cs, node.Name, dur)
	}
	if err != nil {
		return fmt.Errorf("creating the node lease: %w", err)
	}
	return nil
}

// setTaints replaces the Node's taints (a merge patch replaces lists).
func (a *Agent) setTaints(ctx context.Context, cs kubernetes.Interface, name string, taints []corev1.Taint) (*corev1.Node, error) {
	b, _ := json.Marshal(map[string]any{"spec": map[string]any{"taints": nonNil(taints)}})
	n, err := cs.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, b, metav1.PatchOptions{})
	if err != nil {
		return nil, fmt.Errorf("setting the node's taints: %w", err)
	}
	return n, nil
}

func nonNil(t []corev1.Taint) []corev1.Taint {
	if t == nil {
		return []corev1.Taint{}
	}
	return t
}

func equalTaints(a, b []corev1.Taint) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].MatchTaint(&b[i]) || a[i].Value != b[i].Value {
			return false
		}
	}
	return true
}

func (a *Agent) patchLease(ctx context.Context, cs kubernetes.Interface, name string, dur int32) error {
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{
		"holderIdentity":       name,
		"leaseDurationSeconds": dur,
		"renewTime":            metav1.NewMicroTime(a.clock.Now()),
	}})
	_, err := cs.CoordinationV1().Leases(LeaseNamespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("renewing the node lease: %w", err)
	}
	return nil
}

// renewLease is one heartbeat: a single merge patch of the Lease's renewTime,
// recreating the Lease if someone deleted it.
func (a *Agent) renewLease(ctx context.Context, endpoint, nodeName string, dur int32) error {
	cs, err := a.client(endpoint)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	err = a.patchLease(ctx, cs, nodeName, dur)
	if !apierrors.IsNotFound(err) {
		return err
	}
	_, err = cs.CoordinationV1().Leases(LeaseNamespace).Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: nodeName, Namespace: LeaseNamespace},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(nodeName),
			LeaseDurationSeconds: ptr.To(dur),
			RenewTime:            ptr.To(metav1.NewMicroTime(a.clock.Now())),
		},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("recreating the node lease: %w", err)
	}
	return nil
}

// markNotReady sets the Node's conditions to Unknown the way the node
// lifecycle controller does when a kubelet stops posting status. A Node that
// is already gone needs nothing.
func (a *Agent) markNotReady(ctx context.Context, endpoint, nodeName string) error {
	now := metav1.NewTime(a.clock.Now())
	var conds []corev1.NodeCondition
	for _, t := range []corev1.NodeConditionType{corev1.NodeReady, corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure} {
		conds = append(conds, corev1.NodeCondition{
			Type: t, Status: corev1.ConditionUnknown, LastTransitionTime: now, LastHeartbeatTime: now,
			Reason: "NodeStatusUnknown", Message: "Kubelet stopped posting node status.",
		})
	}
	if err := a.patchConditions(ctx, endpoint, nodeName, conds); err != nil {
		return fmt.Errorf("marking node %s NotReady: %w", nodeName, err)
	}
	return nil
}

// patchConditions sets the Node's conditions of these types (a strategic
// merge patch: conditions merge by type). A Node that is gone needs
// nothing.
func (a *Agent) patchConditions(ctx context.Context, endpoint, nodeName string, conds []corev1.NodeCondition) error {
	cs, err := a.client(endpoint)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": conds}})
	if _, err = cs.CoreV1().Nodes().PatchStatus(ctx, nodeName, patch); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// buildNode is the Node a kubelet started by `kubeadm join` on inst would
// register, with the cloud provider's part (providerID, zone and
// instance-type labels) already done.
func buildNode(inst Instance, jc *cloudinit.JoinConfig, now time.Time) *corev1.Node {
	labels := map[string]string{
		corev1.LabelHostname:   inst.Hostname,
		corev1.LabelOSStable:   "linux",
		corev1.LabelArchStable: "amd64",
	}
	if inst.Zone != "" {
		labels[corev1.LabelTopologyZone] = inst.Zone
	}
	if inst.InstanceType != "" {
		labels[corev1.LabelInstanceTypeStable] = inst.InstanceType
	}
	maps.Copy(labels, jc.NodeLabels)

	cpu := parseQuantity(inst.CPU, "2")
	mem := parseQuantity(inst.Memory, "8Gi")
	resources := corev1.ResourceList{
		corev1.ResourceCPU:              cpu,
		corev1.ResourceMemory:           mem,
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        jc.NodeName,
			Labels:      labels,
			Annotations: map[string]string{SimulatedAnnotation: "true"},
		},
		Spec: corev1.NodeSpec{
			ProviderID: inst.ProviderID,
			Taints:     jc.Taints,
		},
		Status: corev1.NodeStatus{
			Capacity:    resources,
			Allocatable: resources.DeepCopy(),
			Phase:       corev1.NodeRunning,
			Conditions:  nodeConditions(inst.Health, metav1.NewTime(now)),
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: inst.PrivateIP},
				{Type: corev1.NodeHostName, Address: inst.Hostname},
			},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo: corev1.NodeSystemInfo{
				MachineID:               inst.ID,
				SystemUUID:              inst.ID,
				BootID:                  inst.ID,
				KernelVersion:           "6.8.0-cloudsim",
				OSImage:                 osImage(inst.Image),
				ContainerRuntimeVersion: "containerd://2.1.0",
				KubeletVersion:          inst.KubeletVersion,
				OperatingSystem:         "linux",
				Architecture:            "amd64",
			},
		},
	}
}

func osImage(image string) string {
	if image == "" {
		return "Simulated Linux"
	}
	return image
}

func parseQuantity(s, def string) resource.Quantity {
	if q, err := resource.ParseQuantity(s); err == nil {
		return q
	}
	return resource.MustParse(def)
}
