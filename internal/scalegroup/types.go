package scalegroup

import (
	"context"
	"time"
)

// ScaleGroup is a cloud's scale group API: an Azure Virtual Machine Scale Set,
// an AWS Auto Scaling Group, an EKS managed node group, or a group in the
// simulated cloud. The infra pool engine is its only caller; it plans every
// change itself (rollout.Plan) and uses ScaleGroup to observe and act.
//
// A group is addressed by a Ref: its name, which the caller chooses, and
// where it lives (scope, location, credentials). Names are predictable
// (derived from the pool), so a crash half-way through creating a group cannot
// leak it: the next reconcile finds it by name. Names must be valid DNS-1123
// subdomains; providers may impose shorter limits.
//
// Every method is safe to call again with the same arguments (idempotent) and
// safe for concurrent use. Errors that callers branch on are typed; test them
// with IsNotFound, IsThrottled, IsQuotaExceeded, IsTransient and IsInvalid.
// Wrapping an error with fmt.Errorf("...: %w", err) keeps it testable.
type ScaleGroup interface {
	// Get returns the group and all of its instances in one call: a reconcile
	// costs one read. It is the single source of truth a caller resumes from
	// after a restart; nothing the caller remembers is needed to continue.
	//
	// Instances being created or deleted are included, with their State. A
	// long-running change (see Apply) is reported in Group.Operation.
	//
	// It returns a NotFound error when no group has this name (including a
	// group whose deletion has completed).
	Get(ctx context.Context, ref Ref) (*Group, error)

	// Apply creates the group, or updates its model and capacity, so that it
	// matches spec. It is idempotent: applying the spec the group already has
	// changes nothing and starts no operation.
	//
	// A model change does not touch existing instances: they keep the model
	// they were created from (Instance.ModelHash) until the caller deletes
	// them; instances created afterwards use the new model. The cloud adds or
	// removes instances to reach spec.Capacity. When it removes instances the
	// cloud picks the victims; callers that want to choose (and drain first)
	// call DeleteInstances instead of lowering the capacity.
	//
	// Apply may return before the change has finished (Azure long-running
	// operations, AWS instance refreshes): the returned Group then has a
	// non-nil Operation and instances in state Creating. Callers do not wait;
	// they call Get on a later reconcile. Applying again while an operation is
	// in progress is allowed and converges on the latest spec.
	//
	// Errors: QuotaExceeded when the capacity cannot be granted, Invalid for a
	// spec the cloud rejects, Throttled and Transient for retryable failures.
	Apply(ctx context.Context, ref Ref, spec GroupSpec) (*Group, error)

	// DeleteInstances deletes exactly the instances with these IDs and lowers
	// the group's capacity by the number of instances it deleted, so they are
	// not replaced (the VMSS "delete instances" and ASG "terminate instance and
	// decrement desired capacity" calls). Instances that are already gone or
	// already deleting are not an error and do not lower the capacity again.
	// A group that does not exist has no instances, so this returns nil. An
	// empty ids list is a no-op.
	//
	// Deletion may complete asynchronously: the instances are reported in
	// state Deleting until they are gone.
	DeleteInstances(ctx context.Context, ref Ref, ids []string) error

	// Capabilities says what the cloud does by itself, which changes how the
	// engine drives the group. It does no I/O and returns the same value
	// every time.
	Capabilities() Capabilities

	// Delete destroys the group and all of its instances. It returns nil once
	// the deletion has been accepted; the group may still be returned by Get
	// (with a Delete operation) until it is gone. A group that does not exist
	// is already deleted: Delete returns nil.
	Delete(ctx context.Context, ref Ref) error
}

// Capabilities are what a cloud does by itself.
type Capabilities struct {
	// CloudRollouts: the cloud replaces out-of-date instances itself when
	// the group's model changes, within its own budget, draining them as it
	// goes — an EKS managed node group launches new nodes and cordons and
	// drains old ones within its updateConfig.maxUnavailable — and on a
	// capacity decrease it picks the instances to remove and drains them.
	// Such a group may not offer DeleteInstances for arbitrary instances.
	//
	// The engine then never picks victims for drift or excess: it applies
	// the desired model and the desired replicas as the capacity (no surge),
	// one change at a time (never while Group.Operation is in progress), and
	// observes, reporting the cloud's progress (Group.Operation,
	// Group.Message) and each instance's drift (Instance.ModelHash).
	// Instances a user marks for deletion are still deleted through
	// DeleteInstances.
	CloudRollouts bool
	// ReplaceInstances: the group implements Replacer, terminating chosen
	// instances that it then replaces itself, its capacity unchanged — an
	// EKS managed node group's Auto Scaling group does, where DeleteInstances
	// is refused (see CloudRollouts). The engine remediates an unhealthy
	// instance of such a group with ReplaceInstances, after draining it.
	ReplaceInstances bool
}

