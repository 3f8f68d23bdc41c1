// Package gcpface is the simulated cloud's GCP face (GCPFace, wire types in
// package gcpapi): Google's OAuth 2.0 token endpoint and the part of the
// Compute Engine v1 REST API a machine pool needs, as the unmodified
// cloud.google.com/go/compute REST clients speak them. It is an HTTPSFace
// (clients send bearer tokens over TLS), served on a listener of its own;
// clients set option.WithEndpoint to Server.FaceURL("gcp") and trust the
// cloud's CA.
//
// # Authentication
//
// POST /token takes the OAuth 2.0 JWT bearer grant
// (grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer, assertion=<JWT>)
// that Google's client libraries send with a service account key: the
// assertion is an RS256 JWT whose iss is the service account's email, whose
// kid (optional) names the key and whose aud is the token URI; it is verified
// against the public keys the face knows for that account (GCPDefaultKey,
// derived from a fixed seed so that every face and `mpool up` agree on it,
// and those GCPCreateKey adds, persisted as face data). A wrong signature,
// an unknown or deleted key or account, or an expired assertion is 400
// invalid_grant, as Google answers. The access token (an HS256 JWT signed
// with a key of the face's) is accepted by the compute API for an hour; a
// missing, foreign or expired one is 401 with reason authError.
//
// # Compute Engine
//
// Under /compute/v1/projects/{project}/: global/instanceTemplates (insert,
// get, list, delete; a template used by a group is resourceInUseByAnotherResource),
// zones/{zone}/instanceGroupManagers and regions/{region}/instanceGroupManagers
// (insert, get, delete, resize, setInstanceTemplate, deleteInstances,
// listManagedInstances with maxResults and pageToken), zones/{zone}/machineTypes
// (list, get) and the zonal, regional and global operations (get, wait). A
// group is a core group in scope "<project>/<zone or region>" named as sent;
// its model is its template's: the machine type, the boot disk's source image,
// the group's zones (a zonal group's zone, a regional group's distribution
// policy zones, default the region's first three), the metadata item
// user-data as custom data, the labels as tags; the kubelet version is the
// template's label mpool-kubernetes-version (v1-30-4 is v1.30.4), else
// the image's name (…-v1-30-4…), else the core's default. Instances are
// named <baseInstanceName>-<4 characters>, with providerIDs
// gce://<project>/<zone>/<name> and host names their names; each records the
// template it was created from (version.instanceTemplate), which is the
// core's ModelHash of the instance. The group's update policy is kept as sent
// (mpool sends OPPORTUNISTIC): the face never replaces instances by itself.
//
// Writes answer an operation that completes asynchronously, OperationDelay
// (default 200ms) after it was inserted; operations/{name}/wait waits for it
// (at most two minutes, as Compute Engine). A write that carries a
// requestId the face has seen within the hour is not performed again: it
// is answered with the first write's operation, as Compute Engine does. A
// group's fingerprint changes with every write to it. Errors are googleapi error bodies
// ({"error":{"code","message","errors":[{"reason","domain","message"}]}})
// with Compute Engine's reasons: notFound, alreadyExists, invalid,
// resourceInUseByAnotherResource, quotaExceeded (403, when the core's
// instance quota or the face's CPUQuota per region is exhausted; the
// message names the quota, its limit and region), rateLimitExceeded (an
// injected throttle: 403 or 429 with Retry-After, alternately, as Compute
// Engine answers both) and backendError (injected server errors). A machine
// type that its group's zone does not offer (see MachineTypes) is refused
// when the group is created or given the template (400 invalid, naming the
// machine type and zone).
package gcpface
