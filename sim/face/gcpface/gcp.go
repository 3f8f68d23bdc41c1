package gcpface

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mpool-dev/mpool/sim/admin"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/gcpapi"
)

// GCPFaceName is the name of the GCP face: its groups' Face and its path
// prefix on the Server's listener.
const GCPFaceName = "gcp"

// The simulated GCP's defaults: the project, region and service account
// `mpool up` and the examples use. Any project is accepted; the default
// service account's key (GCPDefaultKey) reaches every project.
const (
	GCPDefaultProject        = "mpool-sim"
	GCPDefaultRegion         = "us-central1"
	GCPDefaultServiceAccount = "mpool@mpool-sim.iam.gserviceaccount.com"
	GCPDefaultKeyID          = "0000000000000000000000000000000000000001"
)

// LabelKubernetesVersion on an instance template is the kubelet version
// its instances' Nodes report, with dashes for dots (v1-30-4).
const LabelKubernetesVersion = "mpool-kubernetes-version"

// GCPFace is the simulated Compute Engine (see the package doc). It is
// registered in BuiltinFaces with its defaults; Options.Faces may replace
// it with one configured otherwise.
type GCPFace struct {
	// OperationDelay is how long after its insertion an operation is DONE
	// (default 200ms).
	OperationDelay time.Duration
	// CPUQuota is the project's vCPU quota per region (the CPUS quota);
	// zero is unlimited. A resize or a new group beyond it is refused with
	// 403 quotaExceeded.
	CPUQuota int
	// TokenLifetime is the lifetime of the access tokens (default 3599s).
	TokenLifetime time.Duration
	// Writes is the per-project budget of writes (inserts, deletes and
	// actions), as Compute Engine's per-minute rate limits; zero is
	// unlimited. Exhausted, it answers 403 rateLimitExceeded.
	Writes core.Budget

	buckets  core.Buckets
	faults   atomic.Uint64
	requests requests
}

// Name implements Face.
func (*GCPFace) Name() string { return GCPFaceName }

// HTTPS implements server.HTTPSFace: Google's clients send bearer tokens
// over TLS only.
func (*GCPFace) HTTPS() bool { return true }

// Describe implements server.FaceDescriber: the default project (the
// server prints the default account).
func (*GCPFace) Describe() string {
	return "project " + GCPDefaultProject + ", token URI <url>/token"
}

// DefaultAccount implements server.AccountFace: the default service
// account (ID), its private key in PEM (Secret), the default project
// (Tenant) and region. A provider builds the key file from them, with the
// face's URL + "/token" as its token URI.
func (*GCPFace) DefaultAccount() core.Account {
	return core.Account{Tenant: GCPDefaultProject, ID: GCPDefaultServiceAccount, Secret: string(defaultKeyPEM()), Region: GCPDefaultRegion}
}

func (f *GCPFace) operationDelay() time.Duration {
	return core.OrDefault(f.OperationDelay, 200*time.Millisecond)
}

func (f *GCPFace) tokenLifetime() time.Duration {
	return core.OrDefault(f.TokenLifetime, 3599*time.Second)
}

// GCPScope is the core scope of a group of project in a zone or region.
func GCPScope(project, location string) string { return project + "/" + location }

// groupPayload is what the face keeps about a group in the core.
type groupPayload struct {
	Name             string               `json:"name"`
	ID               string               `json:"id"`
	Project          string               `json:"project"`
	Zone             string               `json:"zone,omitempty"`
	Region           string               `json:"region,omitempty"`
	Zones            []string             `json:"zones"`
	BaseInstanceName string               `json:"baseInstanceName"`
	Template         string               `json:"template"`
	Description      string               `json:"description,omitempty"`
	UpdatePolicy     *gcpapi.UpdatePolicy `json:"updatePolicy,omitempty"`
	Created          time.Time            `json:"created"`
}

// instancePayload is what the face keeps about an instance.
type instancePayload struct {
	// ID is the instance's numeric ID.
	ID string `json:"id"`
}

