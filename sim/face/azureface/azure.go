package azureface

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mpool-dev/mpool/sim/admin"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/azureapi"
)

// AzureFaceName is the name of the Azure face: its groups' Face and its
// path prefix on the Server's listener.
const AzureFaceName = "azure"

// The simulated Azure's defaults: the service principal every Azure face
// accepts unless removed (AzureDeleteClient), and the subscription, resource
// group and location `mpool up` and the examples use. Any subscription and
// resource group name is accepted; they need not be created first.
const (
	AzureDefaultTenantID       = "00000000-0000-4000-8000-00000000a001"
	AzureDefaultClientID       = "00000000-0000-4000-8000-00000000c001"
	AzureDefaultClientSecret   = "mpool-simulated-azure-secret"
	AzureDefaultSubscriptionID = "00000000-0000-4000-8000-00000000b001"
	AzureDefaultResourceGroup  = "mpool"
	AzureDefaultLocation       = "eastus"
)

// Tags of a scale set the Azure face reads.
const (
	// AzureTagModelHash on a scale set is the core's ModelHash of its
	// model: VMs created from it carry it in their tags and report
	// latestModelApplied while it is the scale set's. Without it the face
	// hashes the scale set's sku name, zones and virtualMachineProfile
	// (custom data excluded).
	AzureTagModelHash = "mpool.dev/model-hash"
	// AzureTagKubernetesVersion on a scale set is the kubelet version its
	// VMs' Nodes report; without it the face derives it from the image
	// reference's version (CAPZ's reference images: 130.4.20240717 is
	// v1.30.4; a gallery image version 1.30.4 is v1.30.4), else the core's
	// default.
	AzureTagKubernetesVersion = "mpool.dev/kubernetes-version"
)

// AzureFace is the simulated Azure: Microsoft Entra ID's token endpoint and
// Azure Resource Manager's Microsoft.Compute scale sets, VMs and SKUs, as
// the unmodified Azure SDK for Go speaks them (see the package doc, "The
// Azure face"). It is an HTTPSFace, registered in BuiltinFaces with its
// defaults; Options.Faces may replace it with one configured otherwise.
type AzureFace struct {
	// PageSize is the number of VMs per page of a VM list (default 1000,
	// as ARM's for scale set VMs).
	PageSize int
	// Locations are the regions offering the simulated SKUs (default
	// eastus, westus2, westeurope).
	Locations []string
	// VCPUQuota is the regional vCPU quota by SKU family (e.g.
	// "standardDSv3Family": 100), per subscription and location; absent
	// families are unlimited. Capacity increases beyond it are refused
	// with 409 OperationNotAllowed, as Azure does.
	VCPUQuota map[string]int
	// TokenLifetime is the lifetime of the access tokens the token
	// endpoint issues (default 3599s, Entra's expires_in).
	TokenLifetime time.Duration
	// SubscriptionReads and SubscriptionWrites are ARM's per-subscription
	// request budgets, ScaleSetWrites Compute's per-scale-set write budget
	// (PUT, PATCH, DELETE and actions on a scale set or its VMs); zero is
	// unlimited (AzureSubscriptionReads, AzureSubscriptionWrites and
	// AzureScaleSetWrites are Azure's documented figures). An exhausted
	// budget answers 429 TooManyRequests with Retry-After until its next
	// token.
	SubscriptionReads, SubscriptionWrites, ScaleSetWrites core.Budget
	// Clients are service principals accepted besides those registered in
	// the face's data (AzureSetClient, the default one).
	Clients []AzureClient
	// AKSMinute is how long one of AKS's minutes lasts in the simulated
	// AKS's upgrades (upgradeSettings.drainTimeoutInMinutes,
	// nodeSoakDurationInMinutes), default a minute: tests shorten it.
	AKSMinute time.Duration

	buckets core.Buckets
	// aksMu serializes the simulated AKS's changes of the face's data.
	aksMu sync.Mutex
}

// Name implements Face.
func (*AzureFace) Name() string { return AzureFaceName }

// HTTPS implements HTTPSFace: the Azure SDK sends bearer tokens over TLS
// only.
func (*AzureFace) HTTPS() bool { return true }

// Describe implements FaceDescriber: the default scope (FaceLines prints
// the default service principal, DefaultAccount).
func (*AzureFace) Describe() string {
	return fmt.Sprintf("subscription %s, resource group %s, location %s", AzureDefaultSubscriptionID, AzureDefaultResourceGroup, AzureDefaultLocation)
}

