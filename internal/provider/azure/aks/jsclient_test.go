package aks_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/azure/aks"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/scalegroup"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/azureface"
)

// jsClientDir holds the independent client: the Azure SDK for JS reading
// an AKS cluster's agent pools and machines (hack/aksjs/read.mjs).
var jsClientDir = filepath.Join("..", "..", "..", "..", "hack", "aksjs")

// TestJSClientSeesTheAgentPools: the agent pool the AKS provider created
// (through armcontainerservice for Go) is what an independent client, the
// Azure SDK for JS (@azure/arm-containerservice with @azure/identity's
// client secret credential, over TLS with the simulated cloud's CA), lists:
// the same pool, count, mode, size, version and machines. It needs node
// and `npm ci` in hack/aksjs; without them it is skipped.
func TestJSClientSeesTheAgentPools(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	if _, err := os.Stat(filepath.Join(jsClientDir, "node_modules", "@azure", "arm-containerservice")); err != nil {
		t.Skip("the Azure SDK for JS is not installed: run `npm ci` in hack/aksjs")
	}
	srv, sg, cp := startSimulatedAKS(t, core.Options{Seed: 9, DefaultSimulation: &core.Simulation{BootDelay: 100 * time.Millisecond}})
	u := srv.FaceURL(azureface.AzureFaceName)

	// The provider creates a System pool of 3 and waits for its nodes.
	amp := &infrav1.AzureManagedMachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "jspool"},
		Spec: infrav1.AzureManagedMachinePoolSpec{Mode: infrav1.NodePoolModeSystem, SKU: "Standard_D2s_v5"}}
	ref, err := aks.Adapter{}.GroupRef(amp, cp)
	if err != nil {
		t.Fatal(err)
	}
	mp := &clusterv1.MachinePool{Spec: clusterv1.MachinePoolSpec{ClusterName: "aks", Replicas: ptr.To[int32](3)}}
	d, err := aks.Adapter{}.Desired(amp, contract.Owner{MachinePool: mp, Version: "v" + azureface.AKSDefaultVersion, InfraCluster: cp})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := sg.Apply(ctx, ref, scalegroup.GroupSpec{Capacity: 3, ModelHash: "h1", Model: d.Model}); err != nil {
		t.Fatal(err)
	}
	var g *scalegroup.Group
	deadline := time.Now().Add(time.Minute)
	for g = nil; g == nil || g.Operation != nil || len(g.Instances) != 3; {
		if time.Now().After(deadline) {
			t.Fatalf("the agent pool did not settle at 3 nodes: %+v", g)
		}
		time.Sleep(50 * time.Millisecond)
		if g, err = sg.Get(ctx, ref); err != nil {
			t.Fatal(err)
		}
	}

	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, srv.CA(), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, node, "read.mjs")
	cmd.Dir = jsClientDir
	cmd.Env = append(os.Environ(), "NODE_EXTRA_CA_CERTS="+ca, "ARM_ENDPOINT="+u,
		"AZURE_TENANT_ID="+azureface.AzureDefaultTenantID, "AZURE_CLIENT_ID="+azureface.AzureDefaultClientID,
		"AZURE_CLIENT_SECRET="+azureface.AzureDefaultClientSecret, "AZURE_SUBSCRIPTION_ID="+azureface.AzureDefaultSubscriptionID,
		"AZURE_RESOURCE_GROUP="+azureface.AzureDefaultResourceGroup, "AKS_CLUSTER="+azureface.AKSDefaultClusterName)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node read.mjs: %v\n%s", err, stderr.String())
	}
	var got struct {
		Pools []struct {
			Name, Mode, VMSize, ProvisioningState, OrchestratorVersion string
			Count                                                      int32
			Machines                                                   []struct{ Name, ResourceID string }
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("read.mjs printed %q: %v", out, err)
	}
	if len(got.Pools) != 1 {
		t.Fatalf("the JS client lists %d agent pools, want the provider's one: %s", len(got.Pools), out)
	}
	t.Logf("read.mjs: %s", out)
	p := got.Pools[0]
	if p.Name != ref.Name || p.Count != 3 || p.Mode != "System" || p.VMSize != "Standard_D2s_v5" || p.ProvisioningState != "Succeeded" ||
		p.OrchestratorVersion != azureface.AKSDefaultVersion {
		t.Fatalf("the JS client sees %+v; want pool %s of 3 System Standard_D2s_v5 nodes at %s, Succeeded", p, ref.Name, azureface.AKSDefaultVersion)
	}
	var js, goIDs, goProviderIDs, jsProviderIDs []string
	for _, m := range p.Machines {
		js, jsProviderIDs = append(js, m.Name), append(jsProviderIDs, "azure://"+m.ResourceID)
	}
	for _, in := range g.Instances {
		goIDs, goProviderIDs = append(goIDs, in.ID), append(goProviderIDs, in.ProviderID)
	}
	slices.Sort(js)
	slices.Sort(goIDs)
	slices.Sort(jsProviderIDs)
	slices.Sort(goProviderIDs)
	if !slices.Equal(js, goIDs) || !slices.Equal(jsProviderIDs, goProviderIDs) {
		t.Fatalf("the JS client's machines %v (%v), the provider's %v (%v)", js, jsProviderIDs, goIDs, goProviderIDs)
	}
}
