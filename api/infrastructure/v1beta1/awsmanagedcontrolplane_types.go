package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kinds and finalizers of the EKS part of the API.
const (
	// AWSManagedControlPlaneKind is the kind of an EKS cluster's control plane.
	AWSManagedControlPlaneKind = "AWSManagedControlPlane"
	// AWSManagedMachinePoolMachineFinalizer is added to AWSManagedMachinePoolMachines.
	AWSManagedMachinePoolMachineFinalizer = "awsmanagedmachinepoolmachine.infrastructure.cluster.x-k8s.io"
)

// AWSManagedControlPlaneSpec names an EKS cluster that exists: mpool manages its
// managed node groups (AWSManagedMachinePools) and never creates, changes or deletes
// the cluster itself. It is the subset of CAPA's AWSManagedControlPlane that places a
// node group.
type AWSManagedControlPlaneSpec struct {
	// EKSClusterName is the EKS cluster's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=100
	// +kubebuilder:validation:Pattern=`^[0-9A-Za-z][A-Za-z0-9\-_]*$`
	EKSClusterName string `json:"eksClusterName"`

	// Region is the AWS region the cluster runs in.
	// +required
	// +kubebuilder:validation:MinLength=1
	Region string `json:"region"`

	// Version is the cluster's Kubernetes version (v1.31 or 1.31; a patch is ignored, as
	// EKS versions are minor versions). mpool reads it; it does not upgrade the cluster.
	// +optional
	// +kubebuilder:validation:Pattern=`^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))?$`
	Version *string `json:"version,omitempty"`

	// IdentityRef names the credentials the node groups are reached with: an
	// AWSClusterStaticIdentity, or AWSClusterControllerIdentity (or unset) for the
	// manager's own.
	// +optional
	IdentityRef *AWSIdentityReference `json:"identityRef,omitempty"`
}

// AWSManagedControlPlaneStatus is the observed state of an AWSManagedControlPlane.
type AWSManagedControlPlaneStatus struct {
	// Ready is true when the EKS cluster is active.
	// +optional
	Ready bool `json:"ready"`
	// Conditions are the observations of the control plane's current state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=awsmanagedcontrolplanes,shortName=awsmcp,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.eksClusterName",description="EKS cluster"
// +kubebuilder:printcolumn:name="Region",type="string",JSONPath=".spec.region",description="AWS region"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"

// AWSManagedControlPlane names an existing EKS cluster for the AWSManagedMachinePools of
// its Cluster, which names it as its spec.infrastructureRef. CAPA serves this kind in
// controlplane.cluster.x-k8s.io, where it also creates the cluster; mpool serves the
// subset that places node groups, in the infrastructure group its engine reads
// placements from.
type AWSManagedControlPlane struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec AWSManagedControlPlaneSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status AWSManagedControlPlaneStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// AWSManagedControlPlaneList is a list of AWSManagedControlPlanes.
type AWSManagedControlPlaneList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the control planes.
	Items []AWSManagedControlPlane `json:"items"`
}

// AWSManagedMachinePoolMachineSpec is the desired state of one node of an EKS managed
// node group.
type AWSManagedMachinePoolMachineSpec struct {
	// ProviderID is the instance's providerID (aws:///<az>/<instance-id>); it matches its
	// Node's spec.providerID.
	// +required
	// +kubebuilder:validation:MinLength=1
	ProviderID string `json:"providerID"`

	// InstanceID is the EC2 instance ID (i-...).
	// +optional
	InstanceID string `json:"instanceID,omitempty"`
}

// AWSManagedMachinePoolMachineStatus is the observed state of one node of an EKS
// managed node group.
type AWSManagedMachinePoolMachineStatus struct {
	// NodeRef is a reference to the instance's Node.
	// +optional
	NodeRef *corev1.ObjectReference `json:"nodeRef,omitempty"`
	// Version is the Kubernetes version the instance runs.
	// +optional
	Version string `json:"version,omitempty"`
	// State is the instance's EC2 state (pending, running, shutting-down).
	// +optional
	State string `json:"state,omitempty"`
	// AvailabilityZone of the instance.
	// +optional
	AvailabilityZone string `json:"availabilityZone,omitempty"`
	// LatestModelApplied is true when the instance runs the node group's current
	// release (Kubernetes version, AMI release version and launch template version).
	// +optional
	LatestModelApplied bool `json:"latestModelApplied"`
	// Ready is true when the instance is running and its Node is Ready.
	// +optional
	Ready bool `json:"ready"`
	// FailureReason is set on a terminal problem, as a succinct machine-readable value.
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`
	// FailureMessage is set on a terminal problem, as a human-readable message.
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`
	// Conditions are the observations of the instance's current state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=awsmanagedmachinepoolmachines,shortName=awsmmpm,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".status.version",description="Kubernetes version"
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready",description="Instance is ready"
// +kubebuilder:printcolumn:name="State",type="string",JSONPath=".status.state",description="EC2 state"
// +kubebuilder:printcolumn:name="LatestModel",type="boolean",JSONPath=".status.latestModelApplied",description="Instance runs the node group's current release"
// +kubebuilder:printcolumn:name="ProviderID",type="string",priority=1,JSONPath=".spec.providerID",description="Provider ID"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"

// AWSManagedMachinePoolMachine is one node of an AWSManagedMachinePool's EKS managed
// node group. EKS replaces and drains a node group's nodes itself; deleting this object
// drains and removes that one node. CAPA has no per-instance kind for managed node
// groups; mpool's engine reports every pool's instances this way.
type AWSManagedMachinePoolMachine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec AWSManagedMachinePoolMachineSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status AWSManagedMachinePoolMachineStatus `json:"status,omitempty"`
}

// GetConditions returns the instance's conditions.
func (m *AWSManagedMachinePoolMachine) GetConditions() []metav1.Condition {
	return m.Status.Conditions
}

// SetConditions replaces the instance's conditions.
func (m *AWSManagedMachinePoolMachine) SetConditions(c []metav1.Condition) { m.Status.Conditions = c }

// +kubebuilder:object:root=true

// AWSManagedMachinePoolMachineList is a list of AWSManagedMachinePoolMachines.
type AWSManagedMachinePoolMachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the instances.
	Items []AWSManagedMachinePoolMachine `json:"items"`
}

func init() {
	SchemeBuilder.Register(&AWSManagedControlPlane{}, &AWSManagedControlPlaneList{},
		&AWSManagedMachinePoolMachine{}, &AWSManagedMachinePoolMachineList{})
}
