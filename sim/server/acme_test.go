package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/mpool-dev/mpool/sim/admin"
	"github.com/mpool-dev/mpool/sim/core"
)

// acmeFace is a toy second face, proving that a face plugs in beside the
// local one: a JSON protocol scoped by account, instance IDs, providerIDs
// and host names of its own, a group payload (a launch template reference)
// and AWS-shaped throttling (400 with the code Throttling, no Retry-After).
//
//	PUT    /accounts/{account}/groups/{name}  acmeGroupSpec → acmeGroup
//	GET    /accounts/{account}/groups/{name}  → acmeGroup
//	GET    /accounts/{account}/groups         → {"groups": [...]}
type acmeFace struct{}

const acmeRegion = "moon-1"

type acmeGroupSpec struct {
	Size           int32    `json:"size"`
	Zones          []string `json:"zones,omitempty"`
	UserData       []byte   `json:"userData,omitempty"`
	LaunchTemplate string   `json:"launchTemplate,omitempty"`
}

type acmePayload struct {
	LaunchTemplate string `json:"launchTemplate"`
}

type acmeInstance struct {
	ID         string `json:"id"`
	ProviderID string `json:"providerID"`
	Hostname   string `json:"hostname"`
	State      string `json:"state"`
}

type acmeGroup struct {
	Name           string         `json:"name"`
	Account        string         `json:"account"`
	Size           int32          `json:"size"`
	LaunchTemplate string         `json:"launchTemplate"`
	Instances      []acmeInstance `json:"instances"`
}

type acmeError struct {
	Type    string `json:"__type"`
	Message string `json:"message"`
}

func (acmeFace) Name() string { return "acme" }

func (acmeFace) InstanceIdentity(in core.NewInstance) core.InstanceIdentity {
	id := fmt.Sprintf("a-%012x", in.Seq)
	host := fmt.Sprintf("ip-10-9-%d-%d.acme.internal", (in.Seq>>8)&0xff, in.Seq&0xff)
	var p acmePayload
	_ = json.Unmarshal(in.GroupPayload, &p)
	return core.InstanceIdentity{
		ID:         id,
		ProviderID: "acme://" + in.Group.Scope + "/" + id,
		Hostname:   host,
		PrivateIP:  fmt.Sprintf("10.9.%d.%d", (in.Seq>>8)&0xff, in.Seq&0xff),
		Metadata:   map[string]string{core.MetaRegion: acmeRegion, "account_id": in.Group.Scope},
		Payload:    json.RawMessage(`{"launchTemplate":` + strconv.Quote(p.LaunchTemplate) + `}`),
	}
}

func (acmeFace) WriteFault(w http.ResponseWriter, _ *http.Request, f core.Fault) {
	if f.Kind == core.FaultThrottle {
		admin.WriteJSON(w, http.StatusBadRequest, acmeError{Type: "Throttling", Message: "Rate exceeded"})
		return
	}
	admin.WriteJSON(w, f.Status, acmeError{Type: "InternalFailure", Message: f.Message})
}

func (acmeFace) Handler(env core.FaceEnv) http.Handler {
	mux := http.NewServeMux()
	scope := func(r *http.Request) core.Scope { return env.Cloud.Scope("acme", r.PathValue("account")) }
	mux.HandleFunc("GET /accounts/{account}/groups", env.Wrap("acme.ListGroups", func(w http.ResponseWriter, r *http.Request) {
		admin.WriteJSON(w, http.StatusOK, map[string][]string{"groups": scope(r).ListGroups()})
	}))
	mux.HandleFunc("GET /accounts/{account}/groups/{name}", env.Wrap("acme.DescribeGroup", func(w http.ResponseWriter, r *http.Request) {
		g, err := scope(r).GetGroup(r.PathValue("name"))
		writeAcme(w, g, err)
	}))
	mux.HandleFunc("PUT /accounts/{account}/groups/{name}", env.Wrap("acme.PutGroup", func(w http.ResponseWriter, r *http.Request) {
		var spec acmeGroupSpec
		if err := json.NewDecoder(r.Body).Decode(&spec); err != nil {
			admin.WriteJSON(w, http.StatusBadRequest, acmeError{Type: "ValidationError", Message: err.Error()})
			return
		}
		payload, _ := json.Marshal(acmePayload{LaunchTemplate: spec.LaunchTemplate})
		g, err := scope(r).ApplyGroup(r.PathValue("name"), core.GroupSpec{
			Capacity: spec.Size,
			Model:    core.Model{Zones: spec.Zones, CustomData: spec.UserData},
			Payload:  payload,
		})
		writeAcme(w, g, err)
	}))
	return mux
}

func writeAcme(w http.ResponseWriter, g *core.Group, err error) {
	var e *core.Error
	switch {
	case errors.As(err, &e) && e.Code == core.CodeNotFound:
		admin.WriteJSON(w, http.StatusBadRequest, acmeError{Type: "ValidationError", Message: e.Message})
		return
	case err != nil:
		admin.WriteJSON(w, http.StatusBadRequest, acmeError{Type: string(core.CodeOf(err)), Message: err.Error()})
		return
	}
	var p acmePayload
	_ = json.Unmarshal(g.Payload, &p)
	out := acmeGroup{Name: g.Name, Account: g.Scope, Size: g.Capacity, LaunchTemplate: p.LaunchTemplate, Instances: []acmeInstance{}}
	for _, in := range g.Instances {
		out.Instances = append(out.Instances, acmeInstance{ID: in.ID, ProviderID: in.ProviderID, Hostname: in.Hostname, State: string(in.State)})
	}
	admin.WriteJSON(w, http.StatusOK, out)
}