// DefaultAccount implements server.AccountFace.
func (*AzureFace) DefaultAccount() core.Account {
	return core.Account{Tenant: AzureDefaultTenantID, ID: AzureDefaultClientID, Secret: AzureDefaultClientSecret}
}

func (f *AzureFace) pageSize() int { return core.OrDefault(f.PageSize, 1000) }

func (f *AzureFace) locations() []string {
	if len(f.Locations) > 0 {
		return f.Locations
	}
	return []string{AzureDefaultLocation, "westus2", "westeurope"}
}

func (f *AzureFace) tokenLifetime() time.Duration {
	return core.OrDefault(f.TokenLifetime, 3599*time.Second)
}

// AzureGroupKey is the core's key of a scale set of the Azure face: scope
// /subscriptions/<sub>/resourceGroups/<rg> and the scale set's name, all
// lowercased (ARM's names are case-insensitive), for Cloud.Scope and the
// admin endpoints' ?face=azure&scope=.
func AzureGroupKey(subscription, resourceGroup, vmss string) core.GroupKey {
	return core.GroupKey{Face: AzureFaceName, Scope: azureScope(subscription, resourceGroup), Name: groupName(vmss)}
}

// azureScope is the core scope of a subscription's resource group.
func azureScope(sub, rg string) string {
	return "/subscriptions/" + strings.ToLower(sub) + "/resourceGroups/" + strings.ToLower(rg)
}

// azureGroupPayload is what the face keeps about a scale set in the core
// (GroupSpec.Payload).
type azureGroupPayload struct {
	// Resource is the scale set as last written (PUT, or PATCH merged),
	// without sku.capacity (the core's Capacity) and without custom data
	// (the core model's CustomData), with its names as sent.
	Resource map[string]any `json:"resource"`
	// Name, Subscription and ResourceGroup are as the client spelled them.
	Name          string `json:"name"`
	Subscription  string `json:"subscription"`
	ResourceGroup string `json:"resourceGroup"`
	Location      string `json:"location"`
	Mode          string `json:"mode"`
	// ComputerNamePrefix names the VMs' hosts (lowercased).
	ComputerNamePrefix string         `json:"computerNamePrefix,omitempty"`
	AdminUsername      string         `json:"adminUsername,omitempty"`
	Image              map[string]any `json:"image,omitempty"`
	UniqueID           string         `json:"uniqueId"`
	TimeCreated        time.Time      `json:"timeCreated"`
	// Writing is the provisioning state of the last write (Creating or
	// Updating) while its instances are being created; OpStart its time.
	Writing string    `json:"writing,omitempty"`
	OpStart time.Time `json:"opStart"`
}

// azureVMPayload is what the face keeps about a VM (the instance payload).
type azureVMPayload struct {
	Ordinal       uint64            `json:"ordinal"`
	Name          string            `json:"name"`
	ComputerName  string            `json:"computerName"`
	VMID          string            `json:"vmId"`
	VMSize        string            `json:"vmSize,omitempty"`
	Tags          map[string]string `json:"tags,omitempty"`
	AdminUsername string            `json:"adminUsername,omitempty"`
	Image         map[string]any    `json:"image,omitempty"`
	// RepairedAt is when an automatic repair last restarted or reimaged
	// the VM (repairs.go).
	RepairedAt time.Time `json:"repairedAt,omitzero"`
}

