package core

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/go-logr/logr"
)

// LocalFace is the name of the local face (package localface, wire types in package localapi):
// the face that is always registered, served at the root of the Server's
// URL, whose groups have the empty scope.
const LocalFace = "local"

// Face translates one cloud's wire protocol onto the core. A face owns the
// groups whose GroupKey.Face is its Name; it decides their scopes, how its
// requests map onto the core's calls (Cloud.Scope), what its instances are
// called (InstanceIdentity) and how its errors look on the wire (WriteFault,
// and the mapping of the core's ErrorCodes in its handlers).
//
// A face keeps no state of its own: whatever must outlive a restart lives
// in the core, opaque to it, as a group's or an instance's payload
// (GroupSpec.Payload, Scope.UpdateGroupPayload, Scope.UpdateInstancePayload)
// or as the face's own data (Cloud.UpdateFaceData). Faces are registered
// with Options.Faces.
type Face interface {
	// Name identifies the face: the Face of its groups' keys, its URL path
	// prefix on the Server's listener (/<name>/) and the Face of its request
	// counters. It is a lowercase DNS label and never changes (it is
	// persisted with the face's groups).
	Name() string
	// Handler returns the face's HTTP API, served at the root of the face's
	// base URL (Server.FaceURL). It is called once per place the face is
	// served; env.Wrap must wrap every cloud API operation so it is counted
	// and faulted.
	Handler(env FaceEnv) http.Handler
	// InstanceIdentity names an instance the core is creating in one of the
	// face's groups. It is called with the core's lock held: it must be quick
	// and must not call the Cloud.
	InstanceIdentity(in NewInstance) InstanceIdentity
	// WriteFault answers a request the fault injector failed, in the face's
	// error shape: status code, error code, headers (Retry-After) and body.
	WriteFault(w http.ResponseWriter, r *http.Request, f Fault)
}

// Account is a principal a face's cloud accepts out of the box, and the
// region its clients default to: Azure's tenant, client ID and client
// secret; AWS's access key ID and secret access key.
type Account struct {
	Tenant, ID, Secret string
	Region             string
}

// String is the account as `mpool cloud` and `mpool up` print it, in the
// cloud's words: "tenant T, client C, secret S" for a service principal
// (Tenant set), "service account A, its private key in PEM" for a service
// account key (Secret a PEM private key), else "access key K, secret S"; then ", region R" when
// Region is set.
func (a Account) String() string {
	s := "access key " + a.ID
	switch {
	case strings.HasPrefix(a.Secret, "-----BEGIN"):
		// A service account key (GCP): its private key is not printed.
		s = "service account " + a.ID + ", its private key in PEM"
	case a.Tenant != "":
		s = "tenant " + a.Tenant + ", client " + a.ID + ", secret " + a.Secret
	default:
		s += ", secret " + a.Secret
	}
	if a.Region != "" {
		s += ", region " + a.Region
	}
	return s
}

// FaceEnv is what a face's HTTP handler is built from.
type FaceEnv struct {
	// Cloud is the core.
	Cloud *Cloud
	// Wrap returns h counted in Stats as operation op of this face, with
	// injected faults (latency, throttling, server errors) answered by the
	// face's WriteFault before h runs.
	Wrap func(op string, h http.HandlerFunc) http.HandlerFunc
	// BasePath is the path prefix the handler is served under ("" at the
	// root of a listener, e.g. "/acme"). Requests reach the handler with it
	// stripped from URL.Path and URL.RawPath; RequestURI is as sent (for
	// signature checks over the full path).
	BasePath string
	// Log is the cloud's logger, named after the face.
	Log logr.Logger
}

// AdminFace is a face with admin endpoints of its own, served beside the
// cloud's under /admin/<name>/ and, like them, never faulted or counted:
// what actors other than its API clients do (a Spot interruption) and its
// identities (service principals).
type AdminFace interface {
	Face
	// RegisterAdmin adds the face's admin endpoints to mux; they act on c.
	RegisterAdmin(mux *http.ServeMux, c *Cloud)
}

// NewInstance describes an instance the core is creating, for its face to
// name. It must be treated as read-only.
type NewInstance struct {
	// Group is the instance's group.
	Group GroupKey
	// Seq is the instance's sequence number: unique across the cloud and
	// never reused, even across restarts.
	Seq uint64
	// Ordinal is the number of instances the group created before this
	// one: 0, 1, 2, ... within the group, never reused (a VMSS's instance
	// IDs).
	Ordinal uint64
	// ID is the core's default instance ID (i-%08x of Seq).
	ID string
	// Zone is the zone the core placed the instance in ("" without zones).
	Zone string
	// PrivateIP is the core's default private address.
	PrivateIP string
	// Model is the group's current model (custom data included).
	Model *Model
	// GroupPayload is the group's face payload.
	GroupPayload json.RawMessage
	// AddressInUse reports whether a live instance of the group's face and
	// scope has private address ip, so that a face choosing addresses from
	// a subnet can give each live instance its own, as a cloud does.
	AddressInUse func(ip string) bool
}

