// Package machinepool is the core MachinePool controller: it drives a
// MachinePool through the phases of the MachinePool proposal and reports
// the truth about its instances, delegating the instances themselves to the
// bootstrap provider (spec.template.spec.bootstrap.configRef) and the
// infrastructure provider (spec.template.spec.infrastructureRef).
//
// Each reconcile fetches the pool and its Cluster, stops when either is
// paused, adds the finalizer (written at once, with the Cluster label and
// owner reference, before anything is created; the reconcile goes on), then
// runs ordered phase functions over a shared scope — replicas defaulting,
// bootstrap, infrastructure, Nodes, pool Machines — and patches the pool
// once, in a deferred function that also computes the phase, the conditions
// and the events.
//
// Phases (status.phase), from observed state only:
//
//	Deleting      deletionTimestamp is set
//	Failed        a referenced object reports failureReason/failureMessage
//	Pending       the bootstrap data is not ready: the bootstrap config is not
//	              ready, or dataSecretName is nil (nil waits for a provider,
//	              "" means no bootstrap data, "..." is used as is)
//	Provisioning  bootstrap ready, the infrastructure pool is not ready
//	ScalingUp     infrastructure ready, fewer instances than spec.replicas
//	ScalingDown   infrastructure ready, more instances (or ready Nodes) than
//	              spec.replicas
//	Provisioned   infrastructure ready and as many instances as desired, but
//	              not all of their Nodes are Ready yet
//	Running       as many Ready Nodes matching spec.providerIDList as
//	              spec.replicas
//
// Conditions, each set on every reconcile by one function: Ready (summary of
// BootstrapReady, InfrastructureReady and ReplicasReady), BootstrapReady,
// InfrastructureReady, ReplicasReady, Available (every desired replica Ready
// for minReadySeconds), ScalingUp, ScalingDown, UpToDate (every pool Machine
// runs the infrastructure pool's latest model) and Paused. While a pool is
// being deleted only Ready (reason Deleting, with the current step) and
// Paused are updated.
//
// Nodes are matched through the workload cluster cache's providerID index
// (internal/workload); matched Nodes are annotated with their cluster and
// owning pool and lose the node.cluster.x-k8s.io/uninitialized taint, and
// Nodes the pool annotated whose providerID left the list are deleted.
//
// When the infrastructure pool reports status.infrastructureMachineKind, one
// Machine is kept per infrastructure machine (same name, controlled by the
// pool, labelled cluster.x-k8s.io/pool-name); deleting such a Machine
// deletes its infrastructure machine, and the delete-machine annotation is
// carried over to it.
package machinepool
