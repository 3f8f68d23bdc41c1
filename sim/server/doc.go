// Package server serves the simulated cloud over HTTP: the core (package
// core) with the faces it is given, the admin endpoints, the fault injector
// and the request counters, on loopback listeners (Start). It knows no face
// but the local one, which every Server serves at its root; package
// cloudsim adds the built-in ones.
//
// # Faces and faults
//
// The Server serves, on one listener, the admin endpoints, the local face at
// the root (package localface: the JSON API of package localapi, unchanged
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
// wrong bootstrap token and never join; SetInstanceFault and
// SetGroupInstanceFault, served under /admin/instances/{id}/fault and
// /admin/groups/{name}/instance-faults: an instance's kubelet stops or
// reports NotReady, it never joins, or it fails its cloud's status check).
// The /admin/groups endpoints take
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
package server
