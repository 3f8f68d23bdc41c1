package azureface

import (
	"encoding/base64"
	"encoding/json"
	"github.com/mpool-dev/mpool/sim/admin"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/azureapi"
)

// Kinds of the Azure face's long-running operations.
const (
	azureOpWrite           = "write"
	azureOpDeleteGroup     = "delete"
	azureOpDeleteInstances = "deleteInstances"
)

// azureOp is a long-running operation. The face keeps no record of it: the
// operation ID in its status URL is the operation itself (base64url JSON),
// and its status is computed from the core's state on every poll, so it
// survives a restart of the cloud.
type azureOp struct {
	Kind string `json:"k"`
	// Scope is the group's core scope; Name its core name.
	Scope string   `json:"s"`
	Name  string   `json:"n"`
	IDs   []string `json:"i,omitempty"`
	// Start is when the operation started (UnixNano of the cloud's clock).
	Start int64 `json:"t"`
}

// setOperationHeaders sets Azure-AsyncOperation (and, with location, the
// Location of the operation's result) for op.
func (h *azureHandler) setOperationHeaders(w http.ResponseWriter, r *http.Request, op azureOp, region string, location bool) {
	h.setProviderOperationHeaders(w, r, azureapi.ResourceProvider, op, region, location)
}

// setProviderOperationHeaders sets them under the resource provider
// provider's operations.
func (h *azureHandler) setProviderOperationHeaders(w http.ResponseWriter, r *http.Request, provider string, op azureOp, region string, location bool) {
	op.Scope = azureScope(r.PathValue("sub"), r.PathValue("rg"))
	b, _ := json.Marshal(op)
	id := base64.RawURLEncoding.EncodeToString(b)
	api := r.URL.Query().Get("api-version")
	u := h.baseURL(r) + "/subscriptions/" + url.PathEscape(r.PathValue("sub")) + "/providers/" + provider + "/locations/" +
		url.PathEscape(region) + "/operations/" + id + "?api-version=" + url.QueryEscape(api)
	w.Header().Set("Azure-AsyncOperation", u)
	if location {
		w.Header().Set("Location", u+"&monitor=true")
	}
}

// operationStatus serves an operation's status: the Azure-AsyncOperation
// body, or with ?monitor=true (its Location) 202 while in progress and 200
// when done.
func (h *azureHandler) operationStatus(w http.ResponseWriter, r *http.Request) {
	raw, err := base64.RawURLEncoding.DecodeString(r.PathValue("operation"))
	var op azureOp
	if err != nil || json.Unmarshal(raw, &op) != nil || !strings.HasPrefix(op.Scope, "/subscriptions/"+strings.ToLower(r.PathValue("sub"))+"/") {
		writeARMError(w, http.StatusNotFound, azureapi.CodeNotFound, "The operation '"+r.PathValue("operation")+"' was not found.")
		return
	}
	start := time.Unix(0, op.Start)
	st := azureapi.OperationStatus{Name: r.PathValue("operation")[:min(36, len(r.PathValue("operation")))], StartTime: start.UTC(), Status: azureapi.StatusSucceeded}
	g, gerr := h.env.Cloud.Scope(AzureFaceName, op.Scope).GetGroup(op.Name)
	switch op.Kind {
	case azureOpWrite:
		switch {
		case gerr != nil:
			st.Status = azureapi.StatusFailed
			st.Error = &azureapi.ErrorBody{Code: "Canceled", Message: "The scale set was deleted while the operation was in progress."}
		default:
			st.Status = writeStatus(g, start)
			if st.Status == azureapi.StatusFailed {
				st.Error = &azureapi.ErrorBody{Code: "VMExtensionProvisioningError",
					Message: "One or more VMs of the scale set failed to provision (simulated boot failure)."}
			}
		}
	case azureOpDeleteGroup:
		if gerr == nil {
			st.Status = azureapi.StatusInProgress
		}
	case aksOpWrite, aksOpDelete, aksOpDeleteMachines:
		st.Status, st.Error = h.aksOperationStatus(op, start)
	case azureOpDeleteInstances:
		if gerr == nil && slices.ContainsFunc(g.Instances, func(in core.Instance) bool { return slices.Contains(op.IDs, in.ID) }) {
			st.Status = azureapi.StatusInProgress
		}
	default:
		writeARMError(w, http.StatusNotFound, azureapi.CodeNotFound, "The operation was not found.")
		return
	}
	if st.Status != azureapi.StatusInProgress {
		end := h.env.Cloud.Clock().Now().UTC()
		st.EndTime = &end
	}
	if r.URL.Query().Get("monitor") == "true" {
		if st.Status == azureapi.StatusInProgress {
			w.Header().Set("Location", h.baseURL(r)+r.URL.RequestURI())
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if st.Status == azureapi.StatusFailed {
			admin.WriteJSON(w, http.StatusOK, azureapi.ErrorResponse{Error: *st.Error})
			return
		}
		w.WriteHeader(http.StatusOK)
		return
	}
	admin.WriteJSON(w, http.StatusOK, st)
}
