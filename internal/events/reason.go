// Package events holds the reasons and actions of the Kubernetes Events
// mpool's controllers record, in one place so that they stay consistent and
// greppable. Every controller records through the events.k8s.io recorder
// (k8s.io/client-go/tools/events: regarding object, reason, action, note).
// Reasons are CamelCase; Warning events are marked as such.
package events

// MachinePool lifecycle.
const (
	// PhaseChanged: a MachinePool moved to another phase (message: from and
	// to, and the bootstrap data or the infrastructure pool when their
	// becoming ready moved it: then no BootstrapReady or InfrastructureReady
	// event of their own is recorded). A new pool's first phase, Pending, is
	// not recorded.
	PhaseChanged = "PhaseChanged"
	// ScalingUp: a MachinePool started scaling up (message: from and to).
	ScalingUp = "ScalingUp"
	// ScalingDown: a MachinePool started scaling down (message: from and to).
	ScalingDown = "ScalingDown"
	// ReplicasDefaulted: spec.replicas was unset and the controller set it.
	ReplicasDefaulted = "ReplicasDefaulted"
	// ReplicasSynced: spec.replicas was taken from the infrastructure pool
	// because an external actor manages replicas.
	ReplicasSynced = "ReplicasSynced"
	// BootstrapReady: the bootstrap data became available without moving the
	// phase (otherwise PhaseChanged tells it).
	BootstrapReady = "BootstrapReady"
	// InfrastructureReady: the infrastructure pool became ready without moving
	// the phase (otherwise PhaseChanged tells it).
	InfrastructureReady = "InfrastructureReady"
	// Failed (Warning): a referenced object reports a terminal failure.
	Failed = "Failed"
	// ExternalObjectNotFound (Warning): a referenced bootstrap or
	// infrastructure object does not exist.
	ExternalObjectNotFound = "ExternalObjectNotFound"
	// WorkloadClusterUnreachable (Warning): the workload cluster could not be
	// reached.
	WorkloadClusterUnreachable = "WorkloadClusterUnreachable"
)

// Nodes and pool Machines.
const (
	// NodeDeleted: a Node whose instance left the pool was deleted.
	NodeDeleted = "NodeDeleted"
	// NodeDeleteFailed (Warning): deleting a Node failed.
	NodeDeleteFailed = "NodeDeleteFailed"
	// NodeRefsTruncated: a pool has more Nodes than status.nodeRefs lists
	// (machinepool.MaxNodeRefs).
	NodeRefsTruncated = "NodeRefsTruncated"
	// MachineCreated: pool Machines were created for infrastructure machines
	// (one event per reconcile, naming the first few).
	MachineCreated = "MachineCreated"
	// MachineDeleted: a pool Machine whose infrastructure machine is gone was
	// deleted, or its deletion finished.
	MachineDeleted = "MachineDeleted"
	// InfrastructureMachineDeleted: the infrastructure machine of a deleted pool
	// Machine was deleted.
	InfrastructureMachineDeleted = "InfrastructureMachineDeleted"
)

// MachinePool deletion steps.
const (
	// DeletingBootstrapConfig: the bootstrap config of a deleted pool was deleted.
	DeletingBootstrapConfig = "DeletingBootstrapConfig"
	// DeletingInfrastructure: the infrastructure pool of a deleted pool was deleted.
	DeletingInfrastructure = "DeletingInfrastructure"
	// DeletingMachines: the Machines of a deleted pool were deleted.
	DeletingMachines = "DeletingMachines"
	// DeletingNodes: the Nodes of a deleted pool are being deleted.
	DeletingNodes = "DeletingNodes"
	// NodeDeletionTimedOut (Warning): the Nodes of a deleted pool could not be
	// deleted within the node deletion timeout; they are left behind.
	NodeDeletionTimedOut = "NodeDeletionTimedOut"
	// Deleted: a MachinePool finished deleting and its finalizer was removed.
	Deleted = "Deleted"
)

// Cluster.
const (
	// ControlPlaneReachable: a Cluster's workload API server answered.
	ControlPlaneReachable = "ControlPlaneReachable"
	// ControlPlaneUnreachable (Warning): a Cluster's workload API server
	// could not be reached.
	ControlPlaneUnreachable = "ControlPlaneUnreachable"
)

// KubeadmConfig, on the config (event notes name token Secrets at most,
// never a token).
const (
	// DataSecretCreated: the bootstrap data Secret was rendered.
	DataSecretCreated = "DataSecretCreated"
	// DataSecretRerendered: the data Secret no longer carried the token it
	// was annotated with and was rendered again.
	DataSecretRerendered = "DataSecretRerendered"
	// DataSecretUpdated: the data Secret was rendered again because the
	// KubeadmConfig or an input it renders from changed; the token it
	// carried was kept. The note says whether the content changed (the pool
	// rolls) or only a token the user sets.
	DataSecretUpdated = "DataSecretUpdated"
	// UnsupportedFormat (Warning): the config asks for a format mpool cannot
	// render.
	UnsupportedFormat = "UnsupportedFormat"
	// BootstrapTokenRotated: the data Secret switched to a new token.
	BootstrapTokenRotated = "BootstrapTokenRotated"
	// BootstrapTokenReplaced (Warning): the token Secret had disappeared from
	// the workload cluster and a new token took its place.
	BootstrapTokenReplaced = "BootstrapTokenReplaced"
	// BootstrapTokenCleanupSkipped (Warning): the config was deleted without
	// deleting its tokens because the workload cluster is gone or
	// unreachable.
	BootstrapTokenCleanupSkipped = "BootstrapTokenCleanupSkipped"
)

