package azureface

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mpool-dev/mpool/sim/admin"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/azureapi"
)

// azureMaxCustomData is Azure's limit on osProfile.customData: 87,380
// characters of base64 (64 KiB decoded).
const azureMaxCustomData = 87380

// vmssNameRE is Azure's rule for scale set names: 1 to 64 characters,
// alphanumerics, underscores, periods and hyphens, starting with an
// alphanumeric and ending with an alphanumeric or underscore.
var vmssNameRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]{0,62}[A-Za-z0-9_])?$`)

// computerNamePrefixRE is the simulation's rule for computerNamePrefix
// (host names must be DNS labels): alphanumerics and hyphens, starting with
// an alphanumeric, at most 58 characters (Azure's Linux limit).
var computerNamePrefixRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,57}$`)

func (h *azureHandler) scope(r *http.Request) core.Scope {
	return h.env.Cloud.Scope(AzureFaceName, azureScope(r.PathValue("sub"), r.PathValue("rg")))
}

// groupName is the core's name of a scale set: ARM names are
// case-insensitive.
func groupName(vmss string) string { return strings.ToLower(vmss) }

func readAzurePayload(g *core.Group) azureGroupPayload {
	return core.DecodePayload[azureGroupPayload](g.Payload)
}

func armNotFound(w http.ResponseWriter, typ, name, rg string) {
	writeARMError(w, http.StatusNotFound, azureapi.CodeResourceNotFound,
		fmt.Sprintf("The Resource '%s/%s' under resource group '%s' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix", typ, name, rg))
}

// readARMBody decodes a JSON request body into a generic map (numbers kept).
func readARMBody(w http.ResponseWriter, r *http.Request) (map[string]any, bool) {
	b, err := io.ReadAll(io.LimitReader(r.Body, admin.MaxBody))
	if err == nil && len(bytes.TrimSpace(b)) == 0 {
		err = fmt.Errorf("the request body is empty")
	}
	var m map[string]any
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		err = dec.Decode(&m)
	}
	if err != nil {
		writeARMError(w, http.StatusBadRequest, azureapi.CodeInvalidRequestContent,
			fmt.Sprintf("The request content was invalid and could not be deserialized: %v", err))
		return nil, false
	}
	return m, true
}

// child returns m[k] as a map, creating it when create is set.
func child(m map[string]any, create bool, keys ...string) map[string]any {
	for _, k := range keys {
		c, ok := m[k].(map[string]any)
		if !ok {
			if !create {
				return nil
			}
			c = map[string]any{}
			m[k] = c
		}
		m = c
	}
	return m
}

// mergePatch applies an RFC 7386 JSON merge patch to dst.
func mergePatch(dst, patch map[string]any) {
	for k, v := range patch {
		switch pv := v.(type) {
		case nil:
			delete(dst, k)
		case map[string]any:
			d, ok := dst[k].(map[string]any)
			if !ok {
				d = map[string]any{}
				dst[k] = d
			}
			mergePatch(d, pv)
		default:
			dst[k] = v
		}
	}
}

func deepCopy(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	_ = dec.Decode(&out)
	return out
}

// putVMSS serves PUT .../virtualMachineScaleSets/{vmss}: create or replace.
func (h *azureHandler) putVMSS(w http.ResponseWriter, r *http.Request) {
	res, ok := readARMBody(w, r)
	if !ok {
		return
	}
	name := r.PathValue("vmss")
	if !vmssNameRE.MatchString(name) {
		writeARMError(w, http.StatusBadRequest, azureapi.CodeInvalidResourceName,
			fmt.Sprintf("The resource name '%s' is invalid: a scale set name has 1 to 64 alphanumerics, underscores, periods and hyphens, starts with an alphanumeric and ends with an alphanumeric or underscore.", name))
		return
	}
	sc := h.scope(r)
	existing, err := sc.GetGroup(groupName(name))
	if err != nil && core.CodeOf(err) != core.CodeNotFound {
		writeAzureCloudError(w, err)
		return
	}
	if err != nil {
		existing = nil
	}
	h.applyVMSS(w, r, sc, existing, res)
}

