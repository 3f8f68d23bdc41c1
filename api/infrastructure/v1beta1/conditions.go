package v1beta1

// This file is the one home of the condition types and reasons mpool sets
// on its infrastructure kinds (every infra pool and per-instance kind). The
// CLI, the engine and the providers use these names; other tools can import
// them. Provider-specific aliases (CAPZ's ScaleSetRunning, CAPA's ASGReady)
// are declared beside their kinds.

// Condition types shared by the infra pools. Ready (core's ReadyCondition) summarises them.
const (
	// ScaleGroupReadyCondition reports whether the cloud scale group (VMSS, ASG, node
	// group, simulated group) exists and is usable.
	ScaleGroupReadyCondition = "ScaleGroupReady"
	// ScaleGroupModelUpdatedCondition reports whether every instance runs the pool's
	// current instance model.
	ScaleGroupModelUpdatedCondition = "ScaleGroupModelUpdated"
	// ScaleGroupDesiredReplicasCondition reports whether the group has the desired number
	// of instances.
	ScaleGroupDesiredReplicasCondition = "ScaleGroupDesiredReplicas"
	// BootstrapSucceededCondition reports whether an instance's bootstrap succeeded.
	BootstrapSucceededCondition = "BootstrapSucceeded"
	// DrainingSucceededCondition reports whether draining an instance's Node succeeded.
	DrainingSucceededCondition = "DrainingSucceeded"
	// InstanceReadyCondition reports whether an instance is running and its Node is Ready.
	InstanceReadyCondition = "InstanceReady"
)

// Condition reasons shared by the infra pools.
const (
	// ScaleGroupNotFoundReason: the scale group does not exist (yet).
	ScaleGroupNotFoundReason = "ScaleGroupNotFound"
	// ScaleGroupProvisionFailedReason: creating or updating the scale group failed.
	ScaleGroupProvisionFailedReason = "ScaleGroupProvisionFailed"
	// ScaleGroupModelOutOfDateReason: some instances run an older model.
	ScaleGroupModelOutOfDateReason = "ScaleGroupModelOutOfDate"
	// ScaleGroupScaleUpReason: the group is adding instances.
	ScaleGroupScaleUpReason = "ScaleGroupScaleUp"
	// ScaleGroupScaleDownReason: the group is removing instances.
	ScaleGroupScaleDownReason = "ScaleGroupScaleDown"
	// ScaleGroupDeletingReason: the group is being deleted.
	ScaleGroupDeletingReason = "ScaleGroupDeleting"
	// WaitingForBootstrapDataReason: the MachinePool's bootstrap data is not ready.
	WaitingForBootstrapDataReason = "WaitingForBootstrapData"
	// ThrottledReason: the cloud API throttled the provider.
	ThrottledReason = "Throttled"
	// DrainingReason: an instance's Node is being drained.
	DrainingReason = "Draining"
	// DrainingFailedReason: draining an instance's Node failed.
	DrainingFailedReason = "DrainingFailed"
	// InstanceFailedReason: the cloud reports the instance failed.
	InstanceFailedReason = "InstanceFailed"
	// InstanceProvisioningReason: the instance is still being created.
	InstanceProvisioningReason = "InstanceProvisioning"
)

// RolloutProgressingCondition is True while the pool moves towards its
// desired state (creating, replacing or removing instances), with the
// planner's reasons for waiting, and False once it has converged or while
// the rollout is paused.
const RolloutProgressingCondition = "RolloutProgressing"

// RemediatingCondition is True while instances a MachineHealthCheck found
// unhealthy are being replaced or wait for the pool's cap on remediations in
// flight (reason Remediating, the message naming them and why), False
// otherwise (reason NotRemediating), as upstream's MachineSet Remediating
// condition.
const RemediatingCondition = "Remediating"

// More condition reasons of the infra pools and their per-instance objects.
const (
	// WaitingForOwnerReason: the pool has no owner MachinePool yet.
	WaitingForOwnerReason = "WaitingForMachinePool"
	// WorkloadClusterUnreachableReason: the workload cluster's Nodes cannot be
	// read, so nothing is deleted or created.
	WorkloadClusterUnreachableReason = "WorkloadClusterUnreachable"
	// InvalidSpecReason: the spec cannot be mapped or the cloud rejects it.
	InvalidSpecReason = "InvalidSpec"
	// ConvergedReason: the rollout is complete.
	ConvergedReason = "Converged"
	// ProgressingReason: instances are being created or removed.
	ProgressingReason = "Progressing"
	// WaitingForNodeReason: a running instance's Node has not joined.
	WaitingForNodeReason = "WaitingForNode"
	// NodeNotReadyReason: an instance's Node is not Ready.
	NodeNotReadyReason = "NodeNotReady"
	// DrainedReason: the instance's Node was drained.
	DrainedReason = "Drained"
	// DrainTimeoutReason: the drain did not finish within nodeDrainTimeout.
	DrainTimeoutReason = "DrainTimeout"
	// NodeStartupTimeoutReason: the instance has not joined the cluster
	// within the engine's join timeout and is being replaced.
	NodeStartupTimeoutReason = "NodeStartupTimeout"
	// QuotaExceededReason: the cloud refused the group's capacity for quota.
	QuotaExceededReason = "QuotaExceeded"
	// CredentialsRejectedReason: the cloud refused the credentials the
	// group is reached with.
	CredentialsRejectedReason = "CredentialsRejected"
	// ScaleGroupProblemReason: the cloud reports a problem with the group
	// (a failed update, health issues); the message is the cloud's.
	ScaleGroupProblemReason = "ScaleGroupProblem"
	// CloudRolloutReason: the cloud is replacing out-of-date instances
	// itself (scalegroup.Capabilities.CloudRollouts).
	CloudRolloutReason = "CloudRollout"
)

// WaitingForInfrastructureClusterReason: the pool's scale group cannot be
// placed until the Cluster names its infrastructure object and that
// object exists.
const WaitingForInfrastructureClusterReason = "WaitingForInfrastructureCluster"

// Reasons of RolloutProgressing=False while a rollout cannot or may not go
// on. The instances on the previous model keep serving and none more is
// deleted for the new model.
const (
	// RolloutBlockedReason: the cloud refuses to create instances from the
	// pool's new model (an image it cannot find, a launch template it
	// rejects); nothing is deleted for that model until it is fixed.
	RolloutBlockedReason = "RolloutBlocked"
	// ProgressDeadlineExceededReason: no instance of the new model became
	// available, and no old instance was replaced, within the pool's
	// progress deadline; the engine paused the rollout itself.
	ProgressDeadlineExceededReason = "ProgressDeadlineExceeded"
	// ReplacementsFailingReason: consecutive instances of the new model
	// failed (did not boot, or never joined the cluster); the engine paused
	// the rollout itself.
	ReplacementsFailingReason = "ReplacementsFailing"
	// DrainBlockedReason: a Node being drained for the rollout was not
	// drained within nodeDrainTimeout (a PodDisruptionBudget refuses the
	// evictions) and the pool's undrainable-node behavior is Schedule: the
	// engine kept the instance and paused the rollout itself.
	DrainBlockedReason = "DrainBlocked"
	// OutsideMaintenanceWindowReason: the pool's maintenance window is
	// closed; no stale instance is replaced until it opens.
	OutsideMaintenanceWindowReason = "OutsideMaintenanceWindow"
)