// InstanceIdentity implements Face: <baseInstanceName>-<4 characters>
// (distinct for the first 36^4 instances of the cloud), providerID
// gce://<project>/<zone>/<name>, the name as host name.
func (*GCPFace) InstanceIdentity(in core.NewInstance) core.InstanceIdentity {
	p := core.DecodePayload[groupPayload](in.GroupPayload)
	base := p.BaseInstanceName
	if base == "" {
		base = in.Group.Name
	}
	name := base + "-" + suffix(in.Seq)
	sum := sha256.Sum256([]byte(in.Group.String() + "\x00" + strconv.FormatUint(in.Seq, 10)))
	id := strconv.FormatUint(binary.BigEndian.Uint64(sum[:8])>>1, 10)
	payload, _ := json.Marshal(instancePayload{ID: id})
	region := p.Region
	if region == "" {
		region = regionOf(in.Zone)
	}
	return core.InstanceIdentity{
		ID:         name,
		ProviderID: "gce://" + p.Project + "/" + in.Zone + "/" + name,
		Hostname:   name,
		Metadata: map[string]string{
			core.MetaRegion: region,
			"project-id":    p.Project,
			"zone":          in.Zone,
			"name":          name,
			"id":            id,
		},
		Payload: payload,
	}
}

// suffix is the 4-character suffix of the instance of sequence number seq:
// a permutation of [0, 36^4), so distinct for 36^4 consecutive instances.
func suffix(seq uint64) string {
	const space = 36 * 36 * 36 * 36
	n := (seq * 1299709) % space // 1299709 is prime, coprime with 36^4
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 4)
	for i := 3; i >= 0; i-- {
		b[i] = digits[n%36]
		n /= 36
	}
	if b[0] >= '0' && b[0] <= '9' {
		// Keep names readable: a letter first, as Compute Engine's.
		b[0] = digits[10+int(b[0]-'0')]
	}
	return string(b)
}

// regionOf is a zone's region (us-central1-a: us-central1).
func regionOf(zone string) string {
	if i := strings.LastIndexByte(zone, '-'); i > 0 {
		return zone[:i]
	}
	return zone
}

// WriteFault implements Face: throttling as rateLimitExceeded, 403 and
// 429 alternately (Compute Engine answers both), with Retry-After; server
// errors as backendError. The token endpoint answers in its own shape.
func (f *GCPFace) WriteFault(w http.ResponseWriter, r *http.Request, fault core.Fault) {
	if !isComputePath(r) {
		fault.SetRetryAfter(w.Header())
		writeTokenError(w, fault.Status, "temporarily_unavailable", fault.Message)
		return
	}
	if fault.Kind == core.FaultThrottle {
		status := http.StatusTooManyRequests
		if f.faults.Add(1)%2 == 0 {
			status = http.StatusForbidden
		}
		fault.SetRetryAfter(w.Header())
		writeError(w, status, gcpapi.ReasonRateLimitExceeded, "usageLimits", "Rate Limit Exceeded ("+fault.Message+")")
		return
	}
	writeError(w, fault.Status, gcpapi.ReasonBackendError, "global", "Internal error. Please try again or contact Google Support. ("+fault.Message+")")
}

// writeError writes a googleapi error body.
func writeError(w http.ResponseWriter, status int, reason, domain, message string) {
	if domain == "" {
		domain = "global"
	}
	admin.WriteJSON(w, status, gcpapi.ErrorResponse{Error: gcpapi.ErrorBody{
		Code: status, Message: message, Status: statusName(status),
		Errors: []gcpapi.ErrorItem{{Message: message, Domain: domain, Reason: reason}},
	}})
}

func statusName(code int) string {
	switch code {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusConflict:
		return "ALREADY_EXISTS"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	default:
		return "INTERNAL"
	}
}