// patchVMSS serves PATCH .../virtualMachineScaleSets/{vmss}: a merge patch
// of the scale set as last written.
func (h *azureHandler) patchVMSS(w http.ResponseWriter, r *http.Request) {
	patch, ok := readARMBody(w, r)
	if !ok {
		return
	}
	sc := h.scope(r)
	g, ok := h.scaleSet(w, r, sc, groupName(r.PathValue("vmss")))
	if !ok {
		return
	}
	p := readAzurePayload(g)
	res := deepCopy(p.Resource)
	if res == nil {
		res = map[string]any{}
	}
	if _, ok := child(patch, false, "sku")["capacity"]; !ok {
		child(res, true, "sku")["capacity"] = json.Number(strconv.Itoa(int(g.Capacity)))
	}
	mergePatch(res, patch)
	h.applyVMSS(w, r, sc, g, res)
}

// applyVMSS validates the scale set res (as PUT, or merged by PATCH) and
// applies it to the core; existing is the group when it exists.
func (h *azureHandler) applyVMSS(w http.ResponseWriter, r *http.Request, sc core.Scope, existing *core.Group, res map[string]any) {
	name := r.PathValue("vmss")
	gname := groupName(name)
	var view azureapi.ScaleSetView
	if b, err := json.Marshal(res); err != nil || json.Unmarshal(b, &view) != nil {
		writeARMError(w, http.StatusBadRequest, azureapi.CodeInvalidRequestContent, fmt.Sprintf("The request content was invalid and could not be deserialized: %v", err))
		return
	}
	bad := func(code, target, format string, args ...any) {
		writeARMTargetError(w, http.StatusBadRequest, code, target, format, args...)
	}
	var old *azureGroupPayload
	if existing != nil {
		p := readAzurePayload(existing)
		old = &p
		if existing.Operation != nil && existing.Operation.Type == core.OperationDelete {
			writeARMError(w, http.StatusConflict, azureapi.CodeConflict,
				fmt.Sprintf("The scale set '%s' is being deleted; it cannot be updated.", name))
			return
		}
	}

	loc := strings.ToLower(strings.ReplaceAll(view.Location, " ", ""))
	if loc == "" {
		bad(azureapi.CodeInvalidParameter, "location", "Required parameter 'location' is missing (null).")
		return
	}
	if !slices.ContainsFunc(h.face.locations(), func(l string) bool { return strings.EqualFold(l, loc) }) {
		bad("LocationNotAvailableForResourceType", "location",
			"The provided location '%s' is not available for resource type 'Microsoft.Compute/virtualMachineScaleSets'. List of available regions for the resource type is '%s'.",
			view.Location, strings.Join(h.face.locations(), ","))
		return
	}
	if old != nil && !strings.EqualFold(old.Location, loc) {
		bad(azureapi.CodePropertyChangeNotAllowed, "location", "Changing property 'location' is not allowed.")
		return
	}
	if view.Sku == nil || view.Sku.Name == "" {
		bad(azureapi.CodeInvalidParameter, "sku.name", "Required parameter 'sku.name' is missing (null).")
		return
	}
	sku := findAzureSku(view.Sku.Name)
	resID := azureVMSSID(r.PathValue("sub"), r.PathValue("rg"), name)
	if sku == nil {
		bad(azureapi.CodeSkuNotAvailable, "sku.name",
			"The requested VM size for resource '%s' is currently not available in location '%s' for subscription '%s'. Please try another size or deploy to a different location or zones. See https://aka.ms/azureskunotavailable for details.",
			view.Sku.Name, loc, r.PathValue("sub"))
		return
	}
	for _, z := range view.Zones {
		if !slices.Contains(sku.Zones, z) {
			bad(azureapi.CodeInvalidParameter, "zones",
				"The requested VM size '%s' is not available in zone '%s' of location '%s' (available zones: %s). Please try another size or zones.",
				sku.Name, z, loc, strings.Join(sku.Zones, ", "))
			return
		}
	}
	mode := azureapi.OrchestrationUniform
	var props map[string]any
	if view.Properties != nil {
		props = child(res, false, "properties")
		if view.Properties.OrchestrationMode != "" {
			mode = view.Properties.OrchestrationMode
		}
	}
	switch {
	case strings.EqualFold(mode, azureapi.OrchestrationUniform):
		mode = azureapi.OrchestrationUniform
	case strings.EqualFold(mode, azureapi.OrchestrationFlexible):
		mode = azureapi.OrchestrationFlexible
	default:
		bad(azureapi.CodeInvalidParameter, "properties.orchestrationMode", "The value '%s' of properties.orchestrationMode is not one of Uniform, Flexible.", mode)
		return
	}
	if old != nil && old.Mode != mode {
		bad(azureapi.CodePropertyChangeNotAllowed, "properties.orchestrationMode", "Changing property 'orchestrationMode' is not allowed.")
		return
	}
	if target, msg := checkRepairs(&view); msg != "" {
		bad(azureapi.CodeInvalidParameter, target, "%s", msg)
		return
	}
	capacity := int32(0)
	switch {
	case view.Sku.Capacity != nil:
		if *view.Sku.Capacity < 0 || *view.Sku.Capacity > 1000 {
			bad(azureapi.CodeInvalidParameter, "sku.capacity", "The value %d of sku.capacity is not within 0 and 1000.", *view.Sku.Capacity)
			return
		}
		capacity = int32(*view.Sku.Capacity)
	case existing != nil:
		capacity = existing.Capacity
	}
	var prof map[string]any
	if props != nil {
		prof = child(props, false, "virtualMachineProfile")
	}
	if prof == nil && (mode == azureapi.OrchestrationUniform || capacity > 0) {
		bad(azureapi.CodeInvalidParameter, "properties.virtualMachineProfile", "Required parameter 'virtualMachineProfile' is missing (null).")
		return
	}

	// The VM profile: computer names, image, custom data.
	var prefix, adminUser string
	var image map[string]any
	var customData []byte
	keepCustomData := true
	if prof != nil {
		vp := view.Properties.VirtualMachineProfile
		if vp.OSProfile == nil {
			bad(azureapi.CodeInvalidParameter, "properties.virtualMachineProfile.osProfile", "Required parameter 'osProfile' is missing (null).")
			return
		}
		prefix, adminUser = vp.OSProfile.ComputerNamePrefix, vp.OSProfile.AdminUsername
		if prefix == "" && mode == azureapi.OrchestrationUniform {
			bad(azureapi.CodeInvalidParameter, "properties.virtualMachineProfile.osProfile.computerNamePrefix", "Required parameter 'computerNamePrefix' is missing (null).")
			return
		}
		if prefix != "" && !computerNamePrefixRE.MatchString(prefix) {
			bad(azureapi.CodeInvalidParameter, "properties.virtualMachineProfile.osProfile.computerNamePrefix",
				"Computer name prefix '%s' is invalid: it must be 1 to 58 alphanumerics and hyphens, starting with an alphanumeric.", prefix)
			return
		}
		if vp.StorageProfile == nil || vp.StorageProfile.ImageReference == nil {
			bad(azureapi.CodeInvalidParameter, "properties.virtualMachineProfile.storageProfile.imageReference", "Required parameter 'imageReference' is missing (null).")
			return
		}
		image = child(prof, false, "storageProfile", "imageReference")
		if cd := vp.OSProfile.CustomData; cd != nil {
			keepCustomData = false
			dec, err := base64.StdEncoding.DecodeString(*cd)
			if err != nil || len(*cd) > azureMaxCustomData {
				bad(azureapi.CodeInvalidParameter, "customData",
					"Custom data in OSProfile must be in Base64 encoding and with a maximum length of %d characters.", azureMaxCustomData)
				return
			}
			customData = dec
			delete(child(prof, false, "osProfile"), "customData")
		}
	}
	if keepCustomData && existing != nil {
		cd, err := sc.CustomData(gname)
		if err != nil {
			writeAzureCloudError(w, err)
			return
		}
		customData = cd
	}
	if err := h.checkVCPUQuota(r, sku, gname, existing, capacity, loc); err != nil {
		writeARMError(w, http.StatusConflict, azureapi.CodeOperationNotAllowed, err.Error())
		return
	}

	// The stored resource: as sent, without what the face computes.
	for _, k := range []string{"id", "name", "type", "etag"} {
		delete(res, k)
	}
	delete(child(res, true, "sku"), "capacity")
	if props != nil {
		for _, k := range []string{"provisioningState", "uniqueId", "timeCreated"} {
			delete(props, k)
		}
	}
	res["location"] = loc

	now := h.env.Cloud.Clock().Now()
	p := azureGroupPayload{
		Resource: res, Name: name, Subscription: r.PathValue("sub"), ResourceGroup: r.PathValue("rg"),
		Location: loc, Mode: mode, ComputerNamePrefix: strings.ToLower(prefix), AdminUsername: adminUser, Image: image,
		Writing: azureapi.ProvisioningCreating, OpStart: now,
	}
	if old != nil {
		p.UniqueID, p.TimeCreated, p.Writing = old.UniqueID, old.TimeCreated, azureapi.ProvisioningUpdating
		p.Name, p.Subscription, p.ResourceGroup = old.Name, old.Subscription, old.ResourceGroup
	} else {
		sum := sha256.Sum256([]byte(resID + now.String()))
		p.UniqueID, p.TimeCreated = core.UUIDFrom(sum[:16]), now
	}
	payload, err := json.Marshal(p)
	if err != nil {
		writeARMError(w, http.StatusInternalServerError, azureapi.CodeInternalServerError, err.Error())
		return
	}
	tags := map[string]string{}
	for k, v := range view.Tags {
		if v != nil {
			tags[k] = *v
		}
	}
	model := core.Model{
		InstanceType: sku.Name,
		Image:        imageString(image),
		Zones:        view.Zones,
		CustomData:   customData,
		Tags:         tags,
		Extra: map[string]string{
			core.ExtraCPU:    strconv.Itoa(sku.VCPUs),
			core.ExtraMemory: strconv.Itoa(int(sku.MemoryGB*1024)) + "Mi",
		},
	}
	if v := kubernetesVersion(tags, image); v != "" {
		model.Extra[core.ExtraVersion] = v
	}
	hash := tags[AzureTagModelHash]
	if hash == "" {
		b, _ := json.Marshal(map[string]any{"sku": sku.Name, "zones": view.Zones, "profile": prof})
		sum := sha256.Sum256(b)
		hash = hex.EncodeToString(sum[:8])
	}
	g, err := sc.ApplyGroup(gname, core.GroupSpec{Capacity: capacity, ModelHash: hash, Model: model, Payload: payload})
	if err != nil {
		writeAzureCloudError(w, err)
		return
	}
	status := http.StatusOK
	if existing == nil {
		status = http.StatusCreated
	}
	h.setOperationHeaders(w, r, azureOp{Kind: azureOpWrite, Name: gname, Start: now.UnixNano()}, loc, false)
	admin.WriteJSON(w, status, h.vmssResource(g))
}

