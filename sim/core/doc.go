// Package cloudsim is the simulated cloud: a real HTTP server on loopback
// with its own persistent state, startable in-process (Start, for `mpool up`
// and tests) or as its own process (NewCommand, `mpool cloud`), so a manager
// can be killed while the cloud keeps running. It is one core with several
// faces: the core owns groups, instances, boot, join, quotas, faults and the
// persisted state and knows no wire protocol; each face (local; Azure ARM +
// Entra ID; AWS Auto Scaling + EC2; EKS) translates one cloud's
// protocol, identities, errors and limits onto it.
//
// # Core
//
// The core (Cloud; cloud.go, simulate.go, state.go) holds scale groups, each
// keyed by GroupKey: the face that owns it, a scope the face chose (an
// opaque string: "/subscriptions/s/resourceGroups/rg", an account and
// region; empty for the local face) and a name, so the same name in two
// scopes is two groups. A face reaches its groups through Cloud.Scope;
// Cloud's own name-based methods are the local face's. A group has a model
// (including the bootstrap custom data) and a capacity, and the core creates
// instances to reach the capacity, balanced across the model's zones.
// Instances go Creating → Booting → Running (or Failed, at the group's
// failure rate) after the group's delays plus jitter, and Deleting → gone;
// instance sequence numbers never repeat. A model change does not touch
// existing instances. Simulated time comes from an injected clock, every
// call first applies the transitions due, and a background loop applies
// them as they fall due. An instance quota applies across all groups of all
// faces, and optionally one per scope (Scope.SetMaxInstances, e.g. a
// region's).
//
// When the core creates an instance it asks the group's face for its
// identity (Face.InstanceIdentity): instance ID, providerID, host name,
// private IP and the instance data cloud-init exposes as ds.meta_data
// (local_hostname, instance_id, local_ipv4, availability_zone, region, and
// keys of the face's own). The core persists them with the instance and
// never changes them. Faces keep what else they must remember as opaque
// JSON the core stores and persists but never reads: a payload per group
// (GroupSpec.Payload, Scope.UpdateGroupPayload: a launch template
// reference, a node group), per instance (Scope.UpdateInstancePayload: a
// Flexible-mode VM's properties) and per face (Cloud.UpdateFaceData: launch
// templates and their versions). Read-modify-write functions run under the
// core's lock.
//
// State is written to DataDir atomically (temp file + rename), batched to
// at most one write per 200ms and on Stop; a restarted cloud resumes booting
// instances and heartbeats where they were. The file is versioned: version 2
// lists every face's groups with their face and scope, plus each face's
// data; version 1 files (before faces) load as the local face's groups.
//
// # Joining like a real VM
//
// Once an instance is Running, the node agent (package nodeagent) reads its
// custom data as cloud-init (package cloudinit: the jinja placeholders
// {{ ds.meta_data["local_hostname"] }}, {{ ds.meta_data.key }} and
// {{ v1.key }} are rendered from the instance's metadata), performs kubeadm's
// token discovery against the JoinConfiguration's apiServerEndpoint (CA
// pinned by caCertHashes, bootstrap token authenticated; a wrong or expired
// token or a wrong CA hash means the instance never joins and its Message
// says why), and registers a Node with the instance's providerID, named as
// the join configuration says (by default the host name), with labels and
// taints from the join configuration plus zone and instance type, and a
// Lease heartbeat. Deleting an instance powers it off: the heartbeat stops
// and the Node is marked NotReady; deleting the Node is its owner's job.
//
// # Faces and faults
//
// The Server serves, on one listener, the admin endpoints, the local face at
// the root (face_local.go: the JSON API of package localapi, unchanged
// paths, providerIDs local:///<group>/<id>, host names <group>-<id>) and
// every other face under /<name>/ (Server.FaceURL, Server.FaceEndpoints);
// Options.FaceAddrs gives a face a listener of its own besides, served at
// its root, for SDKs that want a bare host. Fault injection (faults.go:
// throttling, 5xx, latency; seeded) and per-operation request counters wrap
// every face's operations; the face answers an injected fault in its own
// shape (Face.WriteFault: the local face 429 with Retry-After, an AWS face
// 400 with the code Throttling). Both are driven by the Server's Go API and
// the /admin endpoints; a face can be given switches of its own
// (SetFaceFaults) to fault one cloud's clients only. The admin endpoints and the Cloud's Go API also play
// the actors a real cloud has besides its API clients: the quotas (ApplyGroup
// and SetCapacity refuse increases beyond them with QuotaExceeded), an
// external autoscaler that changes only a group's capacity (SetCapacity),
// and instance-level faults (SetGroupFaults: the next instances boot with a
// wrong bootstrap token and never join). The /admin/groups endpoints take
// ?face=&scope= to reach another face's group.
//
// # HTTPS and the cloud's CA
//
// A face whose clients speak only HTTPS (HTTPSFace: the Azure face) is
// served on a listener of its own (Options.FaceAddrs; default 127.0.0.1:0,
// and for `mpool cloud` the port after --addr's, 8791) with TLS. Its
// certificate (127.0.0.1, ::1, localhost) is signed by the cloud's own CA,
// created on first start and kept in DataDir (ca.crt, ca.key, tls.crt,
// tls.key), so a restarted cloud keeps it. Clients trust Server.CA (the PEM;
// CertPool makes a pool of it) or the file Server.CAFile / FaceEndpoint.CAFile
// — never by turning verification off. FaceLines prints the face's https URL
// and the CA file.
//
// # The Azure face
//
// AzureFace (face_azure*.go, wire types in package azureapi) is Microsoft
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
// Limits: any subscription and resource group name is accepted without
// being created; one region's SKUs everywhere; no instance views, NICs, disks or
// extensions (kept in the model as sent, not simulated); scale-in victims
// are the core's (failed, then zone-balanced newest first), not Azure's
// scale-in policy.
//
// # The AWS face
//
// AWSFace (face_aws*.go, wire types in package awsapi) is Amazon EC2 Auto
// Scaling (API 2011-01-01) and the part of Amazon EC2 (2016-11-15) a
// machine pool needs, over the AWS Query protocol (form-encoded POST with
// Action and Version; XML answers in each service's namespace with
// ResponseMetadata/RequestId or requestId; errors as Auto Scaling's
// <ErrorResponse><Error><Type/><Code/><Message/></Error><RequestId/> and
// EC2's <Response><Errors><Error><Code/><Message/></Error></Errors><RequestID/>),
// as the unmodified AWS SDK for Go v2 and the AWS CLI speak them. It is
// served over plain HTTP on a listener of its own (ListenerFace; FaceAddrs
// or 127.0.0.1:0) and under /aws/; clients set BaseEndpoint (or
// AWS_ENDPOINT_URL) to Server.FaceURL("aws") with static credentials. The
// service is the SigV4 credential scope's (else the Version's).
//
// Every request is verified as Signature Version 4 (canonical request,
// string to sign, the HMAC key chain; face_aws_auth.go, no SDK) against the
// face's access keys: AWSDefaultAccessKeyID / AWSDefaultSecretAccessKey in
// account AWSDefaultAccountID until removed; AWSSetKey, AWSDeleteKey and
// AWSKeys manage keys (persisted face data), AWSFace.Keys adds fixed ones.
// A wrong secret is 403 SignatureDoesNotMatch (EC2: 401 AuthFailure), an
// unknown key 403 InvalidClientTokenId (EC2: 401 AuthFailure), a date more
// than 15 minutes off 403 SignatureDoesNotMatch "Signature expired: ..."
// (EC2: 400 RequestExpired). The account and the scope's region are the
// core scope AWSScope(account, region) ("<account>/<region>").
//
// Auto Scaling: Create/Update/Describe/DeleteAutoScalingGroup(s),
// SetDesiredCapacity, TerminateInstanceInAutoScalingGroup,
// CreateOrUpdateTags, DeleteTags, DescribeScalingActivities,
// Suspend/ResumeProcesses (face_aws_processes.go: Launch, Terminate,
// ReplaceUnhealthy, HealthCheck and InstanceRefresh take effect) and
// Start/Describe/CancelInstanceRefresh (face_aws_refresh.go: min/max
// healthy percentages, warmup, SkipMatching). A group is a
// core group named as sent (its payload: launch template and version as
// named, the resolved version, sizes, subnets, tags). LaunchTemplate (or
// MixedInstancesPolicy's launch template; overrides ignored) by ID or name
// with $Latest, $Default or a number; the core model is the resolved
// version's AMI, instance type, user data (decoded), instance tags plus
// propagated group tags; ModelHash is the tag mpool.dev/model-hash, else
// <template-id>:<version>; the kubelet version the tag
// mpool.dev/kubernetes-version, else the AMI's. A new template version or
// default re-resolves the groups launching $Latest or $Default: new
// instances launch from it, existing ones keep theirs (each records its
// version). Instances: IDs i- + 17 hex digits, providerIDs
// aws:///<zone>/<id>, a private address in the zone's subnet, host names
// ip-10-0-x-y.ec2.internal (us-east-1) or .<region>.compute.internal;
// ds.meta_data local_hostname, hostname, instance_id, instance_type,
// ami_id, local_ipv4, availability_zone, region, account_id. Lifecycle
// states Pending, InService (a failed boot: InService, Unhealthy, replaced
// after the group's HealthCheckGracePeriod), Terminating. Scale-in spares instances ProtectedFromScaleIn and takes
// failed ones, then the fullest zone, other template versions, newest.
// Deletion without ForceDelete is refused while instances remain
// (ResourceInUse; ScalingActivityInProgress while they terminate); the
// group reports "Delete in progress" until they are gone. Errors are
// ValidationError with AWS's messages (sizes, unknown subnets, a template
// that cannot launch: "The image id '[ami-…]' does not exist"),
// AlreadyExists, InvalidNextToken. DescribeAutoScalingGroups pages
// (MaxRecords default 50, at most 100).
//
// EC2: Create/Describe/Modify/DeleteLaunchTemplate(s),
// CreateLaunchTemplateVersion (SourceVersion; at most 10,000 versions),
// DescribeLaunchTemplateVersions, DeleteLaunchTemplateVersions (never the
// default), DescribeInstances (one reservation per instance; filters
// instance-id, instance-state-name, tag:<k>, tag-key, ...; MaxResults
// paging), DescribeImages (AWSKubernetesVersions' CAPA AMIs
// capa-ami-ubuntu-24.04-<v>-<build> of AWSCAPAImageOwner and an Ubuntu
// image; AWSImageID), DescribeSubnets, DescribeVpcs and
// DescribeAvailabilityZones of each account's default VPC in each region
// (10.0.0.0/16, a /20 in each of <region>a, b, c; AWSDefaultVPCID,
// AWSDefaultSubnetIDs; us-east-1a's is AWSDefaultSubnetID). User data is
// at most 16 KB decoded (InvalidParameterValue).
//
// Quota and throttling: AWSFace.VCPUQuota is the Running On-Demand
// Standard vCPU limit per account and region: launches beyond it fail as
// Failed scaling activities ("You have requested more vCPU capacity than
// your current vCPU limit of N allows ...") while the desired capacity
// stays, and the group launches the rest once the quota allows.
// AWSFace.Budgets (off by default) are token buckets per account, region
// and action: AWSEC2Budgets are EC2's documented figures, Auto Scaling's
// (AWSAutoScalingBudgets) are the simulation's choice; an exhausted one
// answers 503 RequestLimitExceeded (EC2) or 400 Throttling (Auto Scaling),
// as injected throttles do; injected server errors are InternalFailure /
// ServiceUnavailable (Auto Scaling), InternalError / Unavailable (EC2).
//
// Not simulated: lifecycle hooks, suspended processes, instance refresh,
// warm pools, launch configurations, RunInstances and other EC2 actions,
// security groups, VPCs besides the default, presigned requests' expiry,
// session tokens (accepted, not checked), terminated instances (they
// vanish once gone).
//
// # The EKS face
//
// EKSFace (face_eks*.go) is Amazon EKS's REST-JSON API with Signature V4
// (service "eks"), with the AWS face's access keys, accounts and regions,
// on a listener of its own: CreateCluster, DescribeCluster, ListClusters
// (EKSCreateCluster registers one from Go; `mpool up` registers
// EKSDefaultClusterName), whose endpoint and CA are the node agent's first
// workload API server's; Create/Describe/List/DeleteNodegroup,
// UpdateNodegroupConfig (scaling, labels, taints, updateConfig),
// UpdateNodegroupVersion (version one minor at a time up to the
// cluster's, release version, launch template version, force),
// DescribeUpdate, ListUpdates, Tag/UntagResource, ListTagsForResource.
// Errors are EKS's (X-Amzn-ErrorType): ResourceNotFoundException,
// ResourceInUseException (an update already runs, a node group not
// ACTIVE), InvalidParameterException, ResourceLimitExceededException
// (EKSFace.MaxNodegroupsPerCluster, MaxNodesPerNodegroup), ThrottlingException
// (429) from EKSFace.Budget (off by default; `mpool cloud --eks-throttle`),
// and injected faults as ThrottlingException / ServerException. Node groups
// report health as EKS does (face_eks_health.go): DEGRADED with
// health.issues AsgInstanceLaunchFailures, AutoScalingGroupNotFound,
// Ec2LaunchTemplateNotFound or NodeCreationFailure while a real cause in
// the simulation lasts, ACTIVE again once it is gone.
//
// A node group's instances are an Auto Scaling group of the AWS face
// (eks-<nodegroup>-<uuid>, listed in resources.autoScalingGroups), so the
// AWS face's DescribeAutoScalingGroups and DescribeInstances show them,
// tagged eks:cluster-name, eks:nodegroup-name, the node group's tags and
// mpool.dev/eks-release (the release they launched from). EKS bootstraps
// them: the face creates a bootstrap token in the workload cluster and
// writes their kubeadm join itself, with EKS's node labels and the node
// group's labels and taints. A background loop, running while a node group
// is CREATING, UPDATING or DELETING, does what EKS does: ACTIVE once every
// node joined (CREATE_FAILED with NodeCreationFailure past
// EKSFace.NodeCreationTimeout); an update surges new nodes and cordons,
// drains (eviction API, PodDisruptionBudgets respected) and terminates old
// ones, at most updateConfig.maxUnavailable at a time, failing with
// PodEvictionFailure when a drain stays blocked past
// EKSFace.PodEvictionTimeout unless forced; a scale-down drains the nodes
// it removes; a deleted node group's Nodes and token are removed.
//
// Not simulated: launch template contents (a template is named, not
// read), DEGRADED, node repair, Fargate, add-ons, access entries, cluster
// changes.
//
// # Adding a face
//
// A new face is its wire types in a subpackage without logic (as localapi
// is the local face's: request and response bodies, error codes; no SDK),
// and the translation in this package (face_<cloud>.go, split by concern
// when it grows):
//
//  1. A type implementing Face. Name is its URL prefix, the Face of its
//     groups' keys (persisted: never rename it) and of its Stats.
//  2. Handler: an http.Handler for the cloud's wire protocol, every cloud
//     operation wrapped with FaceEnv.Wrap(op, h) so it is counted and
//     faulted. Each request maps its cloud's scoping (subscription and
//     resource group; account and region) onto a scope string and calls
//     FaceEnv.Cloud.Scope(name, scope): ApplyGroup, GetGroup, SetCapacity,
//     DeleteInstances, DeleteGroup, ListGroups. The face maps the core's
//     ErrorCodes (NotFound, InvalidParameter, QuotaExceeded, Conflict) onto
//     its cloud's errors, and validates names as its cloud does (the core
//     only refuses empty, overlong or control characters). Authentication
//     (Entra ID tokens, SigV4) is the face's: behind a path prefix,
//     r.RequestURI keeps the path as signed.
//  3. State beyond groups and instances lives in payloads (GroupSpec.Payload
//     when the group is created or changed, Scope.UpdateGroupPayload,
//     Scope.UpdateInstancePayload, Cloud.UpdateFaceData), never in the face
//     value: the cloud restarts and faces are stateless.
//  4. InstanceIdentity: the IDs, providerIDs (azure:///subscriptions/…,
//     aws:///<zone>/<instance-id>), host names and ds.meta_data the real
//     cloud gives its VMs. It runs under the core's lock.
//  5. WriteFault: the cloud's throttling and server-error responses.
//  6. One line in BuiltinFaces. Every Server (`mpool up`, `mpool cloud`,
//     tests) then serves it under /<name>/, prints where, and keeps its
//     groups in the state file.
//
// The tests' acme face (face_acme_test.go, jointest/face_test.go) is a
// complete small example.
package core
