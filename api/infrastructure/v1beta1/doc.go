// Package v1beta1 contains the infrastructure.cluster.x-k8s.io/v1beta1 machine pool types
// that mpool serves: AzureMachinePool and AzureMachinePoolMachine (CAPZ field names),
// AWSMachinePool and AWSManagedMachinePool (CAPA field names), and LocalMachinePool and
// LocalMachinePoolMachine for the simulated cloud. Every infra pool keeps Cluster API's
// infra machine pool contract: spec.providerIDList, status.ready, status.replicas,
// status.infrastructureMachineKind, status.failureReason and status.failureMessage.
//
// Azure and Local pools share one rollout strategy type, MachinePoolDeploymentStrategy,
// because mpool has one rollout engine for every provider.
//
// +kubebuilder:object:generate=true
// +groupName=infrastructure.cluster.x-k8s.io
package v1beta1