// checkVCPUQuota refuses a capacity that takes the subscription's vCPUs of
// the SKU's family in loc above the face's VCPUQuota.
func (h *azureHandler) checkVCPUQuota(r *http.Request, sku *azureSku, gname string, existing *core.Group, capacity int32, loc string) error {
	limit, ok := h.face.VCPUQuota[sku.Family]
	if !ok || limit <= 0 || existing != nil && capacity <= existing.Capacity && existing.Model.InstanceType == sku.Name {
		return nil
	}
	sub := strings.ToLower(r.PathValue("sub"))
	own := azureScope(r.PathValue("sub"), r.PathValue("rg"))
	used := 0
	for _, k := range h.env.Cloud.Groups() {
		if k.Face != AzureFaceName || !strings.HasPrefix(k.Scope, "/subscriptions/"+sub+"/") || k.Scope == own && k.Name == gname {
			continue
		}
		g, err := h.env.Cloud.Scope(k.Face, k.Scope).GetGroup(k.Name)
		if err != nil {
			continue
		}
		s := findAzureSku(g.Model.InstanceType)
		if s == nil || s.Family != sku.Family || !strings.EqualFold(readAzurePayload(g).Location, loc) {
			continue
		}
		for _, in := range g.Instances {
			if in.State != core.StateDeleting {
				used += s.VCPUs
			}
		}
	}
	need := int(capacity) * sku.VCPUs
	if used+need <= limit {
		return nil
	}
	return fmt.Errorf("Operation could not be completed as it results in exceeding approved %s Cores quota. Additional details - Deployment Model: Resource Manager, Location: %s, Current Limit: %d, Current Usage: %d, Additional Required: %d, (Minimum) New Limit Required: %d. Submit a request for Quota increase at https://aka.ms/ProdportalCRP by specifying parameters listed in the 'Details' section for deployment to succeed.",
		sku.Family, loc, limit, used, need, used+need)
}

