package v1beta1

import (
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Kinds of the per-instance infra machines, reported in status.infrastructureMachineKind.
const (
	// AzureMachinePoolMachineKind is the kind of an Azure pool's per-instance objects.
	AzureMachinePoolMachineKind = "AzureMachinePoolMachine"
	// LocalMachinePoolMachineKind is the kind of a local pool's per-instance objects.
	LocalMachinePoolMachineKind = "LocalMachinePoolMachine"
)

// Finalizers of the infra pools.
const (
	// AzureMachinePoolFinalizer is added to AzureMachinePools.
	AzureMachinePoolFinalizer = "azuremachinepool.infrastructure.cluster.x-k8s.io"
	// AzureMachinePoolMachineFinalizer is added to AzureMachinePoolMachines.
	AzureMachinePoolMachineFinalizer = "azuremachinepoolmachine.infrastructure.cluster.x-k8s.io"
	// AWSMachinePoolFinalizer is added to AWSMachinePools.
	AWSMachinePoolFinalizer = "awsmachinepool.infrastructure.cluster.x-k8s.io"
	// AWSMachinePoolMachineFinalizer is added to AWSMachinePoolMachines.
	AWSMachinePoolMachineFinalizer = "awsmachinepoolmachine.infrastructure.cluster.x-k8s.io"
	// AWSManagedMachinePoolFinalizer is added to AWSManagedMachinePools.
	AWSManagedMachinePoolFinalizer = "awsmanagedmachinepools.infrastructure.cluster.x-k8s.io"
	// LocalMachinePoolFinalizer is added to LocalMachinePools.
	LocalMachinePoolFinalizer = "localmachinepool.infrastructure.cluster.x-k8s.io"
	// LocalMachinePoolMachineFinalizer is added to LocalMachinePoolMachines.
	LocalMachinePoolMachineFinalizer = "localmachinepoolmachine.infrastructure.cluster.x-k8s.io"
)

// MachinePoolDeploymentStrategyType is the kind of rollout strategy.
// +kubebuilder:validation:Enum=RollingUpdate
type MachinePoolDeploymentStrategyType string

const (
	// RollingUpdateMachinePoolDeploymentStrategyType replaces out-of-date instances
	// progressively, within the surge and unavailability budgets.
	RollingUpdateMachinePoolDeploymentStrategyType MachinePoolDeploymentStrategyType = "RollingUpdate"
)

// DeletePolicyType says which instances are deleted first when a pool shrinks or rolls.
// +kubebuilder:validation:Enum=Random;Newest;Oldest
type DeletePolicyType string

const (
	// OldestDeletePolicyType deletes the oldest instances first.
	OldestDeletePolicyType DeletePolicyType = "Oldest"
	// NewestDeletePolicyType deletes the newest instances first.
	NewestDeletePolicyType DeletePolicyType = "Newest"
	// RandomDeletePolicyType deletes instances in random order.
	RandomDeletePolicyType DeletePolicyType = "Random"
)

// MachinePoolDeploymentStrategy is how a pool replaces out-of-date instances. Azure and
// local pools share it; mpool's rollout engine gives it the same meaning on every cloud.
type MachinePoolDeploymentStrategy struct {
	// Type of the strategy. Only RollingUpdate is supported (the default).
	// +optional
	// +kubebuilder:default=RollingUpdate
	Type MachinePoolDeploymentStrategyType `json:"type,omitempty"`

	// RollingUpdate holds the rolling update parameters.
	// +optional
	// +kubebuilder:default={deletePolicy: Oldest, maxSurge: 1, maxUnavailable: 0}
	RollingUpdate *MachineRollingUpdateDeployment `json:"rollingUpdate,omitempty"`
}

// MachineRollingUpdateDeployment holds the rolling update budgets of a pool.
// +kubebuilder:validation:XValidation:rule="!(has(self.maxSurge) && has(self.maxUnavailable) && string(self.maxSurge) in ['0', '0%'] && string(self.maxUnavailable) in ['0', '0%'])",message="maxSurge and maxUnavailable must not both be zero",fieldPath=".maxUnavailable"
type MachineRollingUpdateDeployment struct {
	// MaxUnavailable is how many instances may be unavailable during a rollout: a
	// non-negative integer or a percentage ("25%") of desired replicas, rounded down.
	// Defaults to 0. It must not be 0 when maxSurge is 0.
	// +optional
	// +kubebuilder:default=0
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')",message="maxUnavailable must be a non-negative integer or a percentage from 0% to 100%"
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// MaxSurge is how many instances may be created above the desired replicas during a
	// rollout: a non-negative integer or a percentage ("25%") of desired replicas, rounded
	// up. Defaults to 1.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')",message="maxSurge must be a non-negative integer or a percentage from 0% to 100%"
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`

	// DeletePolicy orders the instances to delete among equals: Oldest (default),
	// Newest or Random.
	// +optional
	// +kubebuilder:default=Oldest
	DeletePolicy DeletePolicyType `json:"deletePolicy,omitempty"`
}

// Tags are cloud resource tags.
type Tags map[string]string
