package azureface

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mpool-dev/mpool/sim/admin"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/azureapi"
)

// vmProvisioningState maps an instance's state onto a VM's
// provisioningState.
func vmProvisioningState(s core.InstanceState) string {
	switch s {
	case core.StateCreating, core.StateBooting:
		return azureapi.ProvisioningCreating
	case core.StateFailed:
		return azureapi.ProvisioningFailed
	case core.StateDeleting:
		return azureapi.ProvisioningDeleting
	}
	return azureapi.ProvisioningSucceeded
}

func readVMPayload(in *core.Instance) azureVMPayload {
	return core.DecodePayload[azureVMPayload](in.Payload)
}

// vmCommon fills what Uniform and Flexible VMs share.
func vmCommon(g *core.Group, gp azureGroupPayload, in *core.Instance, vp azureVMPayload) (map[string]any, map[string]any) {
	tags := map[string]any{}
	for k, v := range vp.Tags {
		tags[k] = v
	}
	res := map[string]any{
		"name":     vp.Name,
		"location": gp.Location,
		"tags":     tags,
	}
	if in.Zone != "" {
		res["zones"] = []string{in.Zone}
	}
	os := map[string]any{"computerName": vp.ComputerName}
	if vp.AdminUsername != "" {
		os["adminUsername"] = vp.AdminUsername
	}
	props := map[string]any{
		"vmId":              vp.VMID,
		"provisioningState": vmProvisioningState(in.State),
		"timeCreated":       in.CreatedAt.UTC().Format(time.RFC3339Nano),
		"hardwareProfile":   map[string]any{"vmSize": vp.VMSize},
		"osProfile":         os,
	}
	if vp.Image != nil {
		props["storageProfile"] = map[string]any{"imageReference": vp.Image, "osDisk": map[string]any{"osType": "Linux"}}
	}
	res["properties"] = props
	return res, props
}

// vmssVMResource is a Uniform scale set VM as ARM returns it.
func vmssVMResource(g *core.Group, gp azureGroupPayload, in *core.Instance) map[string]any {
	vp := readVMPayload(in)
	res, props := vmCommon(g, gp, in, vp)
	res["id"] = azureVMSSID(gp.Subscription, gp.ResourceGroup, gp.Name) + "/virtualMachines/" + in.ID
	res["type"] = azureapi.TypeVirtualMachineScaleSetVMs
	res["instanceId"] = in.ID
	res["sku"] = map[string]any{"name": vp.VMSize, "tier": "Standard"}
	props["latestModelApplied"] = in.ModelHash == g.ModelHash
	return res
}

// flexVMResource is a Flexible mode VM as ARM returns it.
func flexVMResource(g *core.Group, gp azureGroupPayload, in *core.Instance) map[string]any {
	vp := readVMPayload(in)
	res, props := vmCommon(g, gp, in, vp)
	res["id"] = "/subscriptions/" + gp.Subscription + "/resourceGroups/" + gp.ResourceGroup + "/providers/Microsoft.Compute/virtualMachines/" + in.ID
	res["type"] = azureapi.TypeVirtualMachines
	props["virtualMachineScaleSet"] = map[string]any{"id": azureVMSSID(gp.Subscription, gp.ResourceGroup, gp.Name)}
	props["latestModelApplied"] = in.ModelHash == g.ModelHash
	return res
}

// getGroupOr404 returns the scale set named in the path, or answers 404.
func (h *azureHandler) getGroupOr404(w http.ResponseWriter, r *http.Request, vmss string) (*core.Group, bool) {
	g, err := h.readGroup(h.scope(r), groupName(vmss))
	if err != nil {
		if core.CodeOf(err) == core.CodeNotFound {
			armNotFound(w, azureapi.TypeVirtualMachineScaleSets, vmss, r.PathValue("rg"))
			return nil, false
		}
		writeAzureCloudError(w, err)
		return nil, false
	}
	return g, true
}