// imageString is the core's Image of an image reference:
// publisher:offer:sku:version, or the image's resource ID.
func imageString(img map[string]any) string {
	s := func(k string) string { v, _ := img[k].(string); return v }
	for _, k := range []string{"id", "sharedGalleryImageId", "communityGalleryImageId"} {
		if v := s(k); v != "" {
			return v
		}
	}
	if s("publisher") == "" && s("offer") == "" {
		return ""
	}
	return s("publisher") + ":" + s("offer") + ":" + s("sku") + ":" + s("version")
}

var (
	capzImageVersion = regexp.MustCompile(`^([1-9])([0-9]{2})\.([0-9]+)\.[0-9]+$`)
	semverVersion    = regexp.MustCompile(`^v?([0-9]+)\.([0-9]+)\.([0-9]+)$`)
)

// kubernetesVersion is the kubelet version of a scale set's VMs: its
// AzureTagKubernetesVersion tag, else derived from its image's version
// (CAPZ's reference images 130.4.20240717 → v1.30.4; gallery 1.30.4 →
// v1.30.4); "" for the core's default.
func kubernetesVersion(tags map[string]string, img map[string]any) string {
	if v := tags[AzureTagKubernetesVersion]; v != "" {
		if !strings.HasPrefix(v, "v") {
			v = "v" + v
		}
		return v
	}
	ver, _ := img["version"].(string)
	if id, _ := img["id"].(string); ver == "" && id != "" {
		ver = id[strings.LastIndexByte(id, '/')+1:]
	}
	if m := capzImageVersion.FindStringSubmatch(ver); m != nil {
		minor, _ := strconv.Atoi(m[2])
		return fmt.Sprintf("v%s.%d.%s", m[1], minor, m[3])
	}
	if m := semverVersion.FindStringSubmatch(ver); m != nil && m[1] == "1" {
		return "v" + m[1] + "." + m[2] + "." + m[3]
	}
	return ""
}