// InstanceIdentity implements Face: Uniform VMs are instance 0, 1, 2, ...
// of their scale set, named <vmss>_<n>, host name computerNamePrefix + 6
// base-36 digits of n; Flexible VMs are named <vmss>_<8 hex>, host name
// computerNamePrefix + 6 hex digits.
func (*AzureFace) InstanceIdentity(in core.NewInstance) core.InstanceIdentity {
	p := core.DecodePayload[azureGroupPayload](in.GroupPayload)
	name := p.Name
	if name == "" {
		name = in.Group.Name
	}
	sum := sha256.Sum256([]byte(in.Group.String() + "\x00" + strconv.FormatUint(in.Seq, 10)))
	prefix := strings.ToLower(p.ComputerNamePrefix)
	if prefix == "" {
		prefix = strings.ToLower(strings.NewReplacer("_", "", ".", "").Replace(name))
		if len(prefix) > 9 {
			prefix = prefix[:9]
		}
	}
	vm := azureVMPayload{
		Ordinal:       in.Ordinal,
		VMID:          core.UUIDFrom(sum[:16]),
		AdminUsername: p.AdminUsername,
		Image:         p.Image,
	}
	if in.Model != nil {
		vm.VMSize = in.Model.InstanceType
		vm.Tags = in.Model.Tags
	}
	base := "/subscriptions/" + p.Subscription + "/resourceGroups/" + p.ResourceGroup + "/providers/Microsoft.Compute/"
	var id, providerID string
	if p.Mode == azureapi.OrchestrationFlexible {
		suffix := fmt.Sprintf("%08x", binary.BigEndian.Uint32(sum[16:20]))
		vm.Name = name + "_" + suffix
		vm.ComputerName = prefix + suffix[:6]
		id = vm.Name
		providerID = "azure://" + base + "virtualMachines/" + vm.Name
	} else {
		id = strconv.FormatUint(in.Ordinal, 10)
		vm.Name = name + "_" + id
		b36 := strconv.FormatUint(in.Ordinal, 36)
		if len(b36) < 6 {
			b36 = strings.Repeat("0", 6-len(b36)) + b36
		}
		vm.ComputerName = prefix + b36
		providerID = "azure://" + base + "virtualMachineScaleSets/" + name + "/virtualMachines/" + id
	}
	payload, _ := json.Marshal(vm)
	md := map[string]string{
		core.MetaRegion:     p.Location,
		"name":              vm.Name,
		"vm_id":             vm.VMID,
		"vm_scale_set_name": name,
		"subscription_id":   p.Subscription,
		"resource_group":    p.ResourceGroup,
		"location":          p.Location,
	}
	if in.Zone != "" {
		md["zone"] = in.Zone
	}
	return core.InstanceIdentity{
		ID:         id,
		ProviderID: providerID,
		Hostname:   vm.ComputerName,
		Metadata:   md,
		Payload:    payload,
	}
}

// WriteFault implements Face: ARM's throttling (429 TooManyRequests with
// Retry-After and the x-ms-ratelimit-remaining-* headers) and server errors
// (InternalServerError; ServiceUnavailable for 503). Entra ID's endpoints
// answer in its own shape.
func (*AzureFace) WriteFault(w http.ResponseWriter, r *http.Request, f core.Fault) {
	if !isARMPath(r.URL.Path) {
		f.SetRetryAfter(w.Header())
		admin.WriteJSON(w, f.Status, azureapi.TokenError{
			Error:            "temporarily_unavailable",
			ErrorDescription: "AADSTS50196: " + f.Message,
			ErrorCodes:       []int{50196},
		})
		return
	}
	code := azureapi.CodeInternalServerError
	msg := "An internal execution error occurred. Please retry later. (" + f.Message + ")"
	switch {
	case f.Kind == core.FaultThrottle:
		secs := f.RetrySeconds()
		w.Header().Set("Retry-After", secs)
		w.Header().Set("x-ms-ratelimit-remaining-subscription-reads", "0")
		w.Header().Set("x-ms-ratelimit-remaining-subscription-writes", "0")
		code = azureapi.CodeTooManyRequests
		msg = "The request is being throttled as the limit has been reached for operation type. Please retry after " + secs + " seconds. (" + f.Message + ")"
	case f.Status == http.StatusServiceUnavailable:
		code = "ServiceUnavailable"
	case f.Status == http.StatusBadGateway:
		code = "BadGateway"
	}
	writeARMError(w, f.Status, code, msg)
}

// isARMPath reports whether path is one of ARM's (/subscriptions/...).
func isARMPath(path string) bool {
	seg, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	return strings.EqualFold(seg, "subscriptions")
}

func writeARMError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("x-ms-failure-cause", "gateway")
	admin.WriteJSON(w, status, azureapi.ErrorResponse{Error: azureapi.ErrorBody{Code: code, Message: message}})
}

// writeARMTargetError answers status with an ARM error naming the request's
// property at fault (target), its message formatted.
func writeARMTargetError(w http.ResponseWriter, status int, code, target, format string, args ...any) {
	admin.WriteJSON(w, status, azureapi.ErrorResponse{Error: azureapi.ErrorBody{Code: code, Target: target, Message: fmt.Sprintf(format, args...)}})
}

