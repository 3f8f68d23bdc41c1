// Package metrics owns the Prometheus metrics that describe MachinePools:
// replicas by state, phase, rollout progress and instances by lifecycle
// state (the mpool_machinepool_* series).
//
// They are computed at scrape time by a collector (PoolCollector) that reads
// the manager's informer cache: the MachinePools, their infrastructure pools
// and the per-instance infrastructure machines the infrastructure pools
// report in status.infrastructureMachineKind. MachinePools reference their
// infrastructure pool by group and kind only (Cluster API v1beta2); the
// version it is read at is resolved as the controllers resolve it
// (capi.RefGVK: the contract labels of the kind's CustomResourceDefinition,
// whose metadata is read through the manager's cached client). The
// collector reads exactly the kinds the MachinePool controller already reads
// through the same cache, so it starts no informer of its own, and it makes
// no API call. A deleted
// pool's series disappear with it: nothing is remembered between scrapes.
//
// AddToManager registers the collector only while the manager is the
// leader, so that replicas waiting for the lease neither start informers
// for these kinds nor export a second copy of every series.
//
// The other metrics mpool exports are defined where they are measured:
// cloud requests and throttling in internal/scalegroup, and the reconcile
// and work queue metrics by controller-runtime, per controller.
package metrics