func azureVMSSID(sub, rg, name string) string {
	return "/subscriptions/" + sub + "/resourceGroups/" + rg + "/providers/Microsoft.Compute/virtualMachineScaleSets/" + name
}

// vmssState is a scale set's provisioningState: Deleting while the group
// is deleted; the last write's Creating or Updating while instances it
// created are creating or booting; Failed when one of them failed;
// Succeeded otherwise.
func vmssState(g *core.Group, p azureGroupPayload) string {
	if g.Operation != nil && g.Operation.Type == core.OperationDelete {
		return azureapi.ProvisioningDeleting
	}
	switch writeStatus(g, p.OpStart) {
	case azureapi.StatusInProgress:
		if p.Writing != "" {
			return p.Writing
		}
		return azureapi.ProvisioningUpdating
	case azureapi.StatusFailed:
		return azureapi.ProvisioningFailed
	}
	return azureapi.ProvisioningSucceeded
}

// writeStatus is the status of a write started at start: in progress while
// instances created since are creating or booting, failed when one of them
// failed.
func writeStatus(g *core.Group, start time.Time) string {
	failed := false
	for _, in := range g.Instances {
		if in.CreatedAt.Before(start) {
			continue
		}
		switch in.State {
		case core.StateCreating, core.StateBooting:
			return azureapi.StatusInProgress
		case core.StateFailed:
			failed = true
		}
	}
	if failed {
		return azureapi.StatusFailed
	}
	return azureapi.StatusSucceeded
}

