package azure_test

import (
	"context"
	"crypto/tls"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/mpool-dev/mpool/internal/provider/azure"
	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/scalegroup"
	"github.com/mpool-dev/mpool/internal/testenv/cloudtest"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/azureface"
	"github.com/mpool-dev/mpool/sim/server"
)

// testScope is the resource group the tests' scale sets live in.
const testScope = "/subscriptions/" + azureface.AzureDefaultSubscriptionID + "/resourceGroups/" + azureface.AzureDefaultResourceGroup

// env is a simulated cloud, on a fake clock, and the Azure ScaleGroup
// pointed at its Azure face over HTTPS with the real SDK.
type env struct {
	*cloudtest.Env
	sg    *azure.ScaleSets
	creds *testCredentials
	// restarted returns another ScaleSets of the same cloud: a restarted
	// manager's.
	restarted func(t testing.TB) *azure.ScaleSets
}

// testCredentials resolves every Ref to one client-secret credential of
// the face's default service principal (or secret, when set), built once.
type testCredentials struct {
	opts   azcore.ClientOptions
	secret string

	mu    sync.Mutex
	cred  azcore.TokenCredential
	calls int
}

func (c *testCredentials) TokenCredential(_ context.Context, _ scalegroup.Ref) (azcore.TokenCredential, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if c.cred == nil {
		secret := c.secret
		if secret == "" {
			secret = azureface.AzureDefaultClientSecret
		}
		cred, err := azidentity.NewClientSecretCredential(azureface.AzureDefaultTenantID, azureface.AzureDefaultClientID, secret,
			&azidentity.ClientSecretCredentialOptions{ClientOptions: c.opts, DisableInstanceDiscovery: true})
		if err != nil {
			return nil, err
		}
		c.cred = cred
	}
	return c.cred, nil
}

// renew makes the resolver return a new credential (a rotated secret).
func (c *testCredentials) renew(secret string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cred, c.secret = nil, secret
}

// startAzure starts a simulated cloud serving the default Azure face with
// cloudtest.DefaultSimulation, and the ScaleGroup.
func startAzure(t testing.TB) *env { return startAzureWith(t, nil, cloudtest.DefaultSimulation) }

// startAzureWith starts a simulated cloud serving face (nil: the default
// Azure face) with sim on a fake clock, and the ScaleGroup.
func startAzureWith(t testing.TB, face *azureface.AzureFace, sim core.Simulation) *env {
	t.Helper()
	o := cloudtest.Options{Face: azureface.AzureFaceName, Simulation: sim, Ignored: []string{azureface.OpAzureToken, azureface.OpAzureDiscovery}}
	if face != nil {
		o.Faces = []core.Face{face}
	}
	e := &env{}
	e.Env = cloudtest.Start(t, o, func(c *cloudtest.Env) (scalegroup.ScaleGroup, error) {
		pool, err := server.CertPool(c.Srv.CA())
		if err != nil {
			return nil, err
		}
		u := c.FaceURL()
		hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
		e.creds = &testCredentials{opts: azcore.ClientOptions{
			Cloud: cloud.Configuration{
				ActiveDirectoryAuthorityHost: u + "/",
				Services:                     map[cloud.ServiceName]cloud.ServiceConfiguration{cloud.ResourceManager: {Endpoint: u, Audience: u}},
			},
			Transport: hc,
			Retry:     policy.RetryOptions{MaxRetries: -1},
		}}
		opts := azure.Options{ResourceManagerEndpoint: u, AuthorityHost: u, HTTPClient: hc, Credentials: e.creds}
		e.restarted = func(t testing.TB) *azure.ScaleSets {
			sg, err := azure.New(opts)
			if err != nil {
				t.Fatal(err)
			}
			return sg
		}
		e.sg, err = azure.New(opts)
		return e.sg, err
	})
	return e
}

// startDeleting starts the cloud, whose VMs take 5 s to delete, and the
// ScaleGroup with the scale set pool0 of capacity Uniform VMs at rest.
func startDeleting(t testing.TB, capacity int32) (*env, scalegroup.Ref) {
	t.Helper()
	e, r := startAzureWith(t, nil, core.Simulation{BootDelay: cloudtest.BootDelay, DeleteDelay: 5 * time.Second}), ref("pool0")
	e.Apply(t, r, spec(capacity, "h1", "Uniform"))
	e.Settle(t, r)
	return e, r
}

