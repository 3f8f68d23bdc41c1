package v1beta1

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LocalInstanceState is the lifecycle state of a simulated instance.
type LocalInstanceState string

// Simulated instance states.
const (
	// LocalInstancePending: the instance is being created.
	LocalInstancePending LocalInstanceState = "Pending"
	// LocalInstanceBooting: the instance exists and is booting.
	LocalInstanceBooting LocalInstanceState = "Booting"
	// LocalInstanceRunning: the instance is running.
	LocalInstanceRunning LocalInstanceState = "Running"
	// LocalInstanceFailed: the instance failed to boot.
	LocalInstanceFailed LocalInstanceState = "Failed"
	// LocalInstanceDeleting: the instance is being deleted.
	LocalInstanceDeleting LocalInstanceState = "Deleting"
)

// LocalMachinePoolSpec is the desired state of a LocalMachinePool: one scale group of the
// simulated cloud.
type LocalMachinePoolSpec struct {
	// ProviderIDList holds the providerID of every instance of the group.
	// +optional
	// +kubebuilder:validation:MaxItems=10000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	ProviderIDList []string `json:"providerIDList,omitempty"`

	// Template is the model of every instance of the group.
	// +optional
	Template LocalMachinePoolMachineTemplate `json:"template,omitempty"`

	// Strategy is how instances are replaced when the model changes.
	// +optional
	// +kubebuilder:default={type: RollingUpdate, rollingUpdate: {deletePolicy: Oldest, maxSurge: 1, maxUnavailable: 0}}
	Strategy MachinePoolDeploymentStrategy `json:"strategy,omitempty"`

	// Simulation tunes how the simulated cloud behaves for this group.
	// +optional
	Simulation *LocalSimulation `json:"simulation,omitempty"`
}

// LocalMachinePoolMachineTemplate is the model of the instances of a simulated group.
type LocalMachinePoolMachineTemplate struct {
	// InstanceType is a free-form instance size, for example small.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	InstanceType string `json:"instanceType,omitempty"`

	// Image is a free-form image name.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Image string `json:"image,omitempty"`

	// Zones the instances are spread across.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=63
	Zones []string `json:"zones,omitempty"`
}

// LocalSimulation tunes the simulated cloud.
type LocalSimulation struct {
	// BootDelay is how long an instance takes from creation to running.
	// +optional
	BootDelay *metav1.Duration `json:"bootDelay,omitempty"`

	// BootJitter is a random extra delay, up to this long, added to BootDelay.
	// +optional
	BootJitter *metav1.Duration `json:"bootJitter,omitempty"`

	// FailureRate is the probability, a decimal from 0 to 1 such as "0.05", that a new
	// instance fails to boot.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.matches('^(0(\\\\.[0-9]+)?|1(\\\\.0+)?)$')",message="failureRate must be a decimal from 0 to 1, such as \"0.05\""
	// +kubebuilder:validation:MaxLength=20
	FailureRate *string `json:"failureRate,omitempty"`
}

// FailureRateValue returns FailureRate as a float64 (0 when unset).
func (s *LocalSimulation) FailureRateValue() (float64, error) {
	if s == nil || s.FailureRate == nil {
		return 0, nil
	}
	f, err := strconv.ParseFloat(*s.FailureRate, 64)
	if err != nil {
		return 0, fmt.Errorf("parsing failureRate %q: %w", *s.FailureRate, err)
	}
	if f < 0 || f > 1 {
		return 0, fmt.Errorf("failureRate %q is outside [0, 1]", *s.FailureRate)
	}
	return f, nil
}

// LocalMachinePoolInstanceStatus is the status of one simulated instance.
type LocalMachinePoolInstanceStatus struct {
	// InstanceID of the instance within the group.
	// +optional
	InstanceID string `json:"instanceID,omitempty"`
	// ProviderID of the instance.
	// +optional
	ProviderID string `json:"providerID,omitempty"`
	// Zone the instance runs in.
	// +optional
	Zone string `json:"zone,omitempty"`
	// State of the instance.
	// +optional
	State LocalInstanceState `json:"state,omitempty"`
	// Ready is true when the instance runs and its Node is Ready.
	// +optional
	Ready bool `json:"ready"`
	// LatestModelApplied is true when the instance runs the group's current model.
	// +optional
	LatestModelApplied bool `json:"latestModelApplied"`
	// ModelHash is the hash of the model the instance was created from.
	// +optional
	ModelHash string `json:"modelHash,omitempty"`
}

