// Package workload gives controllers access to workload clusters: the
// Kubernetes clusters whose Nodes mpool's MachinePools provide.
//
// A ClusterCache builds, per Cluster, a client from the Cluster's
// "<cluster>-kubeconfig" Secret (key "value"). Node reads are served from a
// per-cluster informer cache with two indexes — the Node's spec.providerID and
// the MachinePool that owns it (from the annotations the MachinePool
// controller sets) — so that matching a pool's providerIDList to Nodes never
// lists every Node. Every other kind is read directly from the API server.
// The client is built once and reused; it is dropped, and its cache stopped,
// when the Cluster is deleted (Disconnect), when the Secret's content changes,
// or when the API server stops answering health checks.
//
// NodeSource turns Node events of every connected workload cluster into
// reconcile requests, so controllers react to Nodes joining, becoming Ready or
// going away instead of polling; ClusterSource does the same for clusters
// connecting and disconnecting.
//
// Failing to reach a workload cluster — no Secret, an unusable kubeconfig, an
// unreachable API server — is reported as a *ConnectionError, which matches
// ErrClusterNotConnected (IsConnectionError).
package workload
