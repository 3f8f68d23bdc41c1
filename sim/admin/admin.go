// Package admin is the simulated cloud's own JSON over HTTP, in the shapes
// of package localapi: the admin endpoints (/admin/...) that every Server
// serves and that faces add to (core.AdminFace), and the local face's API.
// It holds the conversions between the core's types and localapi's and the
// handlers' plumbing: strict decoding, answers, and the core's errors
// mapped onto HTTP.
package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/localapi"
)

// MaxBody bounds request bodies (custom data is at most a few hundred KiB).
const MaxBody = 8 << 20

// ReadJSON decodes r's body into v, strictly; on failure it answers 400
// InvalidParameter and returns false.
func ReadJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(io.LimitReader(r.Body, MaxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		WriteLocalError(w, http.StatusBadRequest, localapi.CodeInvalidParameter, fmt.Sprintf("Decoding the request body: %v", err))
		return false
	}
	return true
}

// WriteJSON answers status with v as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// WriteLocalError answers status with a localapi.ErrorResponse.
func WriteLocalError(w http.ResponseWriter, status int, code, message string) {
	WriteJSON(w, status, localapi.ErrorResponse{Error: localapi.ErrorBody{Code: code, Message: message}})
}

// WriteError maps the core's error codes onto HTTP.
func WriteError(w http.ResponseWriter, err error) {
	var e *core.Error
	if !errors.As(err, &e) {
		WriteLocalError(w, http.StatusInternalServerError, localapi.CodeInternal, err.Error())
		return
	}
	status := map[core.ErrorCode]int{
		core.CodeNotFound:      http.StatusNotFound,
		core.CodeInvalid:       http.StatusBadRequest,
		core.CodeQuotaExceeded: http.StatusConflict,
		core.CodeConflict:      http.StatusConflict,
	}[e.Code]
	if status == 0 {
		status = http.StatusInternalServerError
	}
	WriteLocalError(w, status, string(e.Code), e.Message)
}

// FromLocalModel is the core model of a local face model.
func FromLocalModel(m localapi.Model) core.Model {
	return core.Model{InstanceType: m.InstanceType, Image: m.Image, Zones: m.Zones, CustomData: m.CustomData, Tags: m.Tags, Extra: m.Extra}
}

// FromLocalSimulation is the core patch of the local face's simulation knobs.
func FromLocalSimulation(s *localapi.Simulation) *core.SimulationPatch {
	if s == nil {
		return nil
	}
	d := func(v *metav1.Duration) *time.Duration {
		if v == nil {
			return nil
		}
		return &v.Duration
	}
	return &core.SimulationPatch{
		ProvisionDelay: d(s.ProvisionDelay),
		BootDelay:      d(s.BootDelay),
		BootJitter:     d(s.BootJitter),
		DeleteDelay:    d(s.DeleteDelay),
		FailureRate:    s.FailureRate,
	}
}

// ToLocalSimulation is the local face's view of simulation knobs.
func ToLocalSimulation(s core.Simulation) localapi.Simulation {
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

// ToLocalGroup is the local face's view of a group.
func ToLocalGroup(g *core.Group) localapi.Group {
	out := localapi.Group{
		Name:      g.Name,
		Capacity:  g.Capacity,
		ModelHash: g.ModelHash,
		CreatedAt: g.CreatedAt,
		Model: localapi.Model{
			InstanceType: g.Model.InstanceType, Image: g.Model.Image, Zones: g.Model.Zones,
			Tags: g.Model.Tags, Extra: g.Model.Extra,
		},
		Simulation: ToLocalSimulation(g.Simulation),
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
			Fault:      string(in.Fault),
		}
	}
	return out
}

// HandlePut registers an admin PUT handler: the body decoded into In, set
// applied, its answer written as JSON (or its error as a cloud error).
func HandlePut[In any](mux *http.ServeMux, pattern string, set func(*http.Request, In) (any, error)) {
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		var in In
		if !ReadJSON(w, r, &in) {
			return
		}
		out, err := set(r, in)
		if err != nil {
			WriteError(w, err)
			return
		}
		WriteJSON(w, http.StatusOK, out)
	})
}

// GroupOrError is the admin answer for a call that returns the changed group.
func GroupOrError(g *core.Group, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return ToLocalGroup(g), nil
}

// ToLocalFaults is the admin API's view of fault switches.
func ToLocalFaults(f core.Faults) localapi.Faults {
	return localapi.Faults{
		ThrottleRate: f.ThrottleRate,
		RetryAfter:   metav1.Duration{Duration: f.RetryAfter},
		ErrorRate:    f.ErrorRate,
		Latency:      metav1.Duration{Duration: f.Latency},
	}
}
