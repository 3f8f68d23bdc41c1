package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MachinePhase is a coarse summary of where a Machine is in its lifecycle.
type MachinePhase string

// Machine phases, as Cluster API spells them.
const (
	// MachinePhasePending is the first phase of a new Machine.
	MachinePhasePending = MachinePhase("Pending")
	// MachinePhaseProvisioning: the bootstrap data is ready and the infrastructure is being created.
	MachinePhaseProvisioning = MachinePhase("Provisioning")
	// MachinePhaseProvisioned: the infrastructure exists and the Node has not joined yet.
	MachinePhaseProvisioned = MachinePhase("Provisioned")
	// MachinePhaseRunning: the Node has joined.
	MachinePhaseRunning = MachinePhase("Running")
	// MachinePhaseDeleting: the Machine is being deleted.
	MachinePhaseDeleting = MachinePhase("Deleting")
	// MachinePhaseDeleted: the Machine's infrastructure and Node are gone.
	MachinePhaseDeleted = MachinePhase("Deleted")
	// MachinePhaseFailed: a terminal failure needs user intervention.
	MachinePhaseFailed = MachinePhase("Failed")
	// MachinePhaseUnknown: the phase cannot be determined.
	MachinePhaseUnknown = MachinePhase("Unknown")
)

// MachineAddress is an address of a machine.
type MachineAddress struct {
	// Type of the address: Hostname, ExternalIP, InternalIP, ExternalDNS or InternalDNS.
	// +required
	// +kubebuilder:validation:Enum=Hostname;ExternalIP;InternalIP;ExternalDNS;InternalDNS
	Type string `json:"type"`

	// Address is the address itself.
	// +required
	Address string `json:"address"`
}

// MachineStatus is the observed state of a Machine.
type MachineStatus struct {
	// NodeRef is a reference to the Machine's Node in the workload cluster.
	// +optional
	NodeRef *corev1.ObjectReference `json:"nodeRef,omitempty"`

	// NodeInfo is a copy of the Node's system information.
	// +optional
	NodeInfo *corev1.NodeSystemInfo `json:"nodeInfo,omitempty"`

	// LastUpdated is when the phase last changed.
	// +optional
	LastUpdated *metav1.Time `json:"lastUpdated,omitempty"`

	// Version is the Kubernetes version the Node runs.
	// +optional
	Version *string `json:"version,omitempty"`

	// FailureReason is set on a terminal problem, as a succinct machine-readable value.
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`

	// FailureMessage is set on a terminal problem, as a human-readable message.
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`

	// Addresses are the machine's addresses, as reported by the infrastructure provider.
	// +optional
	Addresses []MachineAddress `json:"addresses,omitempty"`

	// Phase is a coarse summary of the Machine's lifecycle.
	// +optional
	Phase string `json:"phase,omitempty"`

	// CertificatesExpiryDate is when the machine's certificates expire (control plane
	// machines only).
	// +optional
	CertificatesExpiryDate *metav1.Time `json:"certificatesExpiryDate,omitempty"`

	// BootstrapReady is true when the bootstrap data is ready.
	// +optional
	BootstrapReady bool `json:"bootstrapReady"`

	// InfrastructureReady is true when the infrastructure object is ready.
	// +optional
	InfrastructureReady bool `json:"infrastructureReady"`

	// ObservedGeneration is the latest generation the controller observed.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions are the observations of the Machine's current state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Deletion holds timestamps of the deletion steps, while the Machine is being deleted.
	// +optional
	Deletion *MachineDeletionStatus `json:"deletion,omitempty"`
}

// MachineDeletionStatus records when the deletion steps of a Machine started.
type MachineDeletionStatus struct {
	// NodeDrainStartTime is when draining the Node started.
	// +optional
	NodeDrainStartTime *metav1.Time `json:"nodeDrainStartTime,omitempty"`

	// WaitForNodeVolumeDetachStartTime is when waiting for volumes to detach started.
	// +optional
	WaitForNodeVolumeDetachStartTime *metav1.Time `json:"waitForNodeVolumeDetachStartTime,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=machines,shortName=ma,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.clusterName",description="Cluster"
// +kubebuilder:printcolumn:name="NodeName",type="string",JSONPath=".status.nodeRef.name",description="Node name of the Machine"
// +kubebuilder:printcolumn:name="ProviderID",type="string",JSONPath=".spec.providerID",description="Provider ID"
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase",description="Machine phase"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".spec.version",description="Kubernetes version"

// Machine is one machine of a cluster. mpool creates one per instance of a MachinePool,
// owned by the pool and labelled with cluster.x-k8s.io/pool-name.
type Machine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	// +kubebuilder:validation:XValidation:rule="self.clusterName == oldSelf.clusterName",message="clusterName is immutable",fieldPath=".clusterName"
	Spec MachineSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status MachineStatus `json:"status,omitempty"`
}

// GetConditions returns the Machine's conditions.
func (m *Machine) GetConditions() []metav1.Condition { return m.Status.Conditions }

// SetConditions replaces the Machine's conditions.
func (m *Machine) SetConditions(c []metav1.Condition) { m.Status.Conditions = c }

// +kubebuilder:object:root=true

// MachineList is a list of Machines.
type MachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Machines.
	Items []Machine `json:"items"`
}