// InstanceIdentity is what a face chooses for a new instance. The core
// persists it with the instance and never changes it; the node agent
// registers the Node with ProviderID and, unless the bootstrap data names
// the node otherwise, Hostname as its name.
type InstanceIdentity struct {
	// ID is the instance's ID in the core's API (DeleteInstances, Group
	// snapshots); empty keeps NewInstance.ID. It must be unique within the
	// group and never reused; an ID already in use is replaced by the
	// default.
	ID string
	// ProviderID is the Node's spec.providerID, e.g. azure:///subscriptions/…,
	// aws:///us-east-1a/i-0123…; empty defaults to
	// <face>:///<scope>/<group>/<id>.
	ProviderID string
	// Hostname is the VM's host name: cloud-init's local_hostname, the
	// Node's hostname label and address, and its default name, so it must
	// be a valid Node name (a lowercase DNS-1123 subdomain). Empty defaults
	// to <group>-<id> with dots replaced by dashes.
	Hostname string
	// PrivateIP overrides the core's private address when set.
	PrivateIP string
	// Metadata is the instance data cloud-init exposes as ds.meta_data
	// (e.g. region, or keys of the face's metadata service). The core adds
	// instance_id, local_hostname, local_ipv4 and availability_zone (when
	// zoned) unless the face sets them.
	Metadata map[string]string
	// Payload is the instance's initial face payload (valid JSON, or
	// empty).
	Payload json.RawMessage
	// Hold keeps the instance Creating, neither provisioned nor booted,
	// until the face releases it (Scope.ReleaseInstance): an ASG's launch
	// lifecycle hook (Pending:Wait).
	Hold bool
}

// Keys of Instance.Metadata the core fills in when the face does not.
const (
	MetaInstanceID       = "instance_id"
	MetaLocalHostname    = "local_hostname"
	MetaLocalIPv4        = "local_ipv4"
	MetaAvailabilityZone = "availability_zone"
	MetaRegion           = "region"
)

// FaultKind is the kind of an injected fault.
type FaultKind string

// Fault kinds.
const (
	// FaultThrottle: the client sent too many requests and should retry
	// after Fault.RetryAfter.
	FaultThrottle FaultKind = "Throttle"
	// FaultServerError: the cloud failed transiently.
	FaultServerError FaultKind = "ServerError"
)

// Fault is a failure the injector chose for one request; the face answers
// it in its own shape (Face.WriteFault).
type Fault struct {
	Kind FaultKind
	// Status is the HTTP status the injector drew: 429 for throttling;
	// 500, 502 or 503 for server errors. A face may answer with another
	// status where its cloud does (AWS: 400 with the code Throttling).
	Status int
	// RetryAfter is how long a throttled client should wait, in whole
	// seconds (at least 1s); zero for server errors.
	RetryAfter time.Duration
	// Message is a human-readable message, saying the fault is simulated.
	Message string
}

// GroupKey identifies a scale group: the face that owns it, the scope the
// face chose (an opaque string such as "/subscriptions/x/resourceGroups/y"
// or "aws:123456789012:us-east-1"; empty for the local face) and the name
// within the scope. The same name in two scopes is two groups.
type GroupKey struct {
	Face  string
	Scope string
	Name  string
}

// LocalKey returns the key of the local face's group name.
func LocalKey(name string) GroupKey { return GroupKey{Face: LocalFace, Name: name} }

// String is the key as messages show it: the bare name for the local face,
// <face>:<scope>/<name> otherwise.
func (k GroupKey) String() string {
	if k.Face == LocalFace && k.Scope == "" {
		return k.Name
	}
	return k.Face + ":" + k.Scope + "/" + k.Name
}

func (k GroupKey) less(o GroupKey) bool {
	if k.Face != o.Face {
		return k.Face < o.Face
	}
	if k.Scope != o.Scope {
		return k.Scope < o.Scope
	}
	return k.Name < o.Name
}

// faceName is the syntax of Face.Name.
var faceName = regexp.MustCompile(`^[a-z]([a-z0-9-]{0,30}[a-z0-9])?$`)

// reservedFaceNames are path prefixes the Server serves itself or the local
// face serves at its root.
var reservedFaceNames = map[string]bool{"admin": true, "healthz": true, "v1": true}

// checkFaces validates the faces of Options and returns them by name. The
// local face's name is the core's own: its groups work without it being
// registered.
func checkFaces(faces []Face) (map[string]Face, error) {
	byName := map[string]Face{}
	for _, f := range faces {
		if f == nil {
			return nil, fmt.Errorf("faces: nil face")
		}
		n := f.Name()
		switch {
		case !faceName.MatchString(n):
			return nil, fmt.Errorf("faces: invalid face name %q: must be a lowercase DNS label of at most 32 characters", n)
		case reservedFaceNames[n]:
			return nil, fmt.Errorf("faces: face name %q is reserved", n)
		case byName[n] != nil:
			return nil, fmt.Errorf("faces: face %q registered twice", n)
		}
		byName[n] = f
	}
	return byName, nil
}

// OrDefault is v when it is positive, else def: a face's setting left at
// zero (or set below it) takes the face's default.
func OrDefault[T ~int | ~int32 | ~int64](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}
