// Package azureface is the simulated cloud's Azure face. AzureFace (wire
// types in package azureapi) is Microsoft
// Entra ID plus Azure Resource Manager's Microsoft.Compute as the unmodified
// Azure SDK for Go (azidentity, armcompute) speaks them, at the root of its
// HTTPS listener (Server.FaceURL("azure")). A client points every Azure
// endpoint at that URL and trusts the cloud's CA:
//
//	cloud.Configuration{ActiveDirectoryAuthorityHost: url + "/",
//		Services: {cloud.ResourceManager: {Endpoint: url, Audience: url}}}
//	azidentity.ClientSecretCredentialOptions{DisableInstanceDiscovery: true, ...}
//
// DisableInstanceDiscovery is required: MSAL asks login.microsoftonline.com
// about any authority host it does not know.
//
// Entra ID: POST /{tenant}/oauth2/v2.0/token (client credentials with a
// client secret; the scope <audience>/.default, MSAL's OpenID scopes
// ignored) answers {"token_type":"Bearer","expires_in":3599,...}; an
// unknown tenant (AADSTS90002), unknown client (AADSTS700016), wrong secret
// (401 invalid_client, AADSTS7000215) or expired secret (AADSTS7000222) is
// refused in Entra's error shape. GET /{tenant}/v2.0/.well-known/openid-configuration
// and /common/discovery/instance are served for MSAL. The service principals
// are the face's data (persisted): the default one — tenant
// AzureDefaultTenantID, client AzureDefaultClientID, secret
// AzureDefaultClientSecret — until removed; AzureSetClient,
// AzureDeleteClient and AzureClients, or PUT/GET /admin/azure/clients
// (body {"tenantID","clientID","clientSecret","expiresAt"}) and DELETE
// /admin/azure/clients/{tenant}/{client}, manage them; AzureFace.Clients
// adds fixed ones. Access tokens are
// JWTs signed with a key kept in the face's data (valid across restarts),
// for the cloud's clock's expires_in (AzureFace.TokenLifetime).
//
// A scale set is the core group AzureGroupKey(sub, rg, vmss): scope
// /subscriptions/<sub>/resourceGroups/<rg> and name, lowercased, since
// ARM's names are case-insensitive (responses keep the client's spelling).
//
// ARM (every request needs api-version and a valid bearer token: missing →
// 401 AuthenticationFailed, invalid or of another audience → 401
// InvalidAuthenticationToken, expired → 401 ExpiredAuthenticationToken;
// paths case-insensitive as ARM's) under
// /subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Compute/:
//
//   - virtualMachineScaleSets/{vmss}: PUT (201 create, 200 update), PATCH
//     (a JSON merge patch of the scale set as last written), GET, DELETE
//     (202; 204 when absent); list per resource group and per subscription.
//     The scale set is kept as sent (the group's payload) and returned with
//     id, name, type, sku.capacity (the core's capacity),
//     properties.provisioningState, uniqueId, timeCreated, orchestrationMode
//     and upgradePolicy Manual by default; osProfile.customData (base64, at
//     most 87,380 characters, as Azure) is never returned, and a PUT or
//     PATCH without it keeps the current one. The core's model: InstanceType
//     = sku.name, Image = publisher:offer:sku:version (or the image ID),
//     Zones, CustomData decoded, Tags; the Node's CPU and memory from the
//     SKU; the kubelet version from the tag mpool.dev/kubernetes-version,
//     else the image version (CAPZ's 130.4.20240717 → v1.30.4). ModelHash is
//     the tag mpool.dev/model-hash, else a hash of sku, zones and
//     virtualMachineProfile without custom data.
//   - virtualMachineScaleSets/{vmss}/delete (POST {"instanceIds":[...]};
//     VM names in Flexible mode): the VMs are deleted and the capacity
//     lowered by their number (VMs already deleting are not counted
//     twice); an ID the scale set does not have is refused, as Azure
//     does: 400 InvalidParameter "The provided instanceId <id> is not an
//     active Virtual Machine Scale Set VM instanceId.", nothing deleted.
//   - Uniform: virtualMachineScaleSets/{vmss}/virtualMachines list (paged:
//     AzureFace.PageSize, default 1000, nextLink with $skiptoken), get,
//     DELETE (the capacity drops by one). Instance IDs 0, 1, 2, ... per
//     scale set, never reused; names <vmss>_<n>; host names
//     computerNamePrefix + 6 base-36 digits of n (lowercased); providerIDs
//     azure:///subscriptions/<sub>/resourceGroups/<rg>/providers/Microsoft.Compute/virtualMachineScaleSets/<vmss>/virtualMachines/<n>.
//   - Flexible: virtualMachines list (paged; $filter='virtualMachineScaleSet/id'
//     eq '<id>', as Azure documents it, the field's quotes optional), get, DELETE, with properties.virtualMachineScaleSet.id.
//     Names <vmss>_<8 hex> (the core's instance ID), host names (Node names:
//     a name with "_" is not a valid Node name) computerNamePrefix + the
//     first 6 of those hex digits, as Azure's osProfile.computerName;
//     providerIDs azure:///subscriptions/<sub>/resourceGroups/<rg>/providers/Microsoft.Compute/virtualMachines/<name>.
//     The Uniform VM list refuses a Flexible scale set (OperationNotAllowed).
//   - Every VM reports provisioningState (Creating while the instance is
//     creating or booting, Succeeded once running, Failed, Deleting),
//     latestModelApplied (its model hash is the scale set's), its model's
//     tags, hardwareProfile.vmSize, osProfile.computerName, zones, vmId;
//     ds.meta_data has local_hostname (the host name), region/location,
//     name, vm_id, vm_scale_set_name, subscription_id, resource_group, zone.
//   - GET /subscriptions/{sub}/providers/Microsoft.Compute/skus
//     ($filter=location eq '<l>'): the simulation's VM sizes (azureSkus:
//     Standard_B1s 1 vCPU/1 GiB, B2s, D2s/D4s/D8s v3 and v5, E4s_v5, F4s_v2
//     in zones 1-3; NC6s_v3 in zone 2 only) in AzureFace.Locations
//     (default eastus, westus2, westeurope), with vCPUs, MemoryGB and more
//     capabilities.
//
// Long-running operations as ARM's: PUT/PATCH answer with
// Azure-AsyncOperation, DELETE and the delete action 202 with
// Azure-AsyncOperation and Location, at
// /subscriptions/{sub}/providers/Microsoft.Compute/locations/{l}/operations/{id}:
// {"status":"InProgress"|"Succeeded"|"Failed"} (?monitor=true: 202 until
// done, then 200). A write is in progress while the VMs it created are
// creating or booting, and Failed when one failed to boot; deletes until
// their VMs (or the scale set) are gone. The operation ID encodes the
// operation, so operations need no record and survive restarts; the SDK's
// pollers and their resume tokens work unmodified. A failed write's status
// carries the error VMExtensionProvisioningError (the poller's Result
// returns it). Operations send no Retry-After: clients poll at their own
// frequency (PollUntilDoneOptions.Frequency).
//
// Errors in ARM's body ({"error":{"code","message","target"}}): 404
// ResourceNotFound; 400 SkuNotAvailable (unknown SKU), InvalidParameter
// (zone the SKU lacks, custom data too long or not base64, missing
// profile, computerNamePrefix), LocationNotAvailableForResourceType,
// PropertyChangeNotAllowed (location, orchestrationMode),
// InvalidResourceName, MissingApiVersionParameter; 409 OperationNotAllowed
// for the regional vCPU quota (AzureFace.VCPUQuota by SKU family, per
// subscription and location: "exceeding approved standardDSv3Family Cores
// quota") and for the core's instance quotas; 409 Conflict while deleting.
// Injected faults: 429 TooManyRequests with Retry-After and
// x-ms-ratelimit-remaining-subscription-reads/-writes, 5xx
// InternalServerError/BadGateway/ServiceUnavailable; the token endpoint
// answers them in Entra's shape. Request budgets (AzureFace.SubscriptionReads,
// SubscriptionWrites, ScaleSetWrites: token buckets, off by default;
// AzureSubscriptionReads/Writes and AzureScaleSetWrites are Azure's
// documented figures) answer 429 TooManyRequests with Retry-After until
// their next token; x-ms-ratelimit-remaining-subscription-reads/-writes
// report what is left. `mpool cloud --azure-throttle` turns Azure's figures
// on, --azure-vcpu-quota family=n sets VCPUQuota.
//
// Automatic instance repairs (repairs.go): properties.automaticRepairsPolicy
// is validated as ARM does (gracePeriod PT10M to PT90M, repairAction
// Replace, Restart or Reimage, an Application Health extension or load
// balancer probe required to enable it) and returned with its defaults; a
// VM with the core fault CloudCheckFailing (its application health
// Unhealthy) past the grace period is repaired when the scale set or its
// VMs are next read: Replace deletes and recreates it, the capacity
// unchanged; Restart and Reimage bring it back healthy.
//
// # AKS
//
// The face serves a simulated AKS (Microsoft.ContainerService, aks.go) on
// ARM's endpoint, behind the same Entra ID tokens, api-version check and
// request budgets, as armcontainerservice (v6, api-version 2025-02-01)
// speaks it, under
// /subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.ContainerService/:
//
//   - managedClusters/{c}: GET. Clusters are registered from Go
//     (AKSCreateCluster; `mpool up`'s PrepareSandbox registers
//     AKSDefaultClusterName in the default subscription, resource group and
//     location) and never change; their node resource group is
//     MC_<rg>_<cluster>_<location>, their version AKSDefaultVersion unless
//     given.
//   - managedClusters/{c}/agentPools: list; agentPools/{p}: PUT (201
//     create, 200 update, with Azure-AsyncOperation), GET, DELETE (202 with
//     Azure-AsyncOperation and Location; 204 when absent);
//     agentPools/{p}/deleteMachines (POST {"machineNames": [...]}: those
//     VMs and their Nodes go and the count drops by their number; a name
//     the pool lacks is 400 InvalidParameter and nothing goes; a System pool
//     keeps one node); agentPools/{p}/machines: list, each machine named as
//     its Node, properties.resourceId its VM and network its address.
//
// An agent pool's nodes are VMs of a Uniform scale set of this face,
// aks-<pool>-<8 digits>-vmss in the node resource group (GET it with
// armcompute), host names aks-<pool>-<8 digits>-vmss + 6 base-36 digits,
// providerIDs azure:///subscriptions/<sub>/resourceGroups/mc_<...>/providers/Microsoft.Compute/virtualMachineScaleSets/<vmss>/virtualMachines/<n>.
// AKS bootstraps them: the face creates a bootstrap token in the node
// agent's first workload API server and writes their kubeadm join itself,
// with AKS's labels (agentpool, kubernetes.azure.com/agentpool, mode,
// cluster, node-image-version AKSNodeImageVersion, role, os-sku,
// scalesetpriority for Spot) and the pool's nodeLabels, nodeTaints and
// maxPods; without a workload API server they boot and never join. The
// Nodes of VMs AKS removes (a lower count, deleteMachines, a deleted pool)
// are deleted with them, and a deleted pool's bootstrap token.
//
// A PUT is checked as AKS does: the pool name (a lowercase letter and at
// most 11 lowercase letters and digits), the VM size (400
// VMSizeNotSupported for one the face lacks) and its zones, count 0 to
// AKSMaxNodesPerPool (a System pool at least 1; autoscaling needs minCount
// ≤ count ≤ maxCount), no Spot System pool, Linux VirtualMachineScaleSets
// pools only, an orchestratorVersion no newer than the cluster's, at most
// AKSMaxPoolsPerCluster pools, and on update PropertyChangeNotAllowed for
// the properties AKS cannot change in place (vmSize, osDiskSizeGB,
// osDiskType, availabilityZones, maxPods, osType, scaleSetPriority,
// spotMaxPrice, enableNodePublicIP, nodePublicIPPrefixID, kubeletConfig,
// linuxOSConfig, vnetSubnetID, enableFIPS, enableEncryptionAtHost). Count,
// labels, taints, tags, mode and autoscaling change in place: the count at
// once (a scale-in's victims are the core's), the rest for new nodes only.
// provisioningState is Creating or Updating while the nodes the last write
// created boot, Failed when one failed, Deleting while the scale set goes.
// Operations are stateless as the scale sets' (under
// Microsoft.ContainerService/locations/{l}/operations/{id}).
//
// A change of orchestratorVersion (up to the cluster's; no downgrade) is
// AKS's own upgrade (aks_upgrade.go): provisioningState Upgrading and
// currentOrchestratorVersion the old one until it is done; the pool runs at
// most count + maxSurge nodes (upgradeSettings.maxSurge, a number or a
// percentage rounded up, AKS's default 10%, at least one), new ones of the
// new version created first. An old node, oldest first, is cordoned and
// drained through the workload cluster's eviction API (PodDisruptionBudgets
// honoured, internal/drain) only while count nodes serve without it, at
// most maxSurge at a time; once drained it soaks nodeSoakDurationInMinutes
// (default 0), then goes with its Node. A node not drained within
// drainTimeoutInMinutes (default 30, 1 to 1440) is blocked, as
// undrainableNodeBehavior says: Cordon keeps it cordoned, labelled
// kubernetes.azure.com/upgrade-status: Quarantined, with a surge node kept
// in its place; Schedule (the default) uncordons it and removes the surge
// nodes. The other nodes are upgraded all the same; then the upgrade has
// failed: the operation Failed with UpgradeFailed naming the node and the
// pods, the pool Failed, until the next write of the pool starts the
// upgrade again. A PUT that does not send undrainableNodeBehavior (a
// client of armcontainerservice/v6's API version cannot) keeps the stored
// one. AzureFace.AKSMinute is the length of these minutes. The upgrade
// advances whenever the cluster is read (the pool, its machines, the
// operation), so it needs no loop and survives a restart; another write
// meanwhile is 409 OperationNotAllowed.
//
// POST agentPools/{p}/upgradeNodeImageVersion is the same upgrade at the
// same version, to the cluster's newest node image (AKSNodeImageVersion
// until AKSReleaseNodeImage releases another; a version upgrade moves to it
// too): 202 and an operation, 200 when the pool runs it already, 409 while
// an upgrade runs or after one failed. The pool's nodeImageVersion and its
// Nodes' node-image-version label are their image.
//
// A scale-in (aks_scalein.go: a lower count, or deleteMachines) cordons and
// drains the nodes it removes before deleting them (a lower count picks
// cordoned nodes first, then the highest instance IDs): Scaling while they
// drain; a node not drained within drainTimeoutInMinutes is uncordoned and
// kept, the operation Failed with PodDrainFailure, until the next write.
//
// Not simulated yet: maxUnavailable and maxBlockedNodes, AKS's cluster
// autoscaler (enableAutoScaling is validated and kept, the count not
// changed), relabelling existing nodes, Windows pools, managed cluster
// writes.
//
// Limits: any subscription and resource group name is accepted without
// being created; one region's SKUs everywhere; no instance views (the
// application health of a VM is not reported), NICs, disks or extensions
// (kept in the model as sent, not simulated); scale-in victims
// are the core's (failed, then zone-balanced newest first), not Azure's
// scale-in policy.
package azureface
