package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MachinePoolPhase is a coarse summary of where a MachinePool is in its lifecycle.
type MachinePoolPhase string

// MachinePool phases, as Cluster API spells them.
const (
	// MachinePoolPhasePending is the first phase of a new MachinePool.
	MachinePoolPhasePending = MachinePoolPhase("Pending")

	// MachinePoolPhaseProvisioning: the bootstrap data is ready and the infrastructure is
	// being created.
	MachinePoolPhaseProvisioning = MachinePoolPhase("Provisioning")

	// MachinePoolPhaseProvisioned: the infrastructure exists but not all Nodes are ready.
	MachinePoolPhaseProvisioned = MachinePoolPhase("Provisioned")

	// MachinePoolPhaseRunning: as many Nodes are ready as replicas are desired.
	MachinePoolPhaseRunning = MachinePoolPhase("Running")

	// MachinePoolPhaseScalingUp: fewer replicas exist than desired.
	MachinePoolPhaseScalingUp = MachinePoolPhase("ScalingUp")

	// MachinePoolPhaseScalingDown: more replicas exist than desired.
	MachinePoolPhaseScalingDown = MachinePoolPhase("ScalingDown")

	// MachinePoolPhaseScaling: the replica count is changing in an unknown direction.
	MachinePoolPhaseScaling = MachinePoolPhase("Scaling")

	// MachinePoolPhaseDeleting: the MachinePool is being deleted.
	MachinePoolPhaseDeleting = MachinePoolPhase("Deleting")

	// MachinePoolPhaseFailed: a terminal failure needs user intervention.
	MachinePoolPhaseFailed = MachinePoolPhase("Failed")

	// MachinePoolPhaseUnknown: the phase cannot be determined.
	MachinePoolPhaseUnknown = MachinePoolPhase("Unknown")
)

// MachinePoolSpec is the desired state of a MachinePool.
// +kubebuilder:validation:XValidation:rule="!has(self.template.spec) || !has(self.template.spec.clusterName) || self.template.spec.clusterName == self.clusterName",message="template.spec.clusterName must match clusterName",fieldPath=".template.spec.clusterName"
type MachinePoolSpec struct {
	// ClusterName is the name of the Cluster this pool belongs to. Immutable.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="clusterName is immutable"
	ClusterName string `json:"clusterName"`

	// Replicas is the number of desired instances. When unset the controller defaults it
	// from the cluster autoscaler's min-size annotation, or to 1.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`

	// Template describes the instances of the pool.
	// +required
	Template MachineTemplateSpec `json:"template"`

	// MinReadySeconds is how long a new instance's Node must be Ready before the instance
	// counts as available. Defaults to 0.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`

	// ProviderIDList holds a providerID for each instance the infrastructure provider
	// currently manages for this pool.
	// +optional
	// +kubebuilder:validation:MaxItems=10000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	ProviderIDList []string `json:"providerIDList,omitempty"`

	// FailureDomains is the list of failure domains this pool's instances may be placed in.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	FailureDomains []string `json:"failureDomains,omitempty"`
}

// MachinePoolStatus is the observed state of a MachinePool.
type MachinePoolStatus struct {
	// NodeRefs holds a reference to the Node of each providerID in spec.providerIDList
	// that has joined the workload cluster.
	// +optional
	NodeRefs []corev1.ObjectReference `json:"nodeRefs,omitempty"`

	// Replicas is the most recently observed number of instances.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// ReadyReplicas is the number of instances whose Node is Ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`

	// AvailableReplicas is the number of instances ready for at least minReadySeconds.
	// +optional
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`

	// UnavailableReplicas is the number of instances still needed for the pool to have
	// 100% available capacity: running but not yet available, or not yet created.
	// +optional
	UnavailableReplicas int32 `json:"unavailableReplicas,omitempty"`

	// FailureReason is set on a terminal problem, as a succinct machine-readable value.
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`

	// FailureMessage is set on a terminal problem, as a human-readable message.
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`

	// Phase is a coarse summary of the pool's lifecycle: Pending, Provisioning,
	// Provisioned, Running, ScalingUp, ScalingDown, Scaling, Deleting, Failed or Unknown.
	// +optional
	Phase string `json:"phase,omitempty"`

	// BootstrapReady is true when the bootstrap provider's data is ready.
	// +optional
	BootstrapReady bool `json:"bootstrapReady"`

	// InfrastructureReady is true when the infrastructure provider's pool is ready.
	// +optional
	InfrastructureReady bool `json:"infrastructureReady"`

	// ObservedGeneration is the latest generation the controller observed.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions are the observations of the pool's current state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// SetTypedPhase sets Phase from a MachinePoolPhase.
func (s *MachinePoolStatus) SetTypedPhase(p MachinePoolPhase) { s.Phase = string(p) }

// GetTypedPhase returns Phase as a MachinePoolPhase; an unrecognised value is Unknown.
func (s *MachinePoolStatus) GetTypedPhase() MachinePoolPhase {
	switch p := MachinePoolPhase(s.Phase); p {
	case MachinePoolPhasePending, MachinePoolPhaseProvisioning, MachinePoolPhaseProvisioned,
		MachinePoolPhaseRunning, MachinePoolPhaseScalingUp, MachinePoolPhaseScalingDown,
		MachinePoolPhaseScaling, MachinePoolPhaseDeleting, MachinePoolPhaseFailed:
		return p
	default:
		return MachinePoolPhaseUnknown
	}
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=machinepools,shortName=mp,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.clusterName",description="Cluster"
// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".spec.replicas",description="Desired number of replicas"
// +kubebuilder:printcolumn:name="Ready",type="integer",JSONPath=".status.readyReplicas",description="Number of ready replicas"
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase",description="MachinePool phase"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".spec.template.spec.version",description="Kubernetes version"

// MachinePool is a group of machines managed as one by an infrastructure provider's scale
// group.
type MachinePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec MachinePoolSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status MachinePoolStatus `json:"status,omitempty"`
}

// GetConditions returns the pool's conditions.
func (m *MachinePool) GetConditions() []metav1.Condition { return m.Status.Conditions }

// SetConditions replaces the pool's conditions.
func (m *MachinePool) SetConditions(c []metav1.Condition) { m.Status.Conditions = c }

// +kubebuilder:object:root=true

// MachinePoolList is a list of MachinePools.
type MachinePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the MachinePools.
	Items []MachinePool `json:"items"`
}
