// Package cloudsim is the simulated cloud: a real HTTP server on loopback
// with its own persistent state, startable in-process (Start, for `mpool up`
// and tests) or as its own process (NewCommand, `mpool cloud`), so a manager
// can be killed while the cloud keeps running. It is one core with several
// faces: the core owns groups, instances, boot, join, quotas, faults and the
// persisted state and knows no wire protocol; each face (local today; Azure
// ARM + Entra ID, AWS Auto Scaling + EC2, EKS next) translates one cloud's
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
package cloudsim
