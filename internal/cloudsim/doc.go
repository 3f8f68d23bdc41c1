// Package cloudsim is the simulated cloud: a real HTTP server on loopback
// with its own persistent state, startable in-process (Start, for `mpool up`
// and tests) or as its own process (NewCommand, `mpool cloud`), so a manager
// can be killed while the cloud keeps running.
//
// # Core
//
// The core (Cloud; cloud.go, state.go) knows no wire protocol. It holds scale
// groups with a model (including the bootstrap custom data) and a capacity,
// and creates instances to reach the capacity, balanced across the model's
// zones. Instances go Creating → Booting → Running (or Failed, at the group's
// failure rate) after the group's delays plus jitter, and Deleting → gone;
// instance IDs never repeat. A model change does not touch existing
// instances. Simulated time comes from an injected clock, every call first
// applies the transitions due, and a background loop applies them as they
// fall due. State is written to DataDir atomically (temp file + rename),
// batched to at most one write per 200ms and on Stop; a restarted cloud
// resumes booting instances and heartbeats where they were.
//
// # Joining like a real VM
//
// Once an instance is Running, the node agent (package nodeagent) reads its
// custom data as cloud-init (package cloudinit), performs kubeadm's token
// discovery against the JoinConfiguration's apiServerEndpoint (CA pinned by
// caCertHashes, bootstrap token authenticated; a wrong or expired token or a
// wrong CA hash means the instance never joins and its Message says why),
// and registers a Node with providerID local:///<group>/<instance>, labels
// and taints from the join configuration plus zone and instance type, and a
// Lease heartbeat. Deleting an instance powers it off: the heartbeat stops
// and the Node is marked NotReady; deleting the Node is its owner's job.
//
// # Faces and faults
//
// Faces translate wire protocols into the core: face_local.go is the simple
// JSON face of package localapi; Azure and AWS faces will follow. Fault
// injection (faults.go: throttling with Retry-After, 5xx, latency; seeded)
// and per-operation request counters wrap every face; both are driven by the
// Server's Go API and the /admin endpoints. The admin endpoints and the
// Cloud's Go API also play the actors a real cloud has besides its API
// clients: an instance quota across groups (ApplyGroup and SetCapacity
// refuse increases beyond it with QuotaExceeded), an external autoscaler
// that changes only a group's capacity (SetCapacity), and instance-level
// faults (SetGroupFaults: the next instances boot with a wrong bootstrap
// token and never join).
package cloudsim
