// Package aks is the AKS part of the Azure provider: AzureManagedMachinePools
// backed by the agent pools of an existing AKS cluster, through
// armcontainerservice (v6) with the Azure provider's credentials
// (AzureClusterIdentity, the manager's own), endpoints and error mapping.
// It lives under internal/provider/azure to reuse them, as EKS lives under
// AWS.
//
// AKS runs its agent pools itself — it picks the nodes a scale-in removes,
// and replaces nodes on an upgrade within the pool's upgradeSettings — so
// the ScaleGroup declares scalegroup.Capabilities{CloudRollouts: true}: the
// engine applies the desired agent pool with the replicas as its count,
// one change at a time, and observes. Apply reads the agent pool and writes
// it (one PUT, a long-running operation) only when what mpool sets differs;
// a pool at rest costs one agent pool GET and one machines list per Get,
// and no write. DeleteInstances is the agent pool's deleteMachines (the
// machines are named as their Nodes); Delete deletes the agent pool.
//
// # Carrying the model hash
//
// The agent pool's tags carry the engine's model hash (mpool.dev/model-hash)
// and the Kubernetes version it stands for (mpool.dev/model-target). Every
// other field of the model is one AKS cannot change on an agent pool
// (refused at admission and by AKS, naming the field), so the version is
// the model: the group's ModelHash is the tagged hash once the pool runs
// its target version, and its machines carry it while it does.
//
// # Upgrades
//
// A MachinePool version change is one PUT of orchestratorVersion: AKS
// upgrades the pool itself within its upgradeSettings (AKS's defaults, but
// for drainTimeoutInMinutes: the MachinePool's nodeDrainTimeout, rounded up
// to whole minutes; CAPZ's v1beta1 AzureManagedMachinePool has no
// upgradeSettings, and armcontainerservice/v6 cannot send
// undrainableNodeBehavior),
// reporting provisioningState Upgrading and the old
// currentOrchestratorVersion until it is done; mpool writes nothing
// meanwhile. Node image upgrades (upgradeNodeImageVersion) are not driven.
//
// # Operations, failures and retries
//
// The resume token of the PUT or DELETE mpool starts is reported with the
// operation (scalegroup.Operation.ResumeToken) and recorded on the pool as
// CAPZ records it (status.longRunningOperationStates); a restarted manager
// hands it back (scalegroup.WithRecordedOperation), so the operation is
// still known as mpool's, and a failed PUT's error is read from its
// operation. A Failed agent pool is reported as scalegroup.Group.Failed:
// the engine sends the same PUT again with backoff (20s, doubling up to
// 10m, recorded on the pool so that a restart keeps it), as CAPZ's Azure
// Service Operator reconciles a failed agent pool again with backoff.
package aks
