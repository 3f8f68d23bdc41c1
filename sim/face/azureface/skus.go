package azureface

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mpool-dev/mpool/sim/admin"

	"github.com/mpool-dev/mpool/sim/wire/azureapi"
)

// azureSku is a VM size the simulated Azure offers.
type azureSku struct {
	Name     string
	Family   string
	VCPUs    int
	MemoryGB float64
	// Zones it is offered in, in every location.
	Zones []string
}

// azureSkus are the VM sizes of the simulation: every location offers them
// all. Standard_B1s (1 vCPU, 1 GiB) is too small for a Kubernetes node;
// Standard_NC6s_v3 is offered in zone 2 only.
var azureSkus = []azureSku{
	{Name: "Standard_B1s", Family: "standardBSFamily", VCPUs: 1, MemoryGB: 1, Zones: []string{"1", "2", "3"}},
	{Name: "Standard_B2s", Family: "standardBSFamily", VCPUs: 2, MemoryGB: 4, Zones: []string{"1", "2", "3"}},
	{Name: "Standard_D2s_v3", Family: "standardDSv3Family", VCPUs: 2, MemoryGB: 8, Zones: []string{"1", "2", "3"}},
	{Name: "Standard_D4s_v3", Family: "standardDSv3Family", VCPUs: 4, MemoryGB: 16, Zones: []string{"1", "2", "3"}},
	{Name: "Standard_D8s_v3", Family: "standardDSv3Family", VCPUs: 8, MemoryGB: 32, Zones: []string{"1", "2", "3"}},
	{Name: "Standard_D2s_v5", Family: "standardDSv5Family", VCPUs: 2, MemoryGB: 8, Zones: []string{"1", "2", "3"}},
	{Name: "Standard_D4s_v5", Family: "standardDSv5Family", VCPUs: 4, MemoryGB: 16, Zones: []string{"1", "2", "3"}},
	{Name: "Standard_D8s_v5", Family: "standardDSv5Family", VCPUs: 8, MemoryGB: 32, Zones: []string{"1", "2", "3"}},
	{Name: "Standard_E4s_v5", Family: "standardESv5Family", VCPUs: 4, MemoryGB: 32, Zones: []string{"1", "2", "3"}},
	{Name: "Standard_F4s_v2", Family: "standardFSv2Family", VCPUs: 4, MemoryGB: 8, Zones: []string{"1", "2", "3"}},
	{Name: "Standard_NC6s_v3", Family: "standardNCSv3Family", VCPUs: 6, MemoryGB: 112, Zones: []string{"2"}},
}

// findAzureSku returns the SKU named name (case-insensitively), or nil.
func findAzureSku(name string) *azureSku {
	for i := range azureSkus {
		if strings.EqualFold(azureSkus[i].Name, name) {
			return &azureSkus[i]
		}
	}
	return nil
}

// listSkus serves GET /subscriptions/{sub}/providers/Microsoft.Compute/skus,
// optionally filtered by $filter=location eq '<location>'.
func (h *azureHandler) listSkus(w http.ResponseWriter, r *http.Request) {
	locs := h.face.locations()
	if f := r.URL.Query().Get("$filter"); f != "" {
		l, ok := parseEqFilter(f, "location")
		if !ok {
			writeARMError(w, http.StatusBadRequest, azureapi.CodeInvalidParameter, "The $filter '"+f+"' is not supported: only location eq '<location>'.")
			return
		}
		locs = slices.DeleteFunc(slices.Clone(locs), func(x string) bool { return !strings.EqualFold(x, l) })
	}
	out := azureapi.ResourceSkuList{Value: []azureapi.ResourceSku{}}
	for _, loc := range locs {
		for _, s := range azureSkus {
			size, _ := strings.CutPrefix(s.Name, "Standard_")
			out.Value = append(out.Value, azureapi.ResourceSku{
				ResourceType: "virtualMachines",
				Name:         s.Name,
				Tier:         "Standard",
				Size:         size,
				Family:       s.Family,
				Locations:    []string{loc},
				LocationInfo: []azureapi.ResourceSkuLocationInfo{{Location: loc, Zones: s.Zones}},
				Capabilities: []azureapi.ResourceSkuCapability{
					{Name: "vCPUs", Value: strconv.Itoa(s.VCPUs)},
					{Name: "vCPUsAvailable", Value: strconv.Itoa(s.VCPUs)},
					{Name: "MemoryGB", Value: strconv.FormatFloat(s.MemoryGB, 'f', -1, 64)},
					{Name: "MaxDataDiskCount", Value: strconv.Itoa(min(64, 4*s.VCPUs))},
					{Name: "PremiumIO", Value: "True"},
					{Name: "HyperVGenerations", Value: "V1,V2"},
					{Name: "CpuArchitectureType", Value: "x64"},
					{Name: "LowPriorityCapable", Value: "True"},
					{Name: "AcceleratedNetworkingEnabled", Value: strconv.FormatBool(s.VCPUs >= 2)},
					{Name: "EncryptionAtHostSupported", Value: "True"},
				},
				Restrictions: []any{},
			})
		}
	}
	admin.WriteJSON(w, http.StatusOK, out)
}

// parseEqFilter parses an OData filter "<field> eq '<value>'"; the field
// may be quoted, as Azure's documented 'virtualMachineScaleSet/id' eq '<id>'.
func parseEqFilter(f, field string) (string, bool) {
	parts := strings.Fields(f)
	if len(parts) != 3 || !strings.EqualFold(strings.Trim(parts[0], "'"), field) || !strings.EqualFold(parts[1], "eq") {
		return "", false
	}
	v := parts[2]
	if len(v) < 2 || v[0] != '\'' || v[len(v)-1] != '\'' {
		return "", false
	}
	return v[1 : len(v)-1], true
}
