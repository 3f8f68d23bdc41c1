package aks_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
	"github.com/mpool-dev/mpool/internal/kubeenv"
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
// the same pool, count, mode, size, version and machines. It installs the
// SDK itself (jsClient); it is skipped only where node and npm are not
// installed or the npm registry cannot be reached.
func TestJSClientSeesTheAgentPools(t *testing.T) {
	node, dir := jsClient(t)
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
	cmd.Dir = dir
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

// jsClient returns node and a directory holding hack/aksjs's client with
// its packages installed: a copy of it in mpool's cache directory, named
// by the hash of its files, where `npm ci` runs once (the source tree is
// never written). It skips the test when node or npm is missing or npm
// cannot install the packages.
func jsClient(t *testing.T) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed")
	}
	files := []string{"package.json", "package-lock.json", "read.mjs"}
	h := sha256.New()
	contents := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(jsClientDir, f))
		if err != nil {
			t.Fatal(err)
		}
		contents[f] = b
		h.Write(b)
	}
	cache, err := kubeenv.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(cache, "aksjs-"+hex.EncodeToString(h.Sum(nil))[:12])
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@azure", "arm-containerservice")); err == nil {
		return node, dir
	}
	tmp, err := os.MkdirTemp(cache, "aksjs-install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	for f, b := range contents {
		if err := os.WriteFile(filepath.Join(tmp, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("the Azure SDK for JS could not be installed (npm ci in a copy of hack/aksjs: %v):\n%s", err, out)
	}
	// Another test process may have installed it meanwhile: either copy
	// is whole.
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, "node_modules")); statErr != nil {
			t.Fatal(err)
		}
	}
	return node, dir
}
