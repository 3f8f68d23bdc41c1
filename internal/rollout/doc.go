// Package rollout owns mpool's rollout planner: the single place that decides
// how a pool's scale group moves from what it is to what it should be, for
// every provider. Plan is a pure function from one observation (desired
// replicas, strategy, current model hash, the instances) to actions (which
// instances to delete, what capacity to ask for) and a report (counts, what it
// waits for, whether it converged). It does no I/O and reads no clock; a
// separate step applies the result.
//
// # Terms
//
// An instance is live unless it is Failed or Deleting. It is up to date when
// its model hash equals the pool's, stale otherwise. It is Ready when its Node
// is Ready, and available when it has been Ready for at least MinReadySeconds.
// Capacity is the number of live instances.
//
// # Rules
//
//   - Budgets: maxSurge and maxUnavailable are integers or percentages of
//     desired; surge rounds up, unavailable rounds down; both zero is invalid;
//     unset means surge 1, unavailable 0 (see ResolveBudgets).
//   - Failed and deleting instances are always deleted; they never count as
//     available.
//   - Marked (delete-machine) and, unless SkipModelReconciliation is set, stale
//     instances are old: each is deleted, marked ones first, then not-Ready
//     ones, then in delete-policy order.
//   - Deleting an instance that is not available is free. An available
//     instance is deleted only while available - 1 >= desired - maxUnavailable,
//     counting the deletions already in the same plan. An instance Ready for
//     less than MinReadySeconds is not available yet, so, as with a
//     Deployment's pods, deleting it spends no budget.
//   - Excess: live instances that are not old are trimmed to desired, and to
//     desired + maxSurge minus the old instances still held back; not-Ready
//     first, then the delete policy (Oldest, Newest, Random from RandSeed).
//     Ties are broken by ID. Because stale instances go in the pass before,
//     a scale-down during a rollout removes stale instances before up-to-date
//     ones, and does not throw away up-to-date instances that are still booting.
//   - Capacity: enough new up-to-date instances to reach desired fresh ones;
//     while old instances remain the group may grow to desired + maxSurge,
//     otherwise only to desired. With maxSurge 0 old instances are deleted
//     before replacements are created; with maxUnavailable 0 replacements must
//     become available before old instances go. Unless paused, TargetCapacity
//     is never above desired + maxSurge.
//   - SkipModelReconciliation: stale instances are treated like up-to-date ones:
//     neither replaced nor preferred for deletion, and Done ignores them.
//   - Paused: nothing is deleted and TargetCapacity is the current capacity.
//
// # Applying a result
//
// The applier cordons and drains each victim, then deletes it from the cloud,
// and raises the group to TargetCapacity with instances on the current model.
// Once a victim's removal has started it must be reported as StateDeleting on
// later observations (for example from its per-instance object's deletion
// timestamp): it then no longer counts as live or available, and it is listed
// again with ReasonDeleting until it is gone, so a restarted manager finishes
// what it began. Capacity counts live instances only, as Cluster API counts
// machines for maxSurge: a victim being drained is not counted. Every
// observation is taken afresh; the planner keeps no state between calls.
//
// # Blue-green
//
// PlanBlueGreen is the other strategy, modelled on GKE's blue-green node
// pool upgrade, and the one place that keeps state (a BlueGreenRecord the
// caller stores and hands back). On a model change it asks for the full new
// (green) set beside the old (blue) one, deleting nothing
// (CreatingGreenPool); once every green instance is available, for the blue
// Nodes to be cordoned (CordoningBluePool) and drained in batches of
// BlueGreenSettings.BatchSize with BatchSoak after each (DrainingBluePool);
// then it keeps the blue set for PoolSoak (NodePoolSoaking). While it owns
// the phase (BlueGreenStep.Own) its TargetCapacity and Delete replace Plan's.
// Then the deletion of the blue set (DeletingBluePool) is Plan's, within the
// budgets. A model back to the blue one is a rollback (RollingBack): the
// blue Nodes serve again and Plan deletes the green set, which is stale
// now; no blue instance is created. A newer model supersedes the green set:
// the blue Nodes serve again, the superseded green instances are deleted and
// the newest green set created. No rollout, phase or batch starts while
// Input.Paused or Input.HoldStale holds it.
package rollout