// Replacer is the call of a ScaleGroup whose Capabilities say
// ReplaceInstances. Decorators of a ScaleGroup implement it too and
// forward it; callers check Capabilities first.
type Replacer interface {
	// ReplaceInstances terminates exactly the instances with these IDs
	// without lowering the group's capacity, so that the cloud launches
	// their replacements from the group's current model (the ASG's
	// "terminate instance without decrementing desired capacity").
	// Instances that are already gone or already leaving are not an error
	// and are not terminated again; a group that does not exist has no
	// instances, so this returns nil; an empty ids list is a no-op.
	// Termination may complete asynchronously: the instances are reported
	// in state Deleting until they are gone.
	ReplaceInstances(ctx context.Context, ref Ref, ids []string) error
}

// GroupSpec is the desired state of a group.
type GroupSpec struct {
	// Capacity is the desired number of instances, including instances that
	// are booting or failed, excluding instances being deleted.
	Capacity int32
	// Model is what new instances are created from.
	Model Model
	// ModelHash identifies Model. The caller computes it over every field that
	// changes what an instance is and nothing else (not the bootstrap token
	// in CustomData, which rotates; not Tags or InPlace, which the cloud
	// applies in place). The cloud records it for every instance it creates
	// from the model (see "Carrying the model hash" in the package doc), so
	// drift is a string comparison.
	ModelHash string
}

// Model is the instance model of a group: the launch template, VMSS model or
// simulated instance definition. The fields every cloud has are typed here;
// what only one cloud has travels in Provider and InPlace, as values of
// types the provider's package declares.
type Model struct {
	// InstanceType is the size (Standard_D4s_v5, m5.large, ...).
	InstanceType string
	// Image is the OS image reference.
	Image string
	// Zones are the availability zones instances are spread across, balanced.
	// Empty means the cloud's default placement.
	Zones []string
	// Version is the Kubernetes version the instances run (the MachinePool's
	// spec.template.spec.version), "" when unset. Clouds that pick an image
	// by version (EKS, AMI lookup) read it; every cloud hashes it.
	Version string
	// CustomData is the bootstrap data (cloud-init) every new instance runs at
	// first boot. Its content is part of the model hash with bootstrap
	// tokens masked: a changed KubeadmConfig rolls the pool, a rotated token
	// does not. Never log it: it holds a bootstrap token.
	CustomData []byte
	// Tags are applied to the group and its instances, in place.
	Tags map[string]string
	// Provider is the provider's own part of the model: a value of a struct
	// type its package declares (Azure: disks, NICs, identity, spot,
	// extensions, security profile; AWS: the launch template's fields). Every
	// field changes what an instance is: the model hash covers its JSON
	// encoding, so it must encode deterministically (structs, slices and
	// maps of plain values). Only the provider's ScaleGroup reads it; nil
	// when the provider has nothing of its own.
	Provider any
	// InPlace is the provider's settings that the cloud applies to the group
	// without replacing instances (the simulated cloud's boot delays, a
	// scale set's upgrade policy): a value of a type the provider's package
	// declares, not part of the model hash. nil when there are none.
	InPlace any
}

// Group is the observed state of a scale group.
type Group struct {
	// Name is the group's name.
	Name string
	// Capacity is the group's current desired capacity.
	Capacity int32
	// ModelHash is the hash of the group's current model, as last applied.
	ModelHash string
	// Instances are all instances of the group, including those being created
	// or deleted, ordered by ID.
	Instances []Instance
	// Operation is the long-running change in progress, nil when the group is
	// at rest.
	Operation *Operation
	// Message is the cloud's note on the group when something is wrong with
	// it: why its last change failed (an EKS update's errors, such as
	// PodEvictionFailure), its health issues. Empty when all is well.
	Message string
	// Failed: the cloud gave up on the group's last change (an AKS agent
	// pool in provisioningState Failed, an upgrade AKS could not finish),
	// and Message says why. The group is at rest and serves, but not as
	// last applied. The engine applies the same spec again with backoff,
	// recorded on the pool so that a restarted manager keeps it, and at
	// once when the spec changes; Apply on a Failed group always sends
	// the change again (the engine calls it only when a retry is due).
	Failed bool
	// Template is the cloud object the group launches new instances from
	// (AWS: its launch template and version), nil when the cloud has none
	// or did not say.
	Template *TemplateRef
}