func ref(name string) scalegroup.Ref {
	return scalegroup.Ref{Name: name, Scope: testScope, Location: azureface.AzureDefaultLocation}
}

// vmModel is a Linux VM model as the Adapter builds it.
func vmModel(mode string) azure.VMModel {
	return azure.VMModel{
		OrchestrationMode:  mode,
		ComputerNamePrefix: "pool0",
		AdminUsername:      "capi",
		SSHPublicKey:       "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEXAMPLE test",
		Image:              azure.Image{Publisher: "cncf-upstream", Offer: "capi", SKU: "ubuntu-2204-gen1", Version: "130.4.20240717"},
		OSDisk:             azure.OSDisk{OSType: "Linux", SizeGB: 30, StorageAccountType: "Premium_LRS", Caching: "ReadWrite"},
		SubnetID:           "/subscriptions/" + azureface.AzureDefaultSubscriptionID + "/resourceGroups/mpool/providers/Microsoft.Network/virtualNetworks/vnet/subnets/node",
		Identity:           azure.Identity{Type: "SystemAssigned"},
	}
}

// spec is a pool's desired group: Standard_D2s_v3 VMs of model hash.
func spec(capacity int32, hash, mode string, zones ...string) scalegroup.GroupSpec {
	vm := vmModel(mode)
	return scalegroup.GroupSpec{
		Capacity:  capacity,
		ModelHash: hash,
		Model: scalegroup.Model{
			InstanceType: "Standard_D2s_v3",
			Image:        vm.Image.String(),
			Zones:        zones,
			Version:      "v1.30.4",
			CustomData:   []byte("#cloud-config\n# token abc\n"),
			Tags:         map[string]string{"team": "a"},
			Provider:     vm,
		},
	}
}

// writes are the requests that change something.
func writes(r cloudtest.Requests) int64 {
	return r[azureface.OpAzureVMSSCreateOrUpdate] + r[azureface.OpAzureVMSSUpdate] + r[azureface.OpAzureVMSSDelete] +
		r[azureface.OpAzureVMSSDeleteInstances] + r[azureface.OpAzureVMDelete] + r[azureface.OpAzureVMSSVMDelete]
}

// groupKey is the simulated cloud's key of the tests' scale set name.
func groupKey(name string) core.GroupKey {
	return azureface.AzureGroupKey(azureface.AzureDefaultSubscriptionID, azureface.AzureDefaultResourceGroup, name)
}

func hashes(g *scalegroup.Group) map[string]string {
	out := map[string]string{}
	for _, in := range g.Instances {
		out[in.ID] = in.ModelHash
	}
	return out
}

