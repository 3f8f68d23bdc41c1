package infrapool

// Event reasons the engine emits, on the pool unless said otherwise.
const (
	// ReasonScaleGroupApplied: the group was created or its model or
	// capacity changed.
	ReasonScaleGroupApplied = "ScaleGroupApplied"
	// ReasonScaleGroupDeleting: the group's deletion was requested.
	ReasonScaleGroupDeleting = "ScaleGroupDeleting"
	// ReasonScaleGroupDeleted: the group is gone and the pool released.
	ReasonScaleGroupDeleted = "ScaleGroupDeleted"
	// ReasonQuotaExceeded: the cloud refused the capacity.
	ReasonQuotaExceeded = "QuotaExceeded"
	// ReasonInvalidSpec: the cloud (or the adapter) rejected the pool's spec.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonThrottled: the cloud throttled a request.
	ReasonThrottled = "Throttled"
	// ReasonDrainStarted: instances are being removed (on the pool, once per
	// reconcile) and an instance's Node is cordoned and drained (on its
	// per-instance object).
	ReasonDrainStarted = "DrainStarted"
	// ReasonDrainTimeout: a drain did not finish within nodeDrainTimeout;
	// the instance is deleted anyway (also on the per-instance object).
	ReasonDrainTimeout = "DrainTimeout"
	// ReasonDrainFailed: a drain pass failed and will be retried.
	ReasonDrainFailed = "DrainFailed"
	// ReasonInstancesDeleted: instances were deleted from the cloud.
	ReasonInstancesDeleted = "InstancesDeleted"
	// ReasonNodeStartupTimeout: an instance has not joined the cluster
	// within the join timeout and is replaced (also on the per-instance
	// object).
	ReasonNodeStartupTimeout = "NodeStartupTimeout"
)

// Event actions (the events API's "action" field).
const (
	actionApply   = "Apply"
	actionDrain   = "Drain"
	actionDelete  = "Delete"
	actionObserve = "Observe"
)