// The rollout engine (internal/controller/infrapool), on the infra pool
// unless said otherwise.
const (
	// ScaleGroupApplied: the group was created or its model or capacity
	// changed.
	ScaleGroupApplied = "ScaleGroupApplied"
	// ScaleGroupChangeFailed (Warning): the cloud gave up on the group's
	// last change (scalegroup.Group.Failed); once per failure, saying why
	// and when the engine applies the group again.
	ScaleGroupChangeFailed = "ScaleGroupChangeFailed"
	// ScaleGroupDeleting: the group's deletion was requested.
	ScaleGroupDeleting = "ScaleGroupDeleting"
	// ScaleGroupDeleted: the group is gone and the pool released.
	ScaleGroupDeleted = "ScaleGroupDeleted"
	// QuotaExceeded (Warning): the cloud refused the capacity.
	QuotaExceeded = "QuotaExceeded"
	// InvalidSpec (Warning): the cloud (or the adapter) rejected the pool's
	// spec.
	InvalidSpec = "InvalidSpec"
	// CredentialsRejected (Warning): the cloud refused the credentials the
	// pool's scale group is reached with.
	CredentialsRejected = "CredentialsRejected"
	// Throttled (Warning): the cloud throttled a request.
	Throttled = "Throttled"
	// DrainStarted: instances are being removed (on the pool, once per
	// reconcile) and an instance's Node is cordoned and drained (on its
	// per-instance object).
	DrainStarted = "DrainStarted"
	// DrainTimeout (Warning): a drain did not finish within
	// nodeDrainTimeout; the instance is deleted anyway (also on the
	// per-instance object).
	DrainTimeout = "DrainTimeout"
	// DrainBlocked (Warning): a rollout's drain did not finish within
	// nodeDrainTimeout and the pool's undrainable-node behavior is Schedule:
	// the instance is kept, its Node made schedulable again and the rollout
	// paused (also on the per-instance object).
	DrainBlocked = "DrainBlocked"
	// NodeQuarantined (Warning): a rollout's drain did not finish within
	// nodeDrainTimeout and the pool's undrainable-node behavior is Cordon:
	// the instance is kept with its Node cordoned and labelled, and the
	// rollout goes on without it (also on the per-instance object).
	NodeQuarantined = "NodeQuarantined"
	// DrainFailed (Warning): a drain pass failed and will be retried.
	DrainFailed = "DrainFailed"
	// InstancesDeleted: instances were deleted from the cloud.
	InstancesDeleted = "InstancesDeleted"
	// NodeStartupTimeout (Warning): an instance has not joined the cluster
	// within the join timeout and is replaced (also on the per-instance
	// object).
	NodeStartupTimeout = "NodeStartupTimeout"
	// Remediating (Warning): a MachineHealthCheck found an instance
	// unhealthy; the engine drains and deletes it and the pool replaces it
	// (also on the per-instance object).
	Remediating = "Remediating"
	// RemediationDeferred: an unhealthy instance waits because the pool's
	// cap on remediations in flight is reached (also on the per-instance
	// object).
	RemediationDeferred = "RemediationDeferred"
	// RolloutBlocked (Warning): the cloud refuses to create instances from
	// the pool's new model; no instance is deleted for it.
	RolloutBlocked = "RolloutBlocked"
	// ProgressDeadlineExceeded (Warning): no new-model instance became
	// available within the pool's progress deadline; the engine paused the
	// rollout.
	ProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	// ReplacementsFailing (Warning): consecutive new-model instances failed;
	// the engine paused the rollout.
	ReplacementsFailing = "ReplacementsFailing"
	// RolloutResumed: a rollout the engine had paused itself goes on (the
	// pool's template changed, or the pause was lifted).
	RolloutResumed = "RolloutResumed"
	// RolledBack (Warning): a rollout stopped and the engine restored the
	// previous revision itself (mpool.dev/auto-rollback).
	RolledBack = "RolledBack"
	// BlueGreen: a blue-green rollout entered a phase (creating the green
	// set, cordoning, draining and soaking the blue one, deleting it, or
	// rolling back), or ended; the message names the phase and models.
	BlueGreen = "BlueGreen"
)

// Event actions (the events.k8s.io "action" field: what was being done).
const (
	// ActionReconcile: observing and reporting an object's state.
	ActionReconcile = "Reconcile"
	// ActionCreate: creating an object or a cloud resource.
	ActionCreate = "Create"
	// ActionDelete: deleting an object or a cloud resource.
	ActionDelete = "Delete"
	// ActionScale: changing a replica count.
	ActionScale = "Scale"
	// ActionApply: applying a scale group's model and capacity.
	ActionApply = "Apply"
	// ActionDrain: cordoning and draining a Node.
	ActionDrain = "Drain"
	// ActionObserve: reading a cloud resource.
	ActionObserve = "Observe"
	// ActionRotate: replacing a bootstrap token.
	ActionRotate = "Rotate"
	// ActionRender: rendering bootstrap data.
	ActionRender = "Render"
)