// vmssResource is the scale set as ARM returns it: never with custom data.
func (h *azureHandler) vmssResource(g *core.Group) map[string]any {
	p := readAzurePayload(g)
	res := deepCopy(p.Resource)
	if res == nil {
		res = map[string]any{}
	}
	res["id"] = azureVMSSID(p.Subscription, p.ResourceGroup, p.Name)
	res["name"] = p.Name
	res["type"] = azureapi.TypeVirtualMachineScaleSets
	res["location"] = p.Location
	sku := child(res, true, "sku")
	sku["capacity"] = g.Capacity
	if _, ok := sku["tier"]; !ok {
		sku["tier"] = "Standard"
	}
	props := child(res, true, "properties")
	props["provisioningState"] = vmssState(g, p)
	props["uniqueId"] = p.UniqueID
	props["timeCreated"] = p.TimeCreated.UTC().Format(time.RFC3339Nano)
	props["orchestrationMode"] = p.Mode
	fillRepairDefaults(props)
	if p.Mode == azureapi.OrchestrationUniform {
		if _, ok := props["upgradePolicy"]; !ok {
			props["upgradePolicy"] = map[string]any{"mode": "Manual"}
		}
		if _, ok := props["overprovision"]; !ok {
			props["overprovision"] = false
		}
	}
	if os := child(props, false, "virtualMachineProfile", "osProfile"); os != nil {
		delete(os, "customData")
	}
	if id := child(res, false, "identity"); id != nil {
		if typ, _ := id["type"].(string); strings.Contains(typ, "SystemAssigned") {
			sum := sha256.Sum256([]byte("principal/" + p.UniqueID))
			id["principalId"] = core.UUIDFrom(sum[:16])
			id["tenantId"] = AzureDefaultTenantID
		}
	}
	return res
}

// getVMSS serves GET .../virtualMachineScaleSets/{vmss}.
func (h *azureHandler) getVMSS(w http.ResponseWriter, r *http.Request) {
	g, ok := h.scaleSet(w, r, h.scope(r), groupName(r.PathValue("vmss")))
	if !ok {
		return
	}
	admin.WriteJSON(w, http.StatusOK, h.vmssResource(g))
}

// listVMSS serves the scale sets of a resource group, or of a
// subscription.
func (h *azureHandler) listVMSS(w http.ResponseWriter, r *http.Request) {
	out := []map[string]any{}
	for _, k := range h.keysOf(r) {
		g, err := h.readGroup(h.env.Cloud.Scope(k.Face, k.Scope), k.Name)
		if err == nil {
			out = append(out, h.vmssResource(g))
		}
	}
	admin.WriteJSON(w, http.StatusOK, map[string]any{"value": out})
}

// keysOf returns the Azure groups of the request's resource group, or of
// its subscription when it names none, sorted.
func (h *azureHandler) keysOf(r *http.Request) []core.GroupKey {
	var keys []core.GroupKey
	if rg := r.PathValue("rg"); rg != "" {
		scope := azureScope(r.PathValue("sub"), rg)
		for _, n := range h.env.Cloud.Scope(AzureFaceName, scope).ListGroups() {
			keys = append(keys, core.GroupKey{Face: AzureFaceName, Scope: scope, Name: n})
		}
		return keys
	}
	prefix := "/subscriptions/" + strings.ToLower(r.PathValue("sub")) + "/"
	for _, k := range h.env.Cloud.Groups() {
		if k.Face == AzureFaceName && strings.HasPrefix(k.Scope, prefix) {
			keys = append(keys, k)
		}
	}
	return keys
}