func TestUniformCreate(t *testing.T) {
	e := startAzure(t)
	r := ref("pool0")

	g := e.Apply(t, r, spec(3, "h1", "Uniform", "1", "2", "3"))
	// Apply does not wait: the VMs are being created, the operation is the
	// scale set's creation, with the poller's resume token.
	if g.Capacity != 3 || g.ModelHash != "h1" || len(g.Instances) != 3 {
		t.Fatalf("applied group: capacity %d hash %q instances %v", g.Capacity, g.ModelHash, cloudtest.IDs(g))
	}
	if op := g.Operation; op == nil || op.Type != scalegroup.OperationScale || op.ResumeToken == "" || op.ID == "" || op.StartedAt.IsZero() {
		t.Fatalf("operation after create: %+v", g.Operation)
	}
	for _, in := range g.Instances {
		if in.State != scalegroup.StateCreating {
			t.Fatalf("instance %s is %s right after the create", in.ID, in.State)
		}
	}
	// A create costs the GET that found nothing, the location's VM sizes
	// (once an hour), the PUT and the VM list.
	if got := e.Requests(); got[azureface.OpAzureVMSSGet] != 1 || got[azureface.OpAzureSkuList] != 1 || got[azureface.OpAzureVMSSCreateOrUpdate] != 1 || got[azureface.OpAzureVMSSVMList] != 1 || got.Total() != 4 {
		t.Fatalf("requests of a create: %v", got)
	}
	// Get while creating reports the same operation, resume token included.
	if g := e.Get(t, r); g.Operation == nil || g.Operation.ResumeToken == "" || g.Operation.Type != scalegroup.OperationScale {
		t.Fatalf("operation seen by Get: %+v", g.Operation)
	}

	g = e.Settle(t, r)
	cg := e.CloudGroup(t, groupKey("pool0"))
	if !slices.Equal(cloudtest.IDs(g), []string{"0", "1", "2"}) || g.Operation != nil || g.Message != "" {
		t.Fatalf("booted group: %v op %+v message %q", cloudtest.IDs(g), g.Operation, g.Message)
	}
	zones := map[string]bool{}
	for i, in := range g.Instances {
		want := "azure://" + testScope + "/providers/Microsoft.Compute/virtualMachineScaleSets/pool0/virtualMachines/" + in.ID
		if in.ProviderID != want || in.ProviderID != cg.Instances[i].ProviderID {
			t.Fatalf("instance %s providerID %q, want %q (the Node's %q)", in.ID, in.ProviderID, want, cg.Instances[i].ProviderID)
		}
		if in.ModelHash != "h1" || in.CreatedAt.IsZero() || in.Zone == "" || in.Message != "" {
			t.Fatalf("instance %+v", in)
		}
		zones[in.Zone] = true
	}
	if len(zones) != 3 {
		t.Fatalf("instances in zones %v, want spread over 1, 2 and 3", zones)
	}
	// What reached the cloud: the size, image, custom data, tags and the
	// Kubernetes version the Nodes report.
	if cg.Model.InstanceType != "Standard_D2s_v3" || cg.Model.Image != "cncf-upstream:capi:ubuntu-2204-gen1:130.4.20240717" ||
		cg.Model.Tags["team"] != "a" || cg.Model.Extra[core.ExtraVersion] != "v1.30.4" {
		t.Fatalf("the cloud's model: %+v", cg.Model)
	}
	if cd := e.CustomData(t, groupKey("pool0")); cd != "#cloud-config\n# token abc\n" {
		t.Fatalf("custom data %q", cd)
	}
}

func TestApplyWritesOnlyWhatDiffers(t *testing.T) {
	e := startAzure(t)
	r := ref("pool0")
	e.Apply(t, r, spec(2, "h1", "Uniform"))
	e.Settle(t, r)

	for _, tc := range []struct {
		name string
		why  string
		// capacity and change make the spec applied: spec(capacity, "h1",
		// "Uniform"), its model changed by change.
		capacity int32
		change   func(*scalegroup.Model)
		// method is the write expected: "" none, PATCH or PUT.
		method     string
		customData string
	}{
		{
			name: "same spec", why: "a pool at rest costs a read, no write",
			capacity: 2, method: "",
		},
		{
			name: "rotated token only", why: "custom data is not compared (Azure never returns it): a rotation alone costs no write",
			capacity: 2, change: func(m *scalegroup.Model) { m.CustomData = []byte("#cloud-config\n# token def\n") },
			method: "", customData: "#cloud-config\n# token abc\n",
		},
		{
			name: "capacity", why: "a capacity change is one PATCH, carrying the current custom data",
			capacity: 3, change: func(m *scalegroup.Model) { m.CustomData = []byte("#cloud-config\n# token ghi\n") },
			method: http.MethodPatch, customData: "#cloud-config\n# token ghi\n",
		},
		{
			name: "tags", why: "tags are applied in place: one PUT",
			capacity: 3, change: func(m *scalegroup.Model) { m.Tags["team"] = "b" },
			method: http.MethodPut,
		},
		{
			name: "in-place settings", why: "the terminate notification is applied in place: one PUT",
			capacity: 3, change: func(m *scalegroup.Model) {
				m.Tags["team"] = "b"
				m.InPlace = &azure.ScaleSetSettings{TerminateNotificationTimeout: 10}
			},
			method: http.MethodPut,
		},
		{
			name: "in-place settings again", why: "applied settings are read back from the scale set",
			capacity: 3, change: func(m *scalegroup.Model) {
				m.Tags["team"] = "b"
				m.InPlace = azure.ScaleSetSettings{TerminateNotificationTimeout: 10}
			},
			method: "",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := spec(tc.capacity, "h1", "Uniform")
			if tc.change != nil {
				tc.change(&s.Model)
			}
			g, got := e.ApplyCounted(t, r, s)
			if g.Capacity != s.Capacity || int32(len(g.Instances)) != s.Capacity {
				t.Fatalf("%s: capacity %d with %d instances, want %d", tc.why, g.Capacity, len(g.Instances), s.Capacity)
			}
			want := cloudtest.Requests{azureface.OpAzureVMSSGet: 1, azureface.OpAzureVMSSVMList: 1}
			switch tc.method {
			case http.MethodPatch:
				want[azureface.OpAzureVMSSUpdate] = 1
			case http.MethodPut:
				want[azureface.OpAzureVMSSCreateOrUpdate] = 1
			}
			if !maps.Equal(got, want) {
				t.Fatalf("%s: requests %v, want %v", tc.why, got, want)
			}
			if tc.customData != "" {
				if cd := e.CustomData(t, groupKey("pool0")); cd != tc.customData {
					t.Fatalf("%s: custom data %q, want %q", tc.why, cd, tc.customData)
				}
			}
			e.Settle(t, r)
		})
	}
}

