package azureface

import (
	"errors"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/mpool-dev/mpool/sim/core"
)

// aksEnv is the simulated AKS's cluster mpool-aks with clients of the real
// armcontainerservice.
type aksEnv struct {
	*azureTestEnv
	pools    *armcontainerservice.AgentPoolsClient
	machines *armcontainerservice.MachinesClient
	clusters *armcontainerservice.ManagedClustersClient
}

func startAKS(t *testing.T) *aksEnv {
	t.Helper()
	srv := startAzure(t, core.Options{})
	if err := AKSCreateCluster(srv.Cloud(), AzureDefaultSubscriptionID, testRG, AKSDefaultClusterName, AzureDefaultLocation, "v1.31"); err != nil {
		t.Fatal(err)
	}
	e := &aksEnv{azureTestEnv: newAzureEnv(t, srv)}
	f, err := armcontainerservice.NewClientFactory(AzureDefaultSubscriptionID, e.cred, &arm.ClientOptions{ClientOptions: e.co})
	if err != nil {
		t.Fatal(err)
	}
	e.pools, e.machines, e.clusters = f.NewAgentPoolsClient(), f.NewMachinesClient(), f.NewManagedClustersClient()
	return e
}

func agentPool(mode armcontainerservice.AgentPoolMode, sku string, count int32) armcontainerservice.AgentPool {
	return armcontainerservice.AgentPool{Properties: &armcontainerservice.ManagedClusterAgentPoolProfileProperties{
		Mode: to.Ptr(mode), VMSize: to.Ptr(sku), Count: to.Ptr(count), AvailabilityZones: []*string{to.Ptr("1")},
		NodeLabels: map[string]*string{"team": to.Ptr("a")}, NodeTaints: []*string{to.Ptr("dedicated=aks:NoSchedule")},
	}}
}

// aksCode returns the ARM error code of err, failing the test when it is
// not an ARM error.
func aksCode(t *testing.T, err error) string {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("want an ARM error, got %v", err)
	}
	return re.ErrorCode
}