// TemplateRef names the cloud object instances are launched from, as the
// cloud names it: an AWS launch template's ID and version number. The
// engine only passes it on, to the adapter's status.
type TemplateRef struct {
	// ID is the template's ID (lt-0123...).
	ID string
	// Version is the template's version ("3").
	Version string
}

// Pending reports whether a long-running operation is in progress.
func (g *Group) Pending() bool { return g != nil && g.Operation != nil }

// Operation describes a long-running change of a group.
type Operation struct {
	// ID identifies the operation at the cloud.
	ID string
	// Type says what is being done: OperationScale, OperationUpdate or
	// OperationDelete (providers may report others).
	Type string
	// StartedAt is when the cloud started the operation.
	StartedAt time.Time
	// Message is the cloud's description of the operation's progress.
	Message string
	// ResumeToken is the cloud's handle on the operation, opaque to the
	// engine, which records it on the pool (Azure: a poller's resume token,
	// kept in status.longRunningOperationStates as CAPZ does); "" when the
	// cloud offers none or the operation was started by another client.
	ResumeToken string
}

type recordedKey struct{}

// WithRecordedOperation returns ctx carrying op, the long-running
// operation the pool recorded from an earlier Get or Apply (its
// ResumeToken): the engine passes it to Get, so that a provider whose
// operations outlive the process that started them (Azure's pollers) can
// follow, after a restart, the operation it started, as CAPZ resumes a
// future kept in status. Get must not need it: without it the group is
// read as usual.
func WithRecordedOperation(ctx context.Context, op Operation) context.Context {
	return context.WithValue(ctx, recordedKey{}, op)
}

// RecordedOperation is the operation WithRecordedOperation put in ctx.
func RecordedOperation(ctx context.Context) (Operation, bool) {
	op, ok := ctx.Value(recordedKey{}).(Operation)
	return op, ok
}

// Operation types.
const (
	// OperationScale: instances are being created or deleted.
	OperationScale = "Scale"
	// OperationUpdate: the group's model is being updated.
	OperationUpdate = "Update"
	// OperationDelete: the group is being deleted.
	OperationDelete = "Delete"
)

// Instance is one member of a group.
type Instance struct {
	// ID is the instance's ID within the group; it is never reused.
	ID string
	// ProviderID is the Node's spec.providerID once the instance joins
	// (azure:///..., aws:///zone/i-..., local:///<group>/<id>).
	ProviderID string
	// Zone is the availability zone the instance runs in.
	Zone string
	// State is the instance's lifecycle state.
	State InstanceState
	// CreatedAt is when the cloud created the instance.
	CreatedAt time.Time
	// ModelHash is the GroupSpec.ModelHash of the model the instance was
	// created from.
	ModelHash string
	// Message says why an instance failed, or why a running instance has not
	// joined the cluster; empty when there is nothing to say.
	Message string
	// Held is true while the cloud holds the instance before it boots,
	// waiting for an action outside the engine: an AWS launch lifecycle
	// hook's Pending:Wait, which lasts up to the hook's heartbeat timeout
	// (two hours at most). The engine's join timeout does not run while an
	// instance is held.
	Held bool
	// Template is what the instance was launched from (AWS: its launch
	// template and version), nil when the cloud does not say.
	Template *TemplateRef
}

// InstanceState is the lifecycle state of an instance as the cloud sees it.
// Whether its Node has joined and is Ready is the workload cluster's business.
type InstanceState string

// Instance states.
const (
	// StateCreating: the cloud accepted the instance and is provisioning it.
	StateCreating InstanceState = "Creating"
	// StateBooting: the instance is powered on and booting.
	StateBooting InstanceState = "Booting"
	// StateRunning: the instance booted; its bootstrap data is running.
	StateRunning InstanceState = "Running"
	// StateFailed: provisioning or boot failed; the instance will not recover
	// and still counts towards the capacity until it is deleted.
	StateFailed InstanceState = "Failed"
	// StateDeleting: the instance is being deleted.
	StateDeleting InstanceState = "Deleting"
)