// writeCloudError maps the core's errors onto Compute Engine's.
func writeCloudError(w http.ResponseWriter, err error, resource string) {
	var e *core.Error
	if !errors.As(err, &e) {
		writeError(w, http.StatusInternalServerError, gcpapi.ReasonBackendError, "", err.Error())
		return
	}
	switch e.Code {
	case core.CodeNotFound:
		writeError(w, http.StatusNotFound, gcpapi.ReasonNotFound, "", fmt.Sprintf("The resource '%s' was not found", resource))
	case core.CodeQuotaExceeded:
		writeError(w, http.StatusForbidden, gcpapi.ReasonQuotaExceeded, "usageLimits", "Quota 'INSTANCES' exceeded. "+e.Message)
	case core.CodeConflict:
		writeError(w, http.StatusBadRequest, gcpapi.ReasonResourceNotReady, "", fmt.Sprintf("The resource '%s' is not ready: %s", resource, e.Message))
	case core.CodeInvalid:
		writeError(w, http.StatusBadRequest, gcpapi.ReasonInvalid, "", e.Message)
	default:
		writeError(w, http.StatusInternalServerError, gcpapi.ReasonBackendError, "", e.Message)
	}
}

// Operation names of the GCP face, as counted in Stats.
const (
	OpGCPToken                   = "gcp.Token"
	OpGCPTemplatesInsert         = "gcp.InstanceTemplates.Insert"
	OpGCPTemplatesGet            = "gcp.InstanceTemplates.Get"
	OpGCPTemplatesList           = "gcp.InstanceTemplates.List"
	OpGCPTemplatesDelete         = "gcp.InstanceTemplates.Delete"
	OpGCPIGMInsert               = "gcp.InstanceGroupManagers.Insert"
	OpGCPIGMGet                  = "gcp.InstanceGroupManagers.Get"
	OpGCPIGMDelete               = "gcp.InstanceGroupManagers.Delete"
	OpGCPIGMResize               = "gcp.InstanceGroupManagers.Resize"
	OpGCPIGMSetInstanceTemplate  = "gcp.InstanceGroupManagers.SetInstanceTemplate"
	OpGCPIGMDeleteInstances      = "gcp.InstanceGroupManagers.DeleteInstances"
	OpGCPIGMListManagedInstances = "gcp.InstanceGroupManagers.ListManagedInstances"
	OpGCPMachineTypesList        = "gcp.MachineTypes.List"
	OpGCPMachineTypesGet         = "gcp.MachineTypes.Get"
	OpGCPOperationsGet           = "gcp.Operations.Get"
	OpGCPOperationsWait          = "gcp.Operations.Wait"
	OpGCPUnknown                 = "gcp.Unknown"
)

// gcpHandler holds the GCP face's operations.
type gcpHandler struct {
	face *GCPFace
	env  core.FaceEnv
}

// Handler implements Face: requests are routed by their path segments;
// those under /compute/ no operation serves are Compute Engine's unknown
// operation, others answered as the token server would.
func (f *GCPFace) Handler(env core.FaceEnv) http.Handler {
	h := &gcpHandler{face: f, env: env}
	ops := env.WrapOps(nil, map[string]http.HandlerFunc{
		OpGCPToken:                   h.token,
		OpGCPTemplatesInsert:         h.api(true, h.insertTemplate),
		OpGCPTemplatesGet:            h.api(false, h.getTemplate),
		OpGCPTemplatesList:           h.api(false, h.listTemplates),
		OpGCPTemplatesDelete:         h.api(true, h.deleteTemplate),
		OpGCPIGMInsert:               h.api(true, h.insertIGM),
		OpGCPIGMGet:                  h.api(false, h.getIGM),
		OpGCPIGMDelete:               h.api(true, h.deleteIGM),
		OpGCPIGMResize:               h.api(true, h.resizeIGM),
		OpGCPIGMSetInstanceTemplate:  h.api(true, h.setInstanceTemplate),
		OpGCPIGMDeleteInstances:      h.api(true, h.deleteInstances),
		OpGCPIGMListManagedInstances: h.api(false, h.listManagedInstances),
		OpGCPMachineTypesList:        h.api(false, h.listMachineTypes),
		OpGCPMachineTypesGet:         h.api(false, h.getMachineType),
		OpGCPOperationsGet:           h.api(false, h.getOperation),
		OpGCPOperationsWait:          h.api(false, h.waitOperation),
		OpGCPUnknown: h.api(false, func(w http.ResponseWriter, r *http.Request) {
			writeError(w, http.StatusNotFound, gcpapi.ReasonNotFound, "", fmt.Sprintf("The simulated Compute Engine does not serve %s %s.", r.Method, r.URL.Path))
		}),
	})
	return &core.Router{Ops: ops, Route: gcpRoutes.Route, Unknown: OpGCPUnknown, IsAPI: isComputePath,
		NotServed: func(w http.ResponseWriter, r *http.Request) {
			writeTokenError(w, http.StatusNotFound, "invalid_request",
				fmt.Sprintf("The simulated Google OAuth 2.0 server does not serve %s %s.", r.Method, r.URL.Path))
		}}
}