func TestModelChangeKeepsOldInstances(t *testing.T) {
	e := startAzure(t)
	r := ref("pool0")
	e.Apply(t, r, spec(2, "h1", "Uniform"))
	e.Settle(t, r)

	s := spec(4, "h2", "Uniform")
	vm := s.Model.Provider.(azure.VMModel)
	vm.Image.Version = "131.1.20240901"
	s.Model.Provider, s.Model.Image, s.Model.Version = &vm, vm.Image.String(), "v1.31.1"
	g := e.Apply(t, r, s)
	if g.ModelHash != "h2" || g.Operation == nil || g.Operation.Type != scalegroup.OperationUpdate {
		t.Fatalf("after the model change: hash %q operation %+v", g.ModelHash, g.Operation)
	}
	g = e.Settle(t, r)
	want := map[string]string{"0": "h1", "1": "h1", "2": "h2", "3": "h2"}
	if got := hashes(g); !maps.Equal(got, want) {
		t.Fatalf("instances' model hashes %v, want %v (old VMs keep theirs until deleted)", got, want)
	}
	// The engine replaces the old VMs by deleting them.
	if err := e.sg.DeleteInstances(context.Background(), r, []string{"0", "1"}); err != nil {
		t.Fatal(err)
	}
	g = e.Settle(t, r)
	if g.Capacity != 2 || !slices.Equal(cloudtest.IDs(g), []string{"2", "3"}) {
		t.Fatalf("after deleting the old VMs: capacity %d instances %v", g.Capacity, cloudtest.IDs(g))
	}
}

func TestDeleteInstancesUniform(t *testing.T) {
	e, r := startDeleting(t, 3)
	ctx := context.Background()

	e.Srv.ResetStats()
	if err := e.sg.DeleteInstances(ctx, r, []string{"1"}); err != nil {
		t.Fatal(err)
	}
	if got := e.Requests(); got[azureface.OpAzureVMSSDeleteInstances] != 1 || got.Total() != 1 {
		t.Fatalf("requests of DeleteInstances: %v, want the one delete action", got)
	}
	g := e.Get(t, r)
	if g.Capacity != 2 || g.Instances[1].ID != "1" || g.Instances[1].State != scalegroup.StateDeleting {
		t.Fatalf("after deleting 1: capacity %d instances %+v", g.Capacity, g.Instances)
	}
	// Deleting it again (still deleting, then gone), or an unknown ID, does
	// not lower the capacity again.
	for _, again := range [][]string{{"1"}, {"1", "7"}} {
		if err := e.sg.DeleteInstances(ctx, r, again); err != nil {
			t.Fatal(err)
		}
		if g := e.Get(t, r); g.Capacity != 2 {
			t.Fatalf("capacity after deleting %v again: %d", again, g.Capacity)
		}
		e.Clk.Step(6 * time.Second)
	}
	if g := e.Get(t, r); !slices.Equal(cloudtest.IDs(g), []string{"0", "2"}) {
		t.Fatalf("instances left: %v", cloudtest.IDs(g))
	}
	// Azure refuses IDs a scale set does not have; the VM list then says
	// which are left, and the action is sent again for those only.
	e.Srv.ResetStats()
	if err := e.sg.DeleteInstances(ctx, r, []string{"1", "2"}); err != nil {
		t.Fatal(err)
	}
	st := e.Srv.Stats()
	if st.CountStatus(azureface.OpAzureVMSSDeleteInstances, http.StatusBadRequest) != 1 || st.CountStatus(azureface.OpAzureVMSSDeleteInstances, http.StatusAccepted) != 1 {
		t.Fatalf("deleting a gone and a live VM: %v", e.Requests())
	}
	if g := e.Get(t, r); g.Capacity != 1 || g.Instances[1].State != scalegroup.StateDeleting {
		t.Fatalf("after deleting 1 (gone) and 2: capacity %d instances %+v", g.Capacity, g.Instances)
	}
	// Nothing to delete costs nothing; a scale set that does not exist has
	// no instances.
	e.Srv.ResetStats()
	if err := e.sg.DeleteInstances(ctx, r, nil); err != nil || e.Requests().Total() != 0 {
		t.Fatalf("empty DeleteInstances: %v, %v", err, e.Requests())
	}
	if err := e.sg.DeleteInstances(ctx, ref("missing"), []string{"0"}); err != nil {
		t.Fatalf("DeleteInstances of a missing scale set: %v", err)
	}
}

