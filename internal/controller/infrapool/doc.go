// Package infrapool is mpool's one rollout engine: the reconciler shared by
// every infra machine pool kind (LocalMachinePool now, AzureMachinePool and
// AWSMachinePool later). A small Adapter per kind maps the pool onto a scale
// group name, an instance model (scalegroup.Model), a rollout strategy and
// per-instance objects; the Engine does the rest, the same way on every
// cloud.
//
// # One reconcile
//
//   - Observe: the owner MachinePool (ownerReference) gives the desired
//     replicas, the Kubernetes version, minReadySeconds, nodeDrainTimeout and
//     the bootstrap data (the Secret named by
//     spec.template.spec.bootstrap.dataSecretName, key "value"). One
//     ScaleGroup.Get reads the group and all its instances; the per-instance
//     objects, their Machines (cluster.x-k8s.io/delete-machine marks) and the
//     instances' Nodes (by providerID, through Workload) come from caches. A
//     Node's Ready condition gives the instance's ReadySince.
//   - Hash: ModelHash covers every field of the model that changes an
//     instance — instance type, image, zones, the Extra fields (disks,
//     identity, Kubernetes version, ...) — and nothing else: not the
//     bootstrap data (its token rotates), not tags, not the replicas.
//   - Plan: rollout.Plan decides the victims and the target capacity. The
//     SkipMachinePoolModelReconciliation gate and the mpool.dev/rollout-paused
//     annotation (on the MachinePool or the pool) are passed through. When
//     the workload cluster's Nodes cannot be read nothing is known to be
//     Ready, so the plan is paused rather than trusted.
//   - Act: each victim's per-instance object is annotated with the time its
//     removal started (mpool.dev/drain-started; a restarted manager resumes
//     from it), its Node is cordoned and drained through the eviction API
//     (package internal/drain: PodDisruptionBudgets respected, bounded by
//     nodeDrainTimeout, after which the engine proceeds and emits an event),
//     then every victim ready to go is deleted in one DeleteInstances call.
//     The group's model and capacity are applied only when they differ, with
//     a capacity that never lets the cloud pick a victim (see capacity).
//   - Report: one per-instance object per instance (named
//     "<pool>-<instanceID>", controller-owned by the pool, labelled with the
//     MachinePool and Cluster names, with the instance's state, readiness,
//     zone, version, Node and whether it runs the latest model), the pool's
//     spec.providerIDList, status.ready/replicas/instances (at most
//     MaxReportedInstances, those needing attention first)/
//     infrastructureMachineKind and its conditions (ScaleGroupReady,
//     ScaleGroupModelUpdated, ScaleGroupDesiredReplicas, RolloutProgressing,
//     Ready). The pool is patched once, at the end, and only when something
//     changed: a converged pool costs one cloud read and no write.
//
// A throttled request makes every pool of the engine wait for the cloud's
// Retry-After, including reconciles triggered by events meanwhile. The
// cache's objects are read without copies and compared by their Spec and
// Status fields only, so a reconcile of a 10,000-instance pool stays cheap.
//
// Deleting a per-instance object, or the Machine of one, drains and deletes
// exactly that instance; the planner then refills the group if it is short.
// Deleting the pool drains every Node, deletes the group, waits until the
// cloud no longer knows it, deletes the Nodes and per-instance objects and
// only then releases the pool's finalizer.
//
// Errors: throttling requeues after the cloud's Retry-After; quota and
// invalid-spec errors become conditions and events and are retried slowly
// or not at all; transient errors are returned for controller-runtime's
// exponential backoff. Every step is idempotent, so a reconcile that stops
// half-way is finished by the next one.
package infrapool
