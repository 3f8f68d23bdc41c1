// Package core is the simulated cloud's core: scale groups and their
// instances, boot, join, quotas, the persisted state and the one scale-in
// policy and throttle every face uses (PickScaleIn, Budget). It knows no
// wire protocol and no face: each face (package localface; azureface:
// Azure ARM + Entra ID; awsface: AWS Auto Scaling + EC2; eksface: EKS) is
// a package of its own under sim/face that translates one cloud's protocol, identities,
// errors and limits onto the core's exported API (Cloud, Scope, Face,
// FaceEnv). Package server serves the faces, the admin endpoints and the
// fault injector; package cloudsim wires the built-in faces together for
// `mpool up`, `mpool cloud` and tests.
//
// # Core
//
// The core (Cloud; cloud.go, simulate.go, scalein.go, budget.go, state.go) holds scale groups, each
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
// An instance can be made unhealthy (InstanceFault: Cloud.SetInstanceFault,
// Scope.SetInstanceFault, Scope.SetGroupInstanceFault; instancefaults.go):
// its kubelet stops (the Node goes Unknown after the node monitor grace
// period), reports NotReady, never joins, or the instance fails its cloud's
// own status check, which the faces' health checks read. The fault is
// persisted with the instance and shown in its snapshot.
//
// # Adding a face
//
// A new face is its wire types in a package without logic under sim/wire
// (as localapi is the local face's: request and response bodies, error
// codes; no SDK), and the translation in a package of its own under
// sim/face (sim/face/<cloud>face, split by concern when it grows), using
// only this package's exported API:
//
//  1. A type implementing Face. Name is its URL prefix, the Face of its
//     groups' keys (persisted: never rename it) and of its Stats.
//  2. Handler: an http.Handler for the cloud's wire protocol, every cloud
//     operation wrapped with FaceEnv.Wrap(op, h) so it is counted and
//     faulted (FaceEnv.WrapOps wraps a table of them; Router serves it,
//     answering what no operation serves with the face's unknown
//     operation, or in another shape off the API's paths; a RouteTable
//     names a request's operation by method and path, setting the path
//     values the operations read). Each request maps its cloud's scoping (subscription and
//     resource group; account and region) onto a scope string and calls
//     FaceEnv.Cloud.Scope(name, scope): ApplyGroup, GetGroup, SetCapacity,
//     DeleteInstances, DeleteGroup, ListGroups. The face maps the core's
//     ErrorCodes (NotFound, InvalidParameter, QuotaExceeded, Conflict) onto
//     its cloud's errors, and validates names as its cloud does (the core
//     only refuses empty, overlong or control characters). Authentication
//     (Entra ID tokens, SigV4) is the face's: behind a path prefix,
//     r.RequestURI keeps the path as signed. A face that issues its own
//     access tokens signs them with FaceKey's key through SignToken and
//     checks them with VerifyToken; FaceEnv.BaseURL is its URL as a
//     request reached it, for the links it answers with.
//  3. State beyond groups and instances lives in payloads (GroupSpec.Payload
//     when the group is created or changed, Scope.UpdateGroupPayload,
//     Scope.UpdateInstancePayload, Cloud.UpdateFaceData), never in the face
//     value: the cloud restarts and faces are stateless. A face keeps each
//     as JSON of a type of its own: DecodePayload reads one, EditPayload
//     (a PayloadFunc) and UpdateFaceDataAs change one, ReplacePayload
//     writes one.
//  4. InstanceIdentity: the IDs, providerIDs (azure:///subscriptions/…,
//     aws:///<zone>/<instance-id>), host names and ds.meta_data the real
//     cloud gives its VMs. It runs under the core's lock.
//  5. WriteFault: the cloud's throttling and server-error responses.
//  6. Optionally AdminFace: admin endpoints of its own (its identities, what
//     actors other than its clients do).
//  7. One line in cloudsim.BuiltinFaces. Every Server (`mpool up`, `mpool cloud`,
//     tests) then serves it under /<name>/, prints where, and keeps its
//     groups in the state file.
//
// The tests' acme face (package server's acme_test.go, jointest/face_test.go) is a
// complete small example.
package core
