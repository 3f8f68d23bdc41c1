package gcpface

import (
	"net/http"
	"testing"

	"github.com/mpool-dev/mpool/sim/core/coretest"
)

// TestGCPRoute: the face's route table names each operation by method and
// path, case-sensitively, with the path values its handlers read (where
// fixed by the path: zones, regions or global); another method or path is
// no operation.
func TestGCPRoute(t *testing.T) {
	const p = "/compute/v1/projects/P"
	tests := []struct {
		method, path, want string
		values             map[string]string
	}{
		{http.MethodPost, "/token", OpGCPToken, nil},
		{http.MethodGet, "/token", "", nil},
		{http.MethodPost, p + "/global/instanceTemplates", OpGCPTemplatesInsert, map[string]string{"project": "P", "where": "global"}},
		{http.MethodDelete, p + "/global/instanceTemplates/T", OpGCPTemplatesDelete, map[string]string{"where": "global", "name": "T"}},
		{http.MethodPost, p + "/global/operations/O/wait", OpGCPOperationsWait, map[string]string{"where": "global", "name": "O", "location": ""}},
		{http.MethodGet, p + "/Global/instanceTemplates", "", nil},
		{http.MethodGet, p + "/zones/Z/machineTypes/M", OpGCPMachineTypesGet, map[string]string{"where": "zones", "location": "Z", "name": "M"}},
		{http.MethodGet, p + "/regions/R/machineTypes", "", nil},
		{http.MethodGet, p + "/regions/R/operations/O", OpGCPOperationsGet, map[string]string{"where": "regions", "location": "R", "name": "O"}},
		{http.MethodPost, p + "/zones/Z/instanceGroupManagers", OpGCPIGMInsert, map[string]string{"where": "zones", "location": "Z"}},
		{http.MethodDelete, p + "/regions/R/instanceGroupManagers/G", OpGCPIGMDelete, map[string]string{"where": "regions", "location": "R", "name": "G"}},
		{http.MethodPost, p + "/regions/R/instanceGroupManagers/G/listManagedInstances", OpGCPIGMListManagedInstances, map[string]string{"name": "G"}},
		{http.MethodPost, p + "/zones/Z/instanceGroupManagers/G/Resize", "", nil},
		{http.MethodGet, p + "/zones/Z/instanceGroupManagers/G/resize", "", nil},
		{http.MethodPost, p + "/global/instanceGroupManagers", "", nil},
	}
	for _, tt := range tests {
		coretest.CheckRoute(t, gcpRoutes.Route, tt.method, tt.path, tt.want, tt.values)
	}
}