// LocalMachinePoolStatus is the observed state of a LocalMachinePool.
type LocalMachinePoolStatus struct {
	// Ready is true when the simulated group exists.
	// +optional
	Ready bool `json:"ready"`
	// Replicas is the number of instances in the group.
	// +optional
	Replicas int32 `json:"replicas"`
	// Instances holds the status of each instance.
	// +optional
	Instances []LocalMachinePoolInstanceStatus `json:"instances,omitempty"`
	// ModelHash is the hash of the group's current instance model.
	// +optional
	ModelHash string `json:"modelHash,omitempty"`
	// FailureReason is set on a terminal problem, as a succinct machine-readable value.
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`
	// FailureMessage is set on a terminal problem, as a human-readable message.
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`
	// Conditions are the observations of the pool's current state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the latest generation the controller observed.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// InfrastructureMachineKind is the kind of the per-instance objects
	// (LocalMachinePoolMachine).
	// +optional
	InfrastructureMachineKind string `json:"infrastructureMachineKind,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=localmachinepools,shortName=lmp,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".status.replicas",description="Number of instances"
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready",description="Group is ready"
// +kubebuilder:printcolumn:name="InstanceType",type="string",JSONPath=".spec.template.instanceType",description="Instance type"
// +kubebuilder:printcolumn:name="Image",type="string",priority=1,JSONPath=".spec.template.image",description="Image"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"

// LocalMachinePool is a scale group of mpool's simulated cloud backing a MachinePool.
type LocalMachinePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec LocalMachinePoolSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status LocalMachinePoolStatus `json:"status,omitempty"`
}

// GetConditions returns the pool's conditions.
func (p *LocalMachinePool) GetConditions() []metav1.Condition { return p.Status.Conditions }

// SetConditions replaces the pool's conditions.
func (p *LocalMachinePool) SetConditions(c []metav1.Condition) { p.Status.Conditions = c }

// +kubebuilder:object:root=true

// LocalMachinePoolList is a list of LocalMachinePools.
type LocalMachinePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the pools.
	Items []LocalMachinePool `json:"items"`
}

// LocalMachinePoolMachineSpec is the desired state of one simulated instance.
type LocalMachinePoolMachineSpec struct {
	// ProviderID is the instance's providerID; it matches its Node's spec.providerID.
	// +required
	// +kubebuilder:validation:MinLength=1
	ProviderID string `json:"providerID"`

	// InstanceID is the instance's ID within the group.
	// +optional
	InstanceID string `json:"instanceID,omitempty"`
}

// LocalMachinePoolMachineStatus is the observed state of one simulated instance.
type LocalMachinePoolMachineStatus struct {
	// Ready is true when the instance runs and its Node is Ready.
	// +optional
	Ready bool `json:"ready"`
	// LatestModelApplied is true when the instance runs the group's current model.
	// +optional
	LatestModelApplied bool `json:"latestModelApplied"`
	// Zone the instance runs in.
	// +optional
	Zone string `json:"zone,omitempty"`
	// State of the instance.
	// +optional
	State LocalInstanceState `json:"state,omitempty"`
	// Version is the Kubernetes version the instance's Node runs.
	// +optional
	Version string `json:"version,omitempty"`
	// NodeRef is a reference to the instance's Node.
	// +optional
	NodeRef *corev1.ObjectReference `json:"nodeRef,omitempty"`
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
// +kubebuilder:resource:path=localmachinepoolmachines,shortName=lmpm,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Zone",type="string",JSONPath=".status.zone",description="Zone"
// +kubebuilder:printcolumn:name="State",type="string",JSONPath=".status.state",description="Instance state"
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready",description="Instance is ready"
// +kubebuilder:printcolumn:name="LatestModel",type="boolean",JSONPath=".status.latestModelApplied",description="Instance runs the current model"
// +kubebuilder:printcolumn:name="ProviderID",type="string",priority=1,JSONPath=".spec.providerID",description="Provider ID"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time since creation"

// LocalMachinePoolMachine is one instance of a LocalMachinePool. Deleting it drains and
// deletes that instance.
type LocalMachinePoolMachine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec LocalMachinePoolMachineSpec `json:"spec,omitempty"`
	// Status is the observed state.
	Status LocalMachinePoolMachineStatus `json:"status,omitempty"`
}

// GetConditions returns the machine's conditions.
func (m *LocalMachinePoolMachine) GetConditions() []metav1.Condition { return m.Status.Conditions }

// SetConditions replaces the machine's conditions.
func (m *LocalMachinePoolMachine) SetConditions(c []metav1.Condition) { m.Status.Conditions = c }

// +kubebuilder:object:root=true

// LocalMachinePoolMachineList is a list of LocalMachinePoolMachines.
type LocalMachinePoolMachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the machines.
	Items []LocalMachinePoolMachine `json:"items"`
}