// isComputePath reports whether r is one of Compute Engine's (else the
// token server's).
func isComputePath(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/compute/") }

// baseURL is the face's URL as the client reached it.
func (h *gcpHandler) baseURL(r *http.Request) string { return h.env.BaseURL(r) }

// gcpRoutes are the face's operations: the token server's, and Compute
// Engine's below /compute/v1/projects/{project}, each setting the path
// values the operations read (project, location, where: zones, regions or
// global, and name). Paths match case-sensitively, as Google's do.
var gcpRoutes = core.RouteTable{Routes: append([]core.Route{
	core.PostRoute("token", OpGCPToken),
	{Path: gcpGlobal + "/instanceTemplates", Ops: map[string]string{http.MethodPost: OpGCPTemplatesInsert, http.MethodGet: OpGCPTemplatesList}},
	{Path: gcpGlobal + "/instanceTemplates/{name}", Ops: map[string]string{http.MethodGet: OpGCPTemplatesGet, http.MethodDelete: OpGCPTemplatesDelete}},
	core.GetRoute(gcpGlobal+"/operations/{name}", OpGCPOperationsGet),
	core.PostRoute(gcpGlobal+"/operations/{name}/wait", OpGCPOperationsWait),
	core.GetRoute(gcpZone+"/machineTypes", OpGCPMachineTypesList),
	core.GetRoute(gcpZone+"/machineTypes/{name}", OpGCPMachineTypesGet),
}, append(locationRoutes(gcpZone), locationRoutes(gcpRegion)...)...)}

// The paths of a project's global, zonal and regional resources.
const (
	gcpProject = "compute/v1/projects/{project}"
	gcpGlobal  = gcpProject + "/{where=global}"
	gcpZone    = gcpProject + "/{where=zones}/{location}"
	gcpRegion  = gcpProject + "/{where=regions}/{location}"
)

// locationRoutes are the operations on a zone's or a region's resources,
// loc the path of either.
func locationRoutes(loc string) []core.Route {
	igm := loc + "/instanceGroupManagers/{name}"
	return []core.Route{
		core.GetRoute(loc+"/operations/{name}", OpGCPOperationsGet),
		core.PostRoute(loc+"/operations/{name}/wait", OpGCPOperationsWait),
		core.PostRoute(loc+"/instanceGroupManagers", OpGCPIGMInsert),
		{Path: igm, Ops: map[string]string{http.MethodGet: OpGCPIGMGet, http.MethodDelete: OpGCPIGMDelete}},
		core.PostRoute(igm+"/resize", OpGCPIGMResize),
		core.PostRoute(igm+"/setInstanceTemplate", OpGCPIGMSetInstanceTemplate),
		core.PostRoute(igm+"/deleteInstances", OpGCPIGMDeleteInstances),
		core.PostRoute(igm+"/listManagedInstances", OpGCPIGMListManagedInstances),
	}
}

// api checks a compute request's bearer token and, for writes, the
// project's write budget, then serves it.
func (h *gcpHandler) api(write bool, fn http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !h.authorize(w, r) || write && h.repeated(w, r) {
			return
		}
		if write && h.face.Writes.On() {
			if _, wait := h.face.buckets.Take(r.PathValue("project"), h.face.Writes, h.env.Cloud.Clock().Now()); wait > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(int(max(wait.Round(time.Second), time.Second)/time.Second)))
				writeError(w, http.StatusForbidden, gcpapi.ReasonRateLimitExceeded, "usageLimits",
					"Rate Limit Exceeded: Quota exceeded for quota metric 'Write requests' of service 'compute.googleapis.com' for project "+r.PathValue("project")+".")
				return
			}
		}
		fn(w, r)
	}
}
