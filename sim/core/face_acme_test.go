package core

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// acmeFace is a toy second face for the core's tests: instance IDs,
// providerIDs, host names and metadata of its own, scoped by account, and
// a group payload (a launch template reference). Its wire protocol is in
// package server's tests.
type acmeFace struct{}

const acmeRegion = "moon-1"

type acmePayload struct {
	LaunchTemplate string `json:"launchTemplate"`
}

func (acmeFace) Name() string { return "acme" }

func (acmeFace) InstanceIdentity(in NewInstance) InstanceIdentity {
	id := fmt.Sprintf("a-%012x", in.Seq)
	host := fmt.Sprintf("ip-10-9-%d-%d.acme.internal", (in.Seq>>8)&0xff, in.Seq&0xff)
	var p acmePayload
	_ = json.Unmarshal(in.GroupPayload, &p)
	return InstanceIdentity{
		ID:         id,
		ProviderID: "acme://" + in.Group.Scope + "/" + id,
		Hostname:   host,
		PrivateIP:  fmt.Sprintf("10.9.%d.%d", (in.Seq>>8)&0xff, in.Seq&0xff),
		Metadata:   map[string]string{MetaRegion: acmeRegion, "account_id": in.Group.Scope},
		Payload:    json.RawMessage(`{"launchTemplate":` + strconv.Quote(p.LaunchTemplate) + `}`),
	}
}

func (acmeFace) WriteFault(w http.ResponseWriter, _ *http.Request, f Fault) { w.WriteHeader(f.Status) }

// Handler serves nothing: the core's tests call the Cloud directly
// (package server's tests serve the whole acme face).
func (acmeFace) Handler(FaceEnv) http.Handler { return http.NotFoundHandler() }
