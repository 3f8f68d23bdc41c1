// Package cluster is mpool's minimal Cluster controller, for running without
// Cluster API's own: a Cluster whose "<name>-kubeconfig" Secret reaches an
// API server is marked control-plane ready (and infrastructure ready when it
// has no infrastructureRef, otherwise as its infrastructure object says), and
// reaches phase Provisioned. When the workload cluster cannot be reached the
// WorkloadClusterReachable condition says why. Deleting a Cluster drops its
// workload-cluster client and cache.
package cluster
