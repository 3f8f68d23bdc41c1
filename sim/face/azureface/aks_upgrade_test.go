package azureface

import (
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/server"
	"github.com/mpool-dev/mpool/sim/server/servertest"
)

// TestAKSUpgradeWithinMaxSurge: an orchestratorVersion change through the
// real armcontainerservice is AKS's own upgrade: Upgrading, with the old
// version as currentOrchestratorVersion, never more than count + maxSurge
// VMs, every old VM replaced after its soak (nodeSoakDurationInMinutes, one
// face minute each); upgradeSettings out of AKS's ranges are refused
// naming the property.
func TestAKSUpgradeWithinMaxSurge(t *testing.T) {
	const minute = 100 * time.Millisecond
	srv, pools := startAKSUpgrades(t, minute, "v1.32")
	ctx := t.Context()

	ap := agentPool(armcontainerservice.AgentPoolModeUser, "Standard_D2s_v5", 3)
	ap.Properties.OrchestratorVersion = to.Ptr("1.31.0")
	ap.Properties.UpgradeSettings = &armcontainerservice.AgentPoolUpgradeSettings{MaxSurge: to.Ptr("1"), NodeSoakDurationInMinutes: to.Ptr[int32](1)}
	bad := agentPool(armcontainerservice.AgentPoolModeUser, "Standard_D2s_v5", 3)
	bad.Properties.UpgradeSettings = &armcontainerservice.AgentPoolUpgradeSettings{DrainTimeoutInMinutes: to.Ptr[int32](0)}
	if _, err := pools.BeginCreateOrUpdate(ctx, testRG, AKSDefaultClusterName, "pool1", bad, nil); aksCode(t, err) != "InvalidParameter" {
		t.Fatalf("drainTimeoutInMinutes 0: %v", err)
	}
	p, err := pools.BeginCreateOrUpdate(ctx, testRG, AKSDefaultClusterName, "pool1", ap, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.PollUntilDone(ctx, fastPoll); err != nil {
		t.Fatal(err)
	}
	key := AKSScaleSetKey(AzureDefaultSubscriptionID, testRG, AKSDefaultClusterName, "MC_"+testRG+"_"+AKSDefaultClusterName+"_"+AzureDefaultLocation, "pool1")
	group := func() *core.Group {
		g, err := srv.Cloud().Scope(key.Face, key.Scope).GetGroup(key.Name)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	before := map[string]bool{}
	for _, in := range group().Instances {
		before[in.ID] = true
	}

	ap.Properties.OrchestratorVersion = to.Ptr("1.32.0")
	p, err = pools.BeginCreateOrUpdate(ctx, testRG, AKSDefaultClusterName, "pool1", ap, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pools.Get(ctx, testRG, AKSDefaultClusterName, "pool1", nil)
	if err != nil || ptr.Deref(got.Properties.ProvisioningState, "") != "Upgrading" || ptr.Deref(got.Properties.CurrentOrchestratorVersion, "") != "1.31.0" {
		t.Fatalf("during the upgrade: %v, state %v, current version %v", err, ptr.Deref(got.Properties.ProvisioningState, ""), ptr.Deref(got.Properties.CurrentOrchestratorVersion, ""))
	}
	start := time.Now()
	for !p.Done() {
		if _, err := p.Poll(ctx); err != nil {
			t.Fatal(err)
		}
		live := 0
		for _, in := range group().Instances {
			if in.State != core.StateDeleting {
				live++
			}
		}
		if live > 4 {
			t.Fatalf("%d VMs during the upgrade of 3 with maxSurge 1", live)
		}
		if time.Since(start) > time.Minute {
			t.Fatal("the upgrade did not end within a minute")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := p.Result(ctx); err != nil {
		t.Fatal(err)
	}
	// Three soaks of a face minute, one old VM at a time.
	if d := time.Since(start); d < 3*minute {
		t.Errorf("the upgrade took %s, less than three soaks of %s", d, minute)
	}
	got, err = pools.Get(ctx, testRG, AKSDefaultClusterName, "pool1", nil)
	if err != nil || ptr.Deref(got.Properties.ProvisioningState, "") != "Succeeded" || ptr.Deref(got.Properties.CurrentOrchestratorVersion, "") != "1.32.0" || ptr.Deref(got.Properties.Count, 0) != 3 {
		t.Fatalf("after the upgrade: %v, %+v", err, got.Properties)
	}
	n := 0
	for _, in := range group().Instances {
		if in.State == core.StateDeleting {
			continue
		}
		n++
		if before[in.ID] {
			t.Errorf("VM %s of 1.31.0 is still there", in.ID)
		}
	}
	if n != 3 {
		t.Fatalf("%d VMs after the upgrade, want 3", n)
	}
	// What a client read it may write back: AKS's defaults (maxPods,
	// osDiskType) are no change.
	if _, err := pools.BeginCreateOrUpdate(ctx, testRG, AKSDefaultClusterName, "pool1", got.AgentPool, nil); err != nil {
		t.Fatalf("writing back the agent pool as read: %v", err)
	}
}

// TestAKSNodeImageUpgrade: upgradeNodeImageVersion through the real
// armcontainerservice moves an agent pool's nodes to the cluster's newest
// node image (AKSReleaseNodeImage) at the same version, replacing every
// VM; with the newest image already there it is done at once.
func TestAKSNodeImageUpgrade(t *testing.T) {
	srv, pools := startAKSUpgrades(t, time.Millisecond, "v1.31")
	ctx := t.Context()
	p, err := pools.BeginCreateOrUpdate(ctx, testRG, AKSDefaultClusterName, "pool1", agentPool(armcontainerservice.AgentPoolModeUser, "Standard_D2s_v5", 2), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.PollUntilDone(ctx, fastPoll); err != nil {
		t.Fatal(err)
	}
	// The newest image already: done at once.
	up, err := pools.BeginUpgradeNodeImageVersion(ctx, testRG, AKSDefaultClusterName, "pool1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := up.PollUntilDone(ctx, fastPoll); err != nil {
		t.Fatal(err)
	}
	key := AKSScaleSetKey(AzureDefaultSubscriptionID, testRG, AKSDefaultClusterName, "MC_"+testRG+"_"+AKSDefaultClusterName+"_"+AzureDefaultLocation, "pool1")
	ids := func() map[string]string {
		g, err := srv.Cloud().Scope(key.Face, key.Scope).GetGroup(key.Name)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, in := range g.Instances {
			if in.State != core.StateDeleting {
				out[in.ID] = in.ModelHash
			}
		}
		return out
	}
	before := ids()

	const image = "AKSUbuntu-2204gen2containerd-202412.03.0"
	if err := AKSReleaseNodeImage(srv.Cloud(), AzureDefaultSubscriptionID, testRG, AKSDefaultClusterName, image); err != nil {
		t.Fatal(err)
	}
	up, err = pools.BeginUpgradeNodeImageVersion(ctx, testRG, AKSDefaultClusterName, "pool1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := up.PollUntilDone(ctx, fastPoll); err != nil {
		t.Fatal(err)
	}
	got, err := pools.Get(ctx, testRG, AKSDefaultClusterName, "pool1", nil)
	if err != nil || ptr.Deref(got.Properties.NodeImageVersion, "") != image || ptr.Deref(got.Properties.CurrentOrchestratorVersion, "") != "1.31.0" ||
		ptr.Deref(got.Properties.ProvisioningState, "") != "Succeeded" {
		t.Fatalf("after the node image upgrade: %v, %+v", err, got.Properties)
	}
	after := ids()
	if len(after) != 2 {
		t.Fatalf("%d VMs after the node image upgrade, want 2", len(after))
	}
	for id := range after {
		if _, ok := before[id]; ok {
			t.Errorf("VM %s of the old image is still there", id)
		}
	}
}

// startAKSUpgrades starts a simulated Azure whose AKS minute lasts minute,
// with the AKS cluster mpool-aks at version, and returns an
// AgentPoolsClient of the real armcontainerservice on it.
func startAKSUpgrades(t *testing.T, minute time.Duration, version string) (*server.Server, *armcontainerservice.AgentPoolsClient) {
	t.Helper()
	srv := servertest.Start(t, core.Options{DefaultSimulation: &core.Simulation{BootDelay: 50 * time.Millisecond}}, &AzureFace{AKSMinute: minute})
	if err := AKSCreateCluster(srv.Cloud(), AzureDefaultSubscriptionID, testRG, AKSDefaultClusterName, AzureDefaultLocation, version); err != nil {
		t.Fatal(err)
	}
	e := newAzureEnv(t, srv)
	f, err := armcontainerservice.NewClientFactory(AzureDefaultSubscriptionID, e.cred, &arm.ClientOptions{ClientOptions: e.co})
	if err != nil {
		t.Fatal(err)
	}
	return srv, f.NewAgentPoolsClient()
}