// listVMSSVMs serves a Uniform scale set's VMs, PageSize per page, the
// next page at nextLink ($skiptoken: the last instance ID returned).
func (h *azureHandler) listVMSSVMs(w http.ResponseWriter, r *http.Request) {
	g, ok := h.getGroupOr404(w, r, r.PathValue("vmss"))
	if !ok {
		return
	}
	gp := readAzurePayload(g)
	if gp.Mode == azureapi.OrchestrationFlexible {
		writeARMError(w, http.StatusBadRequest, azureapi.CodeOperationNotAllowed,
			fmt.Sprintf("Operation 'VMScaleSetVMs.List' is not allowed on scale set '%s' with orchestration mode 'Flexible'; list its VMs as Microsoft.Compute/virtualMachines with $filter='virtualMachineScaleSet/id' eq '<id>'.", gp.Name))
		return
	}
	after := int64(-1)
	if t := r.URL.Query().Get("$skiptoken"); t != "" {
		n, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			writeARMError(w, http.StatusBadRequest, azureapi.CodeInvalidParameter, "The $skiptoken '"+t+"' is invalid.")
			return
		}
		after = n
	}
	out := []map[string]any{}
	last := ""
	more := false
	for i := range g.Instances {
		in := &g.Instances[i]
		n, err := strconv.ParseInt(in.ID, 10, 64)
		if err != nil || n <= after {
			continue
		}
		if len(out) == h.face.pageSize() {
			more = true
			break
		}
		out = append(out, vmssVMResource(g, gp, in))
		last = in.ID
	}
	writePage(w, r, h.baseURL(r), out, more, last)
}

// writePage answers a list page, with nextLink (the request with
// $skiptoken=token) when more follow.
func writePage(w http.ResponseWriter, r *http.Request, base string, items []map[string]any, more bool, token string) {
	body := map[string]any{"value": items}
	if more {
		q := r.URL.Query()
		q.Set("$skiptoken", token)
		body["nextLink"] = base + r.URL.EscapedPath() + "?" + q.Encode()
	}
	admin.WriteJSON(w, http.StatusOK, body)
}

// getVMSSVM serves one Uniform scale set VM.
func (h *azureHandler) getVMSSVM(w http.ResponseWriter, r *http.Request) {
	g, ok := h.getGroupOr404(w, r, r.PathValue("vmss"))
	if !ok {
		return
	}
	gp := readAzurePayload(g)
	for i := range g.Instances {
		if strings.EqualFold(g.Instances[i].ID, r.PathValue("instance")) && gp.Mode == azureapi.OrchestrationUniform {
			admin.WriteJSON(w, http.StatusOK, vmssVMResource(g, gp, &g.Instances[i]))
			return
		}
	}
	armNotFound(w, azureapi.TypeVirtualMachineScaleSetVMs, r.PathValue("vmss")+"/"+r.PathValue("instance"), r.PathValue("rg"))
}

