package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
)

// AzureManagedClusterKind is the kind of an AKS Cluster's infrastructure object in
// CAPZ's shape, where the Cluster's controlPlaneRef is the AzureManagedControlPlane.
const AzureManagedClusterKind = "AzureManagedCluster"

// Reasons of an AzureManagedCluster's Ready condition, which reports whether the
// AzureManagedControlPlane it belongs to (its Cluster's spec.controlPlaneRef) exists.
const (
	// ControlPlaneFoundReason: the Cluster's controlPlaneRef names an
	// AzureManagedControlPlane that exists.
	ControlPlaneFoundReason = "ControlPlaneFound"
	// WaitingForClusterReason: no Cluster names the object as its infrastructureRef
	// (yet).
	WaitingForClusterReason = "WaitingForCluster"
	// WaitingForControlPlaneRefReason: the Cluster's controlPlaneRef is not set, or not
	// of the kind that places the pools, or the object it names does not exist (yet).
	WaitingForControlPlaneRefReason = "WaitingForControlPlaneRef"
)

// AzureManagedClusterSpec is the desired state of an AzureManagedCluster, CAPZ's v1beta1
// shape: the AKS cluster itself is named by the Cluster's controlPlaneRef, an
// AzureManagedControlPlane.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.controlPlaneEndpoint) || !has(oldSelf.controlPlaneEndpoint.host) || size(oldSelf.controlPlaneEndpoint.host) == 0 || (has(self.controlPlaneEndpoint) && has(self.controlPlaneEndpoint.host) && self.controlPlaneEndpoint.host == oldSelf.controlPlaneEndpoint.host)",message="spec.controlPlaneEndpoint.host is immutable once set: the AKS cluster's API server does not move; create a new AzureManagedCluster instead",fieldPath=".controlPlaneEndpoint.host"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.controlPlaneEndpoint) || !has(oldSelf.controlPlaneEndpoint.port) || oldSelf.controlPlaneEndpoint.port == 0 || (has(self.controlPlaneEndpoint) && has(self.controlPlaneEndpoint.port) && self.controlPlaneEndpoint.port == oldSelf.controlPlaneEndpoint.port)",message="spec.controlPlaneEndpoint.port is immutable once set: the AKS cluster's API server does not move; create a new AzureManagedCluster instead",fieldPath=".controlPlaneEndpoint.port"
type AzureManagedClusterSpec struct {
	// ControlPlaneEndpoint is the endpoint of the AKS cluster's API server. CAPZ fills it
	// in from AKS after creating the cluster; mpool, which creates no AKS cluster, keeps
	// what is written. Immutable once set.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.host) || size(self.host) == 0 || (has(self.port) && self.port > 0 && self.port <= 65535)",message="spec.controlPlaneEndpoint.port must be between 1 and 65535 when host is set (AKS serves 443)",fieldPath=".port"
	ControlPlaneEndpoint clusterv1.APIEndpoint `json:"controlPlaneEndpoint"`
}

// AzureManagedClusterStatus is the observed state of an AzureManagedCluster.
type AzureManagedClusterStatus struct {
	// Ready is true when the Cluster's controlPlaneRef names an AzureManagedControlPlane
	// that exists: the agent pools can be placed (CAPZ's v1beta1 field, which Cluster
	// API's v1beta1 contract reads).
	// +optional
	Ready bool `json:"ready,omitempty"`
	// Conditions are the observations of the object's current state: Ready says why it
	// is not ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=azuremanagedclusters,shortName=amc,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels.cluster\\.x-k8s\\.io/cluster-name",description="Cluster to which this AzureManagedCluster belongs"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.ready"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"

// AzureManagedCluster is an AKS Cluster's infrastructure object in CAPZ's shape: the
// Cluster names it as its spec.infrastructureRef and the AzureManagedControlPlane,
// which names the AKS cluster, as its spec.controlPlaneRef. mpool provisions nothing
// for it: it is ready once that AzureManagedControlPlane exists.
type AzureManagedCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec AzureManagedClusterSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status AzureManagedClusterStatus `json:"status,omitempty"`
}

// GetConditions returns the object's conditions.
func (c *AzureManagedCluster) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions replaces the object's conditions.
func (c *AzureManagedCluster) SetConditions(conds []metav1.Condition) { c.Status.Conditions = conds }

// +kubebuilder:object:root=true

// AzureManagedClusterList is a list of AzureManagedClusters.
type AzureManagedClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the objects.
	Items []AzureManagedCluster `json:"items"`
}

func init() {
	SchemeBuilder.Register(&AzureManagedCluster{}, &AzureManagedClusterList{})
}