// writeAzureCloudError maps the core's errors onto ARM's.
func writeAzureCloudError(w http.ResponseWriter, err error) {
	var e *core.Error
	if !errors.As(err, &e) {
		writeARMError(w, http.StatusInternalServerError, azureapi.CodeInternalServerError, err.Error())
		return
	}
	switch e.Code {
	case core.CodeNotFound:
		writeARMError(w, http.StatusNotFound, azureapi.CodeResourceNotFound, e.Message)
	case core.CodeQuotaExceeded:
		writeARMError(w, http.StatusConflict, azureapi.CodeOperationNotAllowed,
			"Operation could not be completed as it results in exceeding approved Total Regional Cores quota. "+e.Message)
	case core.CodeConflict:
		writeARMError(w, http.StatusConflict, azureapi.CodeConflict, e.Message)
	case core.CodeInvalid:
		writeARMError(w, http.StatusBadRequest, azureapi.CodeInvalidParameter, e.Message)
	default:
		writeARMError(w, http.StatusInternalServerError, azureapi.CodeInternalServerError, e.Message)
	}
}

// Operation names of the Azure face, as counted in Stats.
const (
	OpAzureToken               = "azure.Token"
	OpAzureDiscovery           = "azure.Discovery"
	OpAzureVMSSCreateOrUpdate  = "azure.VirtualMachineScaleSets.CreateOrUpdate"
	OpAzureVMSSUpdate          = "azure.VirtualMachineScaleSets.Update"
	OpAzureVMSSGet             = "azure.VirtualMachineScaleSets.Get"
	OpAzureVMSSDelete          = "azure.VirtualMachineScaleSets.Delete"
	OpAzureVMSSList            = "azure.VirtualMachineScaleSets.List"
	OpAzureVMSSDeleteInstances = "azure.VirtualMachineScaleSets.DeleteInstances"
	OpAzureVMSSVMList          = "azure.VirtualMachineScaleSetVMs.List"
	OpAzureVMSSVMGet           = "azure.VirtualMachineScaleSetVMs.Get"
	OpAzureVMSSVMDelete        = "azure.VirtualMachineScaleSetVMs.Delete"
	OpAzureVMList              = "azure.VirtualMachines.List"
	OpAzureVMGet               = "azure.VirtualMachines.Get"
	OpAzureVMDelete            = "azure.VirtualMachines.Delete"
	OpAzureSkuList             = "azure.ResourceSkus.List"
	OpAzureOperationStatus     = "azure.Operations.Get"
	OpAzureUnknown             = "azure.Unknown"
)

const azureDefaultAPIVersionError = "The api-version query parameter (?api-version=) is required for all requests."

// azureHandler holds the Azure face's operations.
type azureHandler struct {
	face    *AzureFace
	env     core.FaceEnv
	buckets *core.Buckets
}

// Handler implements Face: requests are routed by their path segments,
// case-insensitively as ARM does; those of neither ARM nor Entra ID are
// ARM's unknown operation, those of Entra ID's paths it does not serve
// answered as Entra ID would.
func (f *AzureFace) Handler(env core.FaceEnv) http.Handler {
	h := &azureHandler{face: f, env: env, buckets: &f.buckets}
	ops := env.WrapOps(nil, map[string]http.HandlerFunc{
		OpAzureToken:               h.token,
		OpAzureDiscovery:           h.discovery,
		OpAzureVMSSCreateOrUpdate:  h.arm(h.putVMSS),
		OpAzureVMSSUpdate:          h.arm(h.patchVMSS),
		OpAzureVMSSGet:             h.arm(h.getVMSS),
		OpAzureVMSSDelete:          h.arm(h.deleteVMSS),
		OpAzureVMSSList:            h.arm(h.listVMSS),
		OpAzureVMSSDeleteInstances: h.arm(h.deleteInstances),
		OpAzureVMSSVMList:          h.arm(h.listVMSSVMs),
		OpAzureVMSSVMGet:           h.arm(h.getVMSSVM),
		OpAzureVMSSVMDelete:        h.arm(h.deleteVMSSVM),
		OpAzureVMList:              h.arm(h.listVMs),
		OpAzureVMGet:               h.arm(h.getVM),
		OpAzureVMDelete:            h.arm(h.deleteVM),
		OpAzureSkuList:             h.arm(h.listSkus),
		OpAzureOperationStatus:     h.arm(h.operationStatus),
		OpAzureUnknown: h.arm(func(w http.ResponseWriter, r *http.Request) {
			writeARMError(w, http.StatusNotFound, azureapi.CodeNotFound,
				fmt.Sprintf("The simulated Azure does not serve %s %s.", r.Method, r.URL.Path))
		}),
	}, h.aksHandlers())
	return &core.Router{Ops: ops, Route: h.route, Unknown: OpAzureUnknown,
		IsAPI: func(r *http.Request) bool { return isARMPath(r.URL.Path) },
		NotServed: func(w http.ResponseWriter, r *http.Request) {
			admin.WriteJSON(w, http.StatusNotFound, azureapi.TokenError{Error: "invalid_request",
				ErrorDescription: fmt.Sprintf("AADSTS90002: The simulated Entra ID does not serve %s %s.", r.Method, r.URL.Path)})
		}}
}