// deleteVMSSVM deletes one Uniform scale set VM (the capacity drops by
// one); 204 when it does not exist.
func (h *azureHandler) deleteVMSSVM(w http.ResponseWriter, r *http.Request) {
	g, ok := h.getGroupOr404(w, r, r.PathValue("vmss"))
	if !ok {
		return
	}
	for _, in := range g.Instances {
		if strings.EqualFold(in.ID, r.PathValue("instance")) && in.State != core.StateDeleting {
			h.deleteVMs(w, r, g.Name, []string{in.ID})
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// flexGroupOf returns the core name of the scale set of a Flexible VM
// named <vmss>_<8 hex>.
func flexGroupOf(vm string) string {
	i := strings.LastIndexByte(vm, '_')
	if i <= 0 {
		return ""
	}
	return groupName(vm[:i])
}

// listVMs serves the Flexible mode VMs of a resource group (or a
// subscription), optionally $filter=virtualMachineScaleSet/id eq '<id>';
// $skiptoken is the last VM's scope, scale set and ordinal.
func (h *azureHandler) listVMs(w http.ResponseWriter, r *http.Request) {
	var onlyID string
	if f := r.URL.Query().Get("$filter"); f != "" {
		id, ok := parseEqFilter(f, "virtualMachineScaleSet/id")
		if !ok {
			writeARMError(w, http.StatusBadRequest, azureapi.CodeInvalidParameter,
				"The $filter '"+f+"' is not supported: only 'virtualMachineScaleSet/id' eq '<scale set ID>'.")
			return
		}
		onlyID = id
	}
	var after struct {
		Scope, Name string
		Ordinal     uint64
	}
	hasAfter := false
	if t := r.URL.Query().Get("$skiptoken"); t != "" {
		raw, err := b64.DecodeString(t)
		if err != nil || json.Unmarshal(raw, &after) != nil {
			writeARMError(w, http.StatusBadRequest, azureapi.CodeInvalidParameter, "The $skiptoken '"+t+"' is invalid.")
			return
		}
		hasAfter = true
	}
	out := []map[string]any{}
	more := false
	var token string
	for _, k := range h.keysOf(r) {
		if hasAfter && (k.Scope < after.Scope || k.Scope == after.Scope && k.Name < after.Name) {
			continue
		}
		g, err := h.readGroup(h.env.Cloud.Scope(k.Face, k.Scope), k.Name)
		if err != nil {
			continue
		}
		gp := readAzurePayload(g)
		if gp.Mode != azureapi.OrchestrationFlexible ||
			onlyID != "" && !strings.EqualFold(onlyID, azureVMSSID(gp.Subscription, gp.ResourceGroup, gp.Name)) {
			continue
		}
		for i := range g.Instances {
			in := &g.Instances[i]
			vp := readVMPayload(in)
			if hasAfter && k.Scope == after.Scope && k.Name == after.Name && vp.Ordinal <= after.Ordinal {
				continue
			}
			if len(out) == h.face.pageSize() {
				more = true
				break
			}
			out = append(out, flexVMResource(g, gp, in))
			b, _ := json.Marshal(map[string]any{"Scope": k.Scope, "Name": k.Name, "Ordinal": vp.Ordinal})
			token = b64.EncodeToString(b)
		}
		if more {
			break
		}
	}
	writePage(w, r, h.baseURL(r), out, more, token)
}

// flexVM finds a Flexible VM by name, or answers 404.
func (h *azureHandler) flexVM(w http.ResponseWriter, r *http.Request) (*core.Group, *core.Instance, bool) {
	name := r.PathValue("vm")
	g, err := h.readGroup(h.scope(r), flexGroupOf(name))
	if err == nil && readAzurePayload(g).Mode == azureapi.OrchestrationFlexible {
		for i := range g.Instances {
			if strings.EqualFold(g.Instances[i].ID, name) {
				return g, &g.Instances[i], true
			}
		}
	}
	armNotFound(w, azureapi.TypeVirtualMachines, name, r.PathValue("rg"))
	return nil, nil, false
}

// getVM serves one Flexible mode VM.
func (h *azureHandler) getVM(w http.ResponseWriter, r *http.Request) {
	if g, in, ok := h.flexVM(w, r); ok {
		admin.WriteJSON(w, http.StatusOK, flexVMResource(g, readAzurePayload(g), in))
	}
}

// deleteVM deletes one Flexible mode VM: its scale set's capacity drops by
// one; 204 when it does not exist.
func (h *azureHandler) deleteVM(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("vm")
	g, err := h.scope(r).GetGroup(flexGroupOf(name))
	if err != nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	for _, in := range g.Instances {
		if strings.EqualFold(in.ID, name) && in.State != core.StateDeleting {
			r.SetPathValue("vmss", readAzurePayload(g).Name)
			h.deleteVMs(w, r, g.Name, []string{in.ID})
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}
