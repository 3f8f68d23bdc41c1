package localface

import (
	"net/http"

	"github.com/mpool-dev/mpool/sim/admin"

	"github.com/mpool-dev/mpool/sim/core"
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

// Face is the simple JSON face the local provider speaks (see package
// localapi for the endpoints), served at the root of the Server's URL. It
// only translates; the core decides. Its groups have the empty scope, its
// instances the providerID local:///<group>/<id> (ProviderID) and the host
// name <group>-<id>.
type Face struct{}

// Name implements Face.
func (Face) Name() string { return core.LocalFace }

// InstanceIdentity implements Face: today's local identities.
func (Face) InstanceIdentity(in core.NewInstance) core.InstanceIdentity {
	return core.InstanceIdentity{
		ProviderID: core.ProviderID(in.Group.Name, in.ID),
	}
}

// WriteFault implements Face: 429 TooManyRequests with Retry-After, or the
// drawn 5xx, as an ErrorResponse.
func (Face) WriteFault(w http.ResponseWriter, _ *http.Request, f core.Fault) {
	code := localapi.CodeInternal
	switch {
	case f.Kind == core.FaultThrottle:
		f.SetRetryAfter(w.Header())
		code = localapi.CodeTooManyRequests
	case f.Status == http.StatusServiceUnavailable:
		code = localapi.CodeUnavailable
	}
	admin.WriteLocalError(w, f.Status, code, f.Message)
}

// Handler implements Face.
func (Face) Handler(env core.FaceEnv) http.Handler {
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
	cloud *core.Cloud
}

func (f *localHandler) list(w http.ResponseWriter, _ *http.Request) {
	admin.WriteJSON(w, http.StatusOK, localapi.GroupList{Groups: f.cloud.ListGroups()})
}

func (f *localHandler) get(w http.ResponseWriter, r *http.Request) {
	g, err := f.cloud.GetGroup(r.PathValue("name"))
	writeGroup(w, http.StatusOK, g, err)
}

func (f *localHandler) put(w http.ResponseWriter, r *http.Request) {
	var spec localapi.GroupSpec
	if !admin.ReadJSON(w, r, &spec) {
		return
	}
	g, err := f.cloud.ApplyGroup(r.PathValue("name"), core.GroupSpec{
		Capacity:   spec.Capacity,
		ModelHash:  spec.ModelHash,
		Model:      admin.FromLocalModel(spec.Model),
		Simulation: admin.FromLocalSimulation(spec.Simulation),
	})
	writeGroup(w, http.StatusOK, g, err)
}

func (f *localHandler) deleteInstances(w http.ResponseWriter, r *http.Request) {
	var req localapi.DeleteInstancesRequest
	if !admin.ReadJSON(w, r, &req) {
		return
	}
	g, err := f.cloud.DeleteInstances(r.PathValue("name"), req.IDs)
	writeGroup(w, http.StatusOK, g, err)
}

func (f *localHandler) delete(w http.ResponseWriter, r *http.Request) {
	g, err := f.cloud.DeleteGroup(r.PathValue("name"))
	writeGroup(w, http.StatusAccepted, g, err)
}

// writeGroup answers with the group a call returned, or with its error.
func writeGroup(w http.ResponseWriter, status int, g *core.Group, err error) {
	if err != nil {
		admin.WriteError(w, err)
		return
	}
	admin.WriteJSON(w, status, admin.ToLocalGroup(g))
}