// route returns the operation of r, or "": Entra ID's paths are any but
// /subscriptions/..., ARM's are under /subscriptions/{sub}.
func (h *azureHandler) route(r *http.Request) string {
	segs := core.SplitPath(r.URL.Path)
	if !strings.EqualFold(segs[0], "subscriptions") {
		return entraRoutes.Match(r, segs)
	}
	if len(segs) < 2 {
		return ""
	}
	r.SetPathValue("sub", segs[1])
	return armRoutes.Match(r, segs[2:])
}

// entraRoutes are Entra ID's operations.
var entraRoutes = core.RouteTable{FoldCase: true, Routes: []core.Route{
	core.PostRoute("{tenant}/oauth2/v2.0/token", OpAzureToken),
	core.GetRoute("{tenant}/v2.0/.well-known/openid-configuration", OpAzureDiscovery),
	core.GetRoute("*/discovery/instance", OpAzureDiscovery),
}}

// armRoutes are ARM's operations, by their path below /subscriptions/{sub}.
var armRoutes = core.RouteTable{FoldCase: true, Routes: append(aksRoutes("resourceGroups/{rg}/providers/"+aksProvider), computeRoutes(
	"resourceGroups/{rg}/providers/"+azureapi.ResourceProvider, "providers/"+azureapi.ResourceProvider)...)}

// computeRoutes are Microsoft.Compute's operations; rg is the path of a
// resource group's provider, sub the subscription's.
func computeRoutes(rg, sub string) []core.Route {
	vmss := rg + "/virtualMachineScaleSets/{vmss}"
	return []core.Route{
		core.GetRoute(rg+"/virtualMachineScaleSets", OpAzureVMSSList),
		{Path: vmss, Ops: map[string]string{http.MethodPut: OpAzureVMSSCreateOrUpdate, http.MethodPatch: OpAzureVMSSUpdate,
			http.MethodGet: OpAzureVMSSGet, http.MethodDelete: OpAzureVMSSDelete}},
		core.PostRoute(vmss+"/delete", OpAzureVMSSDeleteInstances),
		core.GetRoute(vmss+"/virtualMachines", OpAzureVMSSVMList),
		{Path: vmss + "/virtualMachines/{instance}", Ops: map[string]string{http.MethodGet: OpAzureVMSSVMGet, http.MethodDelete: OpAzureVMSSVMDelete}},
		core.GetRoute(rg+"/virtualMachines", OpAzureVMList),
		{Path: rg + "/virtualMachines/{vm}", Ops: map[string]string{http.MethodGet: OpAzureVMGet, http.MethodDelete: OpAzureVMDelete}},
		core.GetRoute(sub+"/skus", OpAzureSkuList),
		core.GetRoute(sub+"/virtualMachineScaleSets", OpAzureVMSSList),
		core.GetRoute(sub+"/virtualMachines", OpAzureVMList),
		core.GetRoute(sub+"/locations/{location}/operations/{operation}", OpAzureOperationStatus),
	}
}

// arm wraps an ARM operation: it requires api-version and a valid bearer
// token.
func (h *azureHandler) arm(fn http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !h.authorize(w, r) {
			return
		}
		if r.URL.Query().Get("api-version") == "" {
			writeARMError(w, http.StatusBadRequest, azureapi.CodeMissingAPIVersion, azureDefaultAPIVersionError)
			return
		}
		if !h.throttle(w, r) {
			return
		}
		fn(w, r)
	}
}

// baseURL is the face's URL as the client reached it (for nextLink and the
// operation URLs).
func (h *azureHandler) baseURL(r *http.Request) string { return h.env.BaseURL(r) }

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