// deleteVMSS serves DELETE .../virtualMachineScaleSets/{vmss}: 202 and an
// operation, or 204 when there is no such scale set.
func (h *azureHandler) deleteVMSS(w http.ResponseWriter, r *http.Request) {
	sc := h.scope(r)
	gname := groupName(r.PathValue("vmss"))
	g, err := sc.DeleteGroup(gname)
	if err != nil {
		if core.CodeOf(err) == core.CodeNotFound {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		writeAzureCloudError(w, err)
		return
	}
	h.setOperationHeaders(w, r, azureOp{Kind: azureOpDeleteGroup, Name: gname, Start: h.env.Cloud.Clock().Now().UnixNano()}, readAzurePayload(g).Location, true)
	w.WriteHeader(http.StatusAccepted)
}

// deleteInstances serves POST .../virtualMachineScaleSets/{vmss}/delete:
// the VMs are deleted and the capacity lowered by their number. An
// instance ID the scale set does not have is refused, as Azure does (400
// InvalidParameter, "... is not an active Virtual Machine Scale Set VM
// instanceId"), and nothing is deleted; VMs already deleting are accepted
// and not counted twice.
func (h *azureHandler) deleteInstances(w http.ResponseWriter, r *http.Request) {
	var req azureapi.DeleteInstancesRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, admin.MaxBody)).Decode(&req); err != nil || len(req.InstanceIDs) == 0 {
		writeARMError(w, http.StatusBadRequest, azureapi.CodeInvalidParameter, "Required parameter 'instanceIds' is missing or empty.")
		return
	}
	h.deleteVMs(w, r, groupName(r.PathValue("vmss")), req.InstanceIDs)
}

// scaleSet reads the core group of scale set gname; when it cannot, it
// answers ARM's 404 ResourceNotFound (or the core's error) and reports false.
func (h *azureHandler) scaleSet(w http.ResponseWriter, r *http.Request, sc core.Scope, gname string) (*core.Group, bool) {
	g, err := h.readGroup(sc, gname)
	if err != nil {
		if core.CodeOf(err) == core.CodeNotFound {
			armNotFound(w, azureapi.TypeVirtualMachineScaleSets, r.PathValue("vmss"), r.PathValue("rg"))
			return nil, false
		}
		writeAzureCloudError(w, err)
		return nil, false
	}
	return g, true
}

// deleteVMs deletes instances of a group (IDs matched case-insensitively)
// and answers 202 with an operation; 404 when the group does not exist.
func (h *azureHandler) deleteVMs(w http.ResponseWriter, r *http.Request, gname string, ids []string) {
	sc := h.scope(r)
	g, ok := h.scaleSet(w, r, sc, gname)
	if !ok {
		return
	}
	var match []string
	for _, in := range g.Instances {
		if slices.ContainsFunc(ids, func(id string) bool { return strings.EqualFold(id, in.ID) }) {
			match = append(match, in.ID)
		}
	}
	for _, id := range ids {
		if !slices.ContainsFunc(match, func(m string) bool { return strings.EqualFold(id, m) }) {
			writeARMTargetError(w, http.StatusBadRequest, azureapi.CodeInvalidParameter, "instanceIds",
				"The provided instanceId %s is not an active Virtual Machine Scale Set VM instanceId.", id)
			return
		}
	}
	if _, err := sc.DeleteInstances(gname, match); err != nil {
		writeAzureCloudError(w, err)
		return
	}
	h.setOperationHeaders(w, r, azureOp{Kind: azureOpDeleteInstances, Name: gname, IDs: match, Start: h.env.Cloud.Clock().Now().UnixNano()}, readAzurePayload(g).Location, true)
	w.WriteHeader(http.StatusAccepted)
}
