package contract

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mpool-dev/mpool/internal/rollout"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// InstanceState is an instance's lifecycle state in mpool's one vocabulary,
// the same on every provider. The provider's own word for it (Azure's
// provisioningState, Auto Scaling's lifecycle state, EC2's instance state)
// is InstanceView.CloudState.
type InstanceState string

// Instance states.
const (
	// InstancePending: the cloud is creating the instance.
	InstancePending InstanceState = "Pending"
	// InstanceBooting: the instance exists and is booting.
	InstanceBooting InstanceState = "Booting"
	// InstanceRunning: the instance runs.
	InstanceRunning InstanceState = "Running"
	// InstanceFailed: the cloud gave up on the instance.
	InstanceFailed InstanceState = "Failed"
	// InstanceDeleting: the instance is being drained or deleted.
	InstanceDeleting InstanceState = "Deleting"
	// InstanceUnknown: nothing says yet (the engine has not reported the
	// instance).
	InstanceUnknown InstanceState = "Unknown"
)

// InstanceStates are the states an instance can be in, Unknown last.
var InstanceStates = []InstanceState{InstancePending, InstanceBooting, InstanceRunning, InstanceFailed, InstanceDeleting, InstanceUnknown}

// InstanceView is a per-instance object in provider-neutral terms, as
// Reader.ReadInstance reads it.
type InstanceView struct {
	// InstanceID is the instance's ID within its group (spec.instanceID).
	InstanceID string
	// ProviderID is the instance's Node providerID (spec.providerID).
	ProviderID string
	// State is the instance's state; InstanceDeleting as soon as the object
	// is being deleted.
	State InstanceState
	// CloudState is the provider's own word for the state as the object
	// records it (Azure "Succeeded", AWS "InService", EKS "running"), ""
	// when it records none.
	CloudState string
	// Zone is the availability zone the instance runs in, "" when unknown.
	Zone string
	// Ready is true when the instance runs and its Node is Ready.
	Ready bool
	// Reported is true once the engine has written the object's status:
	// before, State is InstanceUnknown and UpToDate is false, although a new
	// instance runs the current model.
	Reported bool
	// UpToDate is true when the instance runs the pool's current model
	// (status.latestModelApplied).
	UpToDate bool
	// Version is the kubelet version of the instance's Node.
	Version string
	// NodeRef references the instance's Node, nil before it joins.
	NodeRef *corev1.ObjectReference
	// FailureReason and FailureMessage say why the instance failed.
	FailureReason, FailureMessage string
	// Conditions are the object's conditions.
	Conditions []metav1.Condition
}

// PoolView is what a pool says in provider-neutral terms, as
// Reader.ReadPool reads it.
type PoolView struct {
	// Rollout is how the pool's instances are replaced.
	Rollout RolloutView
	// ObservedGeneration is the pool generation the engine last reported
	// on (status.observedGeneration).
	ObservedGeneration int64
	// Operation is the long-running operation the pool records (Azure:
	// status.longRunningOperationStates, with its resume token), nil when
	// it records none; the engine hands it to ScaleGroup.Get
	// (scalegroup.WithRecordedOperation).
	Operation *scalegroup.Operation
}

// RolloutView is how a pool rolls: the budgets the engine (or, with
// CloudRollouts, the cloud) keeps when it replaces out-of-date instances.
type RolloutView struct {
	// Strategy is the pool's rolling update budget. Its MinReadySeconds is
	// the pool's own default (AWS's refreshPreferences.instanceWarmup); the
	// MachinePool's spec.template.spec.minReadySeconds, when set, replaces
	// it.
	Strategy rollout.Strategy
	// Source names the fields Strategy comes from and what they mean, for
	// people: "spec.strategy", or "spec.refreshPreferences:
	// minHealthyPercentage 90, maxHealthyPercentage 100 (instance refresh's
	// defaults)".
	Source string
	// CloudRollouts is true when the cloud replaces out-of-date instances
	// itself within Strategy (an EKS node group's updateConfig), so the
	// engine picks no victims for drift.
	CloudRollouts bool
	// SkipModelReconciliation, when not empty, says why the pool keeps its
	// out-of-date instances (AWS: "spec.refreshPreferences.disable is
	// true").
	SkipModelReconciliation string
}

// Live says whether an instance counts as a replica: neither failed nor
// being deleted.
func (v InstanceView) Live() bool {
	return v.State != InstanceFailed && v.State != InstanceDeleting
}