// TestAKSAgentPoolLifecycle: the real armcontainerservice creates an agent
// pool (an LRO), lists its machines — VMs of aks-<pool>-<n>-vmss in the node
// resource group, named as AKS names nodes — deletes one with
// deleteMachines, and deletes the pool with its scale set.
func TestAKSAgentPoolLifecycle(t *testing.T) {
	e := startAKS(t)
	ctx := t.Context()
	mc, err := e.clusters.Get(ctx, testRG, AKSDefaultClusterName, nil)
	if err != nil {
		t.Fatal(err)
	}
	nodeRG := ptr.Deref(mc.Properties.NodeResourceGroup, "")
	if nodeRG != "MC_mpool_mpool-aks_eastus" || ptr.Deref(mc.Properties.KubernetesVersion, "") != "1.31.0" {
		t.Fatalf("managed cluster node resource group %q, version %q", nodeRG, ptr.Deref(mc.Properties.KubernetesVersion, ""))
	}
	poller, err := e.pools.BeginCreateOrUpdate(ctx, testRG, AKSDefaultClusterName, "pool1", agentPool(armcontainerservice.AgentPoolModeUser, "Standard_D2s_v5", 3), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := poller.PollUntilDone(ctx, fastPoll)
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Properties; ptr.Deref(p.ProvisioningState, "") != "Succeeded" || ptr.Deref(p.Count, 0) != 3 || ptr.Deref(p.OrchestratorVersion, "") != "1.31.0" {
		t.Fatalf("agent pool %s count %d version %s", ptr.Deref(p.ProvisioningState, ""), ptr.Deref(p.Count, 0), ptr.Deref(p.OrchestratorVersion, ""))
	}
	var names []string
	pager := e.machines.NewListPager(testRG, AKSDefaultClusterName, "pool1", nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range page.Value {
			id := ptr.Deref(m.Properties.ResourceID, "")
			if !strings.HasPrefix(id, "/subscriptions/"+AzureDefaultSubscriptionID+"/resourceGroups/mc_mpool_mpool-aks_eastus/providers/Microsoft.Compute/virtualMachineScaleSets/aks-pool1-") ||
				!strings.HasPrefix(*m.Name, "aks-pool1-") || !strings.Contains(*m.Name, "-vmss00000") {
				t.Fatalf("machine %s with resource ID %s", *m.Name, id)
			}
			names = append(names, *m.Name)
		}
	}
	if len(names) != 3 {
		t.Fatalf("machines %v, want 3", names)
	}
	// The scale set is the Azure face's, in the node resource group.
	if _, err := e.vmss.Get(ctx, nodeRG, strings.TrimSuffix(names[0], "000000"), nil); err != nil {
		t.Fatalf("the pool's scale set: %v", err)
	}

	dm, err := e.pools.BeginDeleteMachines(ctx, testRG, AKSDefaultClusterName, "pool1",
		armcontainerservice.AgentPoolDeleteMachinesParameter{MachineNames: []*string{to.Ptr(names[1])}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dm.PollUntilDone(ctx, fastPoll); err != nil {
		t.Fatal(err)
	}
	got, err := e.pools.Get(ctx, testRG, AKSDefaultClusterName, "pool1", nil)
	if err != nil || ptr.Deref(got.Properties.Count, 0) != 2 {
		t.Fatalf("after deleteMachines: %v, count %v", err, got.Properties)
	}
	if _, err := e.pools.BeginDeleteMachines(ctx, testRG, AKSDefaultClusterName, "pool1",
		armcontainerservice.AgentPoolDeleteMachinesParameter{MachineNames: []*string{to.Ptr("aks-nope-vmss000000")}}, nil); aksCode(t, err) != "InvalidParameter" {
		t.Fatalf("deleting an unknown machine: %v", err)
	}

	del, err := e.pools.BeginDelete(ctx, testRG, AKSDefaultClusterName, "pool1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := del.PollUntilDone(ctx, fastPoll); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pools.Get(ctx, testRG, AKSDefaultClusterName, "pool1", nil); aksCode(t, err) != "ResourceNotFound" {
		t.Fatalf("a deleted agent pool: %v", err)
	}
}

// TestAKSRefusesWhatAKSRefuses: an unknown VM size, a System pool without
// nodes, an orchestratorVersion newer than the cluster's and a change of a
// property AKS cannot change in place are refused naming the property.
func TestAKSRefusesWhatAKSRefuses(t *testing.T) {
	e := startAKS(t)
	ctx := t.Context()
	put := func(name string, ap armcontainerservice.AgentPool) error {
		_, err := e.pools.BeginCreateOrUpdate(ctx, testRG, AKSDefaultClusterName, name, ap, nil)
		return err
	}
	newer := agentPool(armcontainerservice.AgentPoolModeUser, "Standard_D2s_v5", 1)
	newer.Properties.OrchestratorVersion = to.Ptr("1.32.0")
	for _, c := range []struct {
		name, pool string
		ap         armcontainerservice.AgentPool
		code       string
	}{
		{"unknown VM size", "pool2", agentPool(armcontainerservice.AgentPoolModeUser, "Standard_Nope", 1), "VMSizeNotSupported"},
		{"System pool of 0", "pool2", agentPool(armcontainerservice.AgentPoolModeSystem, "Standard_D2s_v5", 0), "InvalidParameter"},
		{"invalid name", "Pool_2", agentPool(armcontainerservice.AgentPoolModeUser, "Standard_D2s_v5", 1), "InvalidParameter"},
		{"newer than the cluster", "pool2", newer, "InvalidParameter"},
	} {
		if code := aksCode(t, put(c.pool, c.ap)); code != c.code {
			t.Errorf("%s: %s, want %s", c.name, code, c.code)
		}
	}
	if err := put("pool3", agentPool(armcontainerservice.AgentPoolModeUser, "Standard_D2s_v5", 1)); err != nil {
		t.Fatal(err)
	}
	err := put("pool3", agentPool(armcontainerservice.AgentPoolModeUser, "Standard_D4s_v5", 1))
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.ErrorCode != "PropertyChangeNotAllowed" || !strings.Contains(err.Error(), "vmSize") {
		t.Fatalf("changing vmSize: %v", err)
	}
	// Count, labels and mode change in place.
	ap := agentPool(armcontainerservice.AgentPoolModeSystem, "Standard_D2s_v5", 2)
	ap.Properties.NodeLabels["team"] = to.Ptr("b")
	if err := put("pool3", ap); err != nil {
		t.Fatalf("an in-place change: %v", err)
	}
}
