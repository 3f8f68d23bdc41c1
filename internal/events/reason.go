// Package events holds the reasons of the Kubernetes Events mpool's
// controllers record, in one place so that they stay consistent and
// greppable. Reasons are CamelCase; Warning events are marked as such.
package events

// MachinePool lifecycle.
const (
	// PhaseChanged: a MachinePool moved to another phase (message: from and to).
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
	// BootstrapReady: the bootstrap data became available.
	BootstrapReady = "BootstrapReady"
	// InfrastructureReady: the infrastructure pool became ready.
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
	// MachineCreated: a pool Machine was created for an infrastructure machine.
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
