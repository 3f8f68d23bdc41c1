package azureface

import (
	"net/http"
	"testing"

	"github.com/mpool-dev/mpool/sim/core/coretest"
)

// TestAzureRoute: the face's route tables name each operation by method
// and path, case-insensitively, with the path values its handlers read;
// another method or path is no operation.
func TestAzureRoute(t *testing.T) {
	const (
		rg      = "/subscriptions/S/resourceGroups/RG/providers/"
		compute = rg + "microsoft.compute"
		aks     = rg + "Microsoft.ContainerService/managedClusters/C"
	)
	tests := []struct {
		method, path, want string
		values             map[string]string
	}{
		{http.MethodPost, "/T/oauth2/v2.0/token", OpAzureToken, map[string]string{"tenant": "T"}},
		{http.MethodGet, "/T/v2.0/.well-known/openid-configuration", OpAzureDiscovery, map[string]string{"tenant": "T"}},
		{http.MethodGet, "/common/discovery/instance", OpAzureDiscovery, map[string]string{"tenant": ""}},
		{http.MethodGet, "/subscriptions/discovery/instance", "", nil},
		{http.MethodGet, "/subscriptions", "", nil},
		{http.MethodGet, "/T/oauth2/v2.0/token", "", nil},
		{http.MethodPatch, compute + "/virtualMachineScaleSets/V", OpAzureVMSSUpdate, map[string]string{"sub": "S", "rg": "RG", "vmss": "V"}},
		{http.MethodPost, compute + "/VirtualMachineScaleSets/V/delete", OpAzureVMSSDeleteInstances, map[string]string{"vmss": "V"}},
		{http.MethodDelete, compute + "/virtualMachineScaleSets/V/delete", "", nil},
		{http.MethodGet, compute + "/virtualMachineScaleSets/V/virtualMachines/3", OpAzureVMSSVMGet, map[string]string{"vmss": "V", "instance": "3"}},
		{http.MethodDelete, compute + "/virtualMachines/vm1", OpAzureVMDelete, map[string]string{"rg": "RG", "vm": "vm1"}},
		{http.MethodGet, "/subscriptions/S/providers/Microsoft.Compute/skus", OpAzureSkuList, map[string]string{"sub": "S", "rg": ""}},
		{http.MethodGet, "/subscriptions/S/providers/Microsoft.Compute/locations/L/operations/O", OpAzureOperationStatus, map[string]string{"location": "L", "operation": "O"}},
		{http.MethodGet, aks, OpAKSManagedClustersGet, map[string]string{"rg": "RG", "cluster": "C"}},
		{http.MethodPut, aks + "/agentPools/P", OpAKSAgentPoolsCreateOrUpdate, map[string]string{"cluster": "C", "pool": "P"}},
		{http.MethodPost, aks + "/agentPools/P/upgradeNodeImageVersion", OpAKSAgentPoolsUpgradeNodeImage, map[string]string{"pool": "P"}},
		{http.MethodGet, "/subscriptions/S/providers/Microsoft.ContainerService/locations/L/operations/O", OpAKSOperationStatus, map[string]string{"operation": "O"}},
		{http.MethodGet, rg + "Microsoft.Network/virtualNetworks", "", nil},
	}
	h := &azureHandler{}
	for _, tt := range tests {
		coretest.CheckRoute(t, h.route, tt.method, tt.path, tt.want, tt.values)
	}
}