func TestGetCostIsOneGetPlusListPages(t *testing.T) {
	e := startAzureWith(t, &azureface.AzureFace{PageSize: 2}, cloudtest.DefaultSimulation)
	for _, mode := range []string{"Uniform", "Flexible"} {
		t.Run(mode, func(t *testing.T) {
			r := ref("cost-" + strings.ToLower(mode))
			e.Apply(t, r, spec(5, "h1", mode, "1", "2"))
			e.Settle(t, r)
			e.Srv.ResetStats()
			g := e.Get(t, r)
			got := e.Requests()
			list := azureface.OpAzureVMSSVMList
			if mode == "Flexible" {
				list = azureface.OpAzureVMList
			}
			if len(g.Instances) != 5 || got[azureface.OpAzureVMSSGet] != 1 || got[list] != 3 || got.Total() != 4 {
				t.Fatalf("Get of 5 VMs at 2 per page: %d instances, requests %v; want 1 GET and 3 pages", len(g.Instances), got)
			}
		})
	}
}

func TestDelete(t *testing.T) {
	e, r := startDeleting(t, 2)
	ctx := context.Background()

	if err := e.sg.Delete(ctx, r); err != nil {
		t.Fatal(err)
	}
	g := e.Get(t, r)
	if g.Operation == nil || g.Operation.Type != scalegroup.OperationDelete || g.Operation.ResumeToken == "" {
		t.Fatalf("operation while deleting: %+v", g.Operation)
	}
	// Deleting again while it is being deleted is accepted.
	if err := e.sg.Delete(ctx, r); err != nil {
		t.Fatalf("Delete while deleting: %v", err)
	}
	e.Clk.Step(6 * time.Second)
	if _, err := e.sg.Get(ctx, r); !scalegroup.IsNotFound(err) {
		t.Fatalf("Get after the deletion: %v, want NotFound", err)
	}
	if err := e.sg.Delete(ctx, r); err != nil {
		t.Fatalf("Delete of a deleted scale set: %v", err)
	}
}

func TestClientsAndTokensAreCachedPerCredential(t *testing.T) {
	e := startAzure(t)
	r := ref("pool0")
	e.Apply(t, r, spec(1, "h1", "Uniform"))
	for range 3 {
		e.Get(t, r)
	}
	if n := e.Srv.Stats().Count(azureface.OpAzureToken); n != 1 {
		t.Fatalf("%d token requests for 4 calls with one credential, want 1", n)
	}
	// A new credential (a rotated secret) is used from the next call.
	e.creds.renew(azureface.AzureDefaultClientSecret)
	e.Get(t, r)
	if n := e.Srv.Stats().Count(azureface.OpAzureToken); n != 2 {
		t.Fatalf("%d token requests after the credential changed, want 2", n)
	}
}

func TestCapabilities(t *testing.T) {
	e := startAzure(t)
	if c := e.sg.Capabilities(); c != (scalegroup.Capabilities{}) {
		t.Fatalf("capabilities %+v: the engine picks the victims", c)
	}
}

// TestRequestsAreBounded: the SDK bounds no request by default; each try
// of ours carries kit.RequestTimeout, with the SDK's retries off.
func TestRequestsAreBounded(t *testing.T) {
	_, co, err := azure.ClientOptions(azure.Options{Credentials: &testCredentials{}})
	if err != nil {
		t.Fatal(err)
	}
	if co.Retry.TryTimeout != kit.RequestTimeout || co.Retry.MaxRetries != -1 {
		t.Fatalf("retry options %+v, want one try bounded by %s", co.Retry, kit.RequestTimeout)
	}
}
