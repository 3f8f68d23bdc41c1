package core

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mpool-dev/mpool/sim/wire/localapi"
)

// Operation names of the local face, as counted in Stats.
const (
	OpListGroups      = "ListGroups"
	OpGetGroup        = "GetGroup"
	OpPutGroup        = "PutGroup"
	OpDeleteInstances = "DeleteInstances"
	OpDeleteGroup     = "DeleteGroup"
)

// maxBody bounds request bodies (custom data is at most a few hundred KiB).
const maxBody = 8 << 20

// localFace is the simple JSON face the local provider speaks (see package
// localapi for the endpoints), served at the root of the Server's URL. It
// only translates; the core decides. Its groups have the empty scope, its
// instances the providerID local:///<group>/<id> (ProviderID) and the host
// name <group>-<id>.
type localFace struct{}

// Name implements Face.
func (localFace) Name() string { return LocalFace }

// InstanceIdentity implements Face: today's local identities.
func (localFace) InstanceIdentity(in NewInstance) InstanceIdentity {
	return InstanceIdentity{
		ProviderID: ProviderID(in.Group.Name, in.ID),
		Hostname:   hostname(in.Group.Name, in.ID),
	}
}

// WriteFault implements Face: 429 TooManyRequests with Retry-After, or the
// drawn 5xx, as an ErrorResponse.
func (localFace) WriteFault(w http.ResponseWriter, _ *http.Request, f Fault) {
	code := localapi.CodeInternal
	switch {
	case f.Kind == FaultThrottle:
		w.Header().Set("Retry-After", strconv.Itoa(int(f.RetryAfter/time.Second)))
		code = localapi.CodeTooManyRequests
	case f.Status == http.StatusServiceUnavailable:
		code = localapi.CodeUnavailable
	}
	writeLocalError(w, f.Status, code, f.Message)
}

// Handler implements Face.
func (localFace) Handler(env FaceEnv) http.Handler {
	f := &localHandler{cloud: env.Cloud}
	mux := http.NewServeMux()
	h := func(pattern, op string, fn http.HandlerFunc) {
		mux.HandleFunc(pattern, env.Wrap(op, fn))
	}
	h("GET /v1/groups", OpListGroups, f.list)
	h("GET /v1/groups/{name}", OpGetGroup, f.get)
	h("PUT /v1/groups/{name}", OpPutGroup, f.put)
	h("POST /v1/groups/{name}/deleteInstances", OpDeleteInstances, f.deleteInstances)
	h("DELETE /v1/groups/{name}", OpDeleteGroup, f.delete)
	return mux
}

// localHandler serves the local face's endpoints.
type localHandler struct {
	cloud *Cloud
}

func (f *localHandler) list(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, localapi.GroupList{Groups: f.cloud.ListGroups()})
}

func (f *localHandler) get(w http.ResponseWriter, r *http.Request) {
	g, err := f.cloud.GetGroup(r.PathValue("name"))
	if err != nil {
		writeCloudError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, toLocalGroup(g))
}

func (f *localHandler) put(w http.ResponseWriter, r *http.Request) {
	var spec localapi.GroupSpec
	if !readJSON(w, r, &spec) {
		return
	}
	g, err := f.cloud.ApplyGroup(r.PathValue("name"), GroupSpec{
		Capacity:   spec.Capacity,
		ModelHash:  spec.ModelHash,
		Model:      fromLocalModel(spec.Model),
		Simulation: fromLocalSimulation(spec.Simulation),
	})
	if err != nil {
		writeCloudError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, toLocalGroup(g))
}

func (f *localHandler) deleteInstances(w http.ResponseWriter, r *http.Request) {
	var req localapi.DeleteInstancesRequest
	if !readJSON(w, r, &req) {
		return
	}
	g, err := f.cloud.DeleteInstances(r.PathValue("name"), req.IDs)
	if err != nil {
		writeCloudError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, toLocalGroup(g))
}

func (f *localHandler) delete(w http.ResponseWriter, r *http.Request) {
	g, err := f.cloud.DeleteGroup(r.PathValue("name"))
	if err != nil {
		writeCloudError(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, toLocalGroup(g))
}

func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeLocalError(w, http.StatusBadRequest, localapi.CodeInvalidParameter, fmt.Sprintf("Decoding the request body: %v", err))
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeLocalError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, localapi.ErrorResponse{Error: localapi.ErrorBody{Code: code, Message: message}})
}

// writeCloudError maps the core's error codes onto HTTP.
func writeCloudError(w http.ResponseWriter, err error) {
	var e *Error
	if !errors.As(err, &e) {
		writeLocalError(w, http.StatusInternalServerError, localapi.CodeInternal, err.Error())
		return
	}
	status := map[ErrorCode]int{
		CodeNotFound:      http.StatusNotFound,
		CodeInvalid:       http.StatusBadRequest,
		CodeQuotaExceeded: http.StatusConflict,
		CodeConflict:      http.StatusConflict,
	}[e.Code]
	if status == 0 {
		status = http.StatusInternalServerError
	}
	writeLocalError(w, status, string(e.Code), e.Message)
}

func fromLocalModel(m localapi.Model) Model {
	return Model{InstanceType: m.InstanceType, Image: m.Image, Zones: m.Zones, CustomData: m.CustomData, Tags: m.Tags, Extra: m.Extra}
}

func fromLocalSimulation(s *localapi.Simulation) *SimulationPatch {
	if s == nil {
		return nil
	}
	d := func(v *metav1.Duration) *time.Duration {
		if v == nil {
			return nil
		}
		return &v.Duration
	}
	return &SimulationPatch{
		ProvisionDelay: d(s.ProvisionDelay),
		BootDelay:      d(s.BootDelay),
		BootJitter:     d(s.BootJitter),
		DeleteDelay:    d(s.DeleteDelay),
		FailureRate:    s.FailureRate,
	}
}

func toLocalSimulation(s Simulation) localapi.Simulation {
	d := func(v time.Duration) *metav1.Duration { return &metav1.Duration{Duration: v} }
	rate := s.FailureRate
	return localapi.Simulation{
		ProvisionDelay: d(s.ProvisionDelay),
		BootDelay:      d(s.BootDelay),
		BootJitter:     d(s.BootJitter),
		DeleteDelay:    d(s.DeleteDelay),
		FailureRate:    &rate,
	}
}

func toLocalGroup(g *Group) localapi.Group {
	out := localapi.Group{
		Name:      g.Name,
		Capacity:  g.Capacity,
		ModelHash: g.ModelHash,
		CreatedAt: g.CreatedAt,
		Model: localapi.Model{
			InstanceType: g.Model.InstanceType, Image: g.Model.Image, Zones: g.Model.Zones,
			Tags: g.Model.Tags, Extra: g.Model.Extra,
		},
		Simulation: toLocalSimulation(g.Simulation),
		Instances:  make([]localapi.Instance, len(g.Instances)),
	}
	if op := g.Operation; op != nil {
		out.Operation = &localapi.Operation{ID: op.ID, Type: op.Type, StartedAt: op.StartedAt, Message: op.Message}
	}
	for i, in := range g.Instances {
		out.Instances[i] = localapi.Instance{
			ID:         in.ID,
			ProviderID: in.ProviderID,
			Hostname:   in.Hostname,
			PrivateIP:  in.PrivateIP,
			Zone:       in.Zone,
			State:      string(in.State),
			CreatedAt:  in.CreatedAt,
			ModelHash:  in.ModelHash,
			Message:    in.Message,
			Join:       string(in.Join),
			NodeName:   in.NodeName,
		}
	}
	return out
}
