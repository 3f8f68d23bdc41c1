// Package infrapool is mpool's one rollout engine: a library, not a
// controller of its own. Each provider (internal/provider/<cloud>) hands it
// an Adapter for its infra pool kind and a ScaleGroup for its cloud, and the
// provider registry (internal/provider) calls Setup, which registers the
// Engine as that kind's controller and an OrphanReleaser for its
// per-instance objects. The Adapter maps the pool onto a scale group name,
// an instance model (scalegroup.Model), a rollout strategy and per-instance
// objects; the Engine does the rest, the same way on every cloud. Its pure
// rules — how instances become the planner's input, the annotations, the
// strategy mapping — live in internal/preview, which `mpool rollout plan`
// shares.
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
//     instance — instance type, image, zones, the Kubernetes version, the
//     provider's typed fields (Model.Provider: disks, identity, ...) and the
//     bootstrap data with its bootstrap tokens masked — and nothing else:
//     not the token (it rotates), not tags or in-place settings
//     (Model.InPlace), not the replicas. A changed KubeadmConfig is
//     re-rendered into the data and rolls the pool within its budgets; a
//     rotated token rolls nothing.
//   - Plan: rollout.Plan decides the victims and the target capacity. The
//     SkipMachinePoolModelReconciliation gate and the mpool.dev/rollout-paused
//     annotation (on the MachinePool or the pool) are passed through. When
//     the workload cluster's Nodes cannot be read nothing is known to be
//     Ready, so the plan is paused rather than trusted.
//   - Act: each victim's per-instance object is annotated with the time its
//     removal started (mpool.dev/drain-started; a restarted manager resumes
//     from it), its Node is cordoned and drained through the eviction API
//     (package internal/drain: PodDisruptionBudgets respected, bounded by
//     nodeDrainTimeout, after which the engine proceeds and emits an event,
//     unless the drain is a rollout's and the pool's
//     mpool.dev/undrainable-node-behavior says Schedule — keep the instance,
//     uncordon its Node, pause the rollout with reason DrainBlocked naming
//     the Node and the PodDisruptionBudgets — or Cordon — keep it cordoned
//     and quarantined, out of the plan; see undrainable.go; a rollout's
//     stale instances also wait for the pool's maintenance window,
//     mpool.dev/maintenance-window-schedule and -duration),
//     then every victim ready to go is deleted in one DeleteInstances call.
//     The group's model and capacity are applied only when they differ, with
//     a capacity that never lets the cloud pick a victim (see capacity).
//     A pool whose mpool.dev/rollout-strategy is BlueGreen rolls a model
//     change with rollout.PlanBlueGreen instead (see bluegreen.go): the full
//     green set beside the blue one, the blue Nodes cordoned and drained in
//     batches, the soak, then the blue set deleted by the rolling planner;
//     its state is the pool's mpool.dev/blue-green record.
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
// # Clouds that run their own rollouts
//
// Some clouds replace out-of-date instances themselves: an EKS managed node
// group launches new nodes, cordons and drains old ones within its
// updateConfig.maxUnavailable, picks its own victims on a scale-down, and
// has no call to delete chosen instances and shrink. Such a ScaleGroup
// declares it (scalegroup.Capabilities.CloudRollouts) and the engine does
// not pretend to pick victims: it applies the desired model with the
// replicas as the capacity, one change at a time (never while the cloud's
// own operation is in progress), and observes. Stale instances are reported
// truthfully (latestModelApplied false, ScaleGroupModelUpdated False, and
// RolloutProgressing True with reason CloudRollout while the cloud replaces
// them); the cloud's note on a failed update or an unhealthy group is
// surfaced in ScaleGroupReady (reason ScaleGroupProblem). Instances a user
// marks for deletion are still deleted, drained first, one by one. An
// unhealthy instance is remediated, drained first, by the cloud's
// replacement (scalegroup.Replacer) when the ScaleGroup offers it
// (Capabilities.ReplaceInstances: an EKS node group's Auto Scaling group
// terminates it without a decrement), and otherwise left to the cloud,
// its Machine saying why.
//
// # Bootstrap data
//
// New bootstrap data reaches the cloud only when instances will be created
// from it: with a write that adds instances (a scale-up, a surge to replace
// a victim, a model change), never on its own. A token rotation on a pool at
// rest therefore costs no cloud write — no scale set model update, no launch
// template version every 15 minutes (CAPZ issue #4958; CAPA made a launch
// template version per rotation), nor even a reconcile: a Secret update
// wakes the pools that use it only when its data with the tokens masked
// changes (at a thousand pools at rest, 15-minute tokens woke one pool every
// half second, each a cloud read) — and the group may hold data with a token
// that has since been deleted. An instance the cloud creates from such data
// by itself (a replacement of an unhealthy instance, within the same
// capacity) cannot join; it is replaced after the join timeout, with the
// current data. While the bootstrap data is not available (its Secret being
// re-rendered or deleted) nothing is created or deleted: the model hash
// covers the data, and every instance would look stale.
//
// # Replicas, pausing and instances that never join
//
// When the MachinePool carries cluster.x-k8s.io/replicas-managed-by, an
// external autoscaler owns the replica count and scales the cloud's group
// itself, as with Cluster API's Azure and AWS providers: the engine never
// changes the group's capacity from spec.replicas. The desired replicas are
// the group's capacity, less the surge and draining victims the engine
// itself added to it (preview.ManagedCapacityAnnotation records what it left); the
// engine reports the group's live instances in status.replicas, which the
// core MachinePool controller copies into spec.replicas. Stale instances are
// still replaced within maxSurge and maxUnavailable around those replicas.
// As the cloud sends no event when the autoscaler scales the group, such a
// pool is read again every Timing.ExternalReplicas (default 30s).
//
// A paused Cluster (spec.paused or the cluster.x-k8s.io/paused annotation)
// and a pool with cluster.x-k8s.io/paused: "true" are not reconciled at all,
// deletion included: no cloud call, no write, not even the status.
// mpool.dev/rollout-paused, by contrast, only stops creating and deleting
// instances; the status is still reported.
//
// An instance that has no Node in the workload cluster JoinTimeout after
// the cloud created it (default 10 minutes, like Cluster API's
// MachineHealthCheck nodeStartupTimeout) is replaced as if it had failed:
// its bootstrap token may have been wrong or expired, its boot may hang. Its
// per-instance object's InstanceReady condition and a NodeStartupTimeout
// event say so, with the cloud's note on the instance; the group then
// creates a fresh instance with the current bootstrap data.
//
// # Rollouts that stop
//
// Nothing is deleted for a model the cloud cannot create: before the first
// stale victim goes, the model must be proven — the group has it (the cloud
// accepted it) or an instance of it lives — else it is applied first with
// the group's capacity unchanged (proveModel). A model the cloud refuses as
// invalid while the group serves older instances blocks the rollout
// (RolloutProgressing False, reason RolloutBlocked, a RolloutBlocked event)
// rather than failing the pool: status.failureReason stays unset, so the
// MachinePool is not Failed.
//
// A rollout that stops making progress pauses itself (trackProgress, with
// the pure rule nextProgress): no instance of the new model became
// available and no old one went within the progress deadline
// (preview.ProgressDeadlineAnnotation, default 10m), or
// preview.MaxFailedReplacementsAnnotation (default 3) consecutive instances
// of the new model failed, never joined, or went NotReady before they were
// available. The record lives on the pool
// (preview.RolloutProgressAnnotation), so a restarted manager keeps the
// pause; a new model, or removing the record (`mpool rollout resume`),
// resumes. RolloutProgressing False with reason ProgressDeadlineExceeded or
// ReplacementsFailing and an event of the same reason say why.
//
// A group whose last change the cloud gave up on (scalegroup.Group.Failed:
// an AKS agent pool left Failed by an upgrade or scale-in it could not
// drain) is applied again with backoff (retryFailed): Timing.FailedRetry,
// then twice as long after each retry that failed again, at most
// Timing.FailedRetryMax, and at once when the pool's spec or replicas
// change. Between retries it costs one read per pass, no write and no
// event: one ScaleGroupChangeFailed event per failure, one
// ScaleGroupApplied per retry, ScaleGroupReady saying "retrying in …,
// attempt N". The record lives on the pool (ApplyRetryAnnotation), so a
// restarted manager keeps the time and the count.
//
// A throttled request makes every pool of the engine wait for the cloud's
// Retry-After, including reconciles triggered by events meanwhile: every
// call goes through one gate, which fails it as throttled without sending
// it until then, whichever pass or step makes it. The
// cache's objects are read without copies and compared by their Spec and
// Status fields only, so a reconcile of a 10,000-instance pool stays cheap.
//
// Deleting a per-instance object, or the Machine of one, drains and deletes
// exactly that instance; the planner then refills the group if it is short.
// Deleting the pool drains every Node, deletes the group, waits until the
// cloud no longer knows it, deletes the Nodes and per-instance objects and
// only then releases the pool's finalizer.
//
// What wakes a pool: a change to it or to what it reads (its MachinePool,
// Machines, per-instance objects, Nodes, bootstrap data, Cluster), never its
// own status and annotation writes; while it converges, its requeues; at
// rest, only the cache's resync, the manager's --sync-period (10 minutes),
// which a change made in the cloud alone (an instance terminated outside
// mpool) waits for. That pass reads the cloud once and writes nothing.
//
// Errors: throttling requeues after the cloud's Retry-After; quota and
// invalid-spec errors become conditions and events and are retried slowly
// or not at all (a refused capacity sets ScaleGroupReady False with reason
// QuotaExceeded and says what to change; the group keeps its instances); transient errors are returned for controller-runtime's
// exponential backoff. Every step is idempotent, so a reconcile that stops
// half-way is finished by the next one.
package infrapool
