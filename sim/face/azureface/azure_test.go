package azureface

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/server"
	"github.com/mpool-dev/mpool/sim/server/servertest"
	"github.com/mpool-dev/mpool/sim/wire/azureapi"
)

// azureTestEnv is a simulated cloud with clients of the real Azure SDK
// pointed at its Azure face.
type azureTestEnv struct {
	srv  *server.Server
	url  string
	co   azcore.ClientOptions
	cred azcore.TokenCredential
	vmss *armcompute.VirtualMachineScaleSetsClient
	vms  *armcompute.VirtualMachineScaleSetVMsClient
	vm   *armcompute.VirtualMachinesClient
	skus *armcompute.ResourceSKUsClient
}

const testRG = AzureDefaultResourceGroup

// fastPoll polls long-running operations every 20ms.
var fastPoll = &runtime.PollUntilDoneOptions{Frequency: 20 * time.Millisecond}

// done waits (polling every 20ms) for the long-running operation p that
// began with err, failing t on an error of either, and returns its result.
func done[T any](t testing.TB, p *runtime.Poller[T], err error) T {
	t.Helper()
	if err != nil {
		t.Fatalf("starting the operation: %v", err)
	}
	res, err := p.PollUntilDone(context.Background(), fastPoll)
	if err != nil {
		t.Fatalf("PollUntilDone: %v", err)
	}
	return res
}

// startAzure starts a Server with the Azure face (unless opts.Faces has
// one of its name) that boots in 100ms by default.
func startAzure(t testing.TB, opts core.Options) *server.Server {
	t.Helper()
	return servertest.Start(t, opts, &AzureFace{})
}

// azureClientOptions trusts the cloud's CA and points every Azure cloud
// endpoint at the face; no retries, so faults surface.
func azureClientOptions(t testing.TB, srv *server.Server) azcore.ClientOptions {
	t.Helper()
	pool, err := server.CertPool(srv.CA())
	if err != nil {
		t.Fatalf("CertPool: %v", err)
	}
	u := srv.FaceURL(AzureFaceName)
	if !strings.HasPrefix(u, "https://") {
		t.Fatalf("azure face URL %q is not https", u)
	}
	return azcore.ClientOptions{
		Cloud: cloud.Configuration{
			ActiveDirectoryAuthorityHost: u + "/",
			Services: map[cloud.ServiceName]cloud.ServiceConfiguration{
				cloud.ResourceManager: {Endpoint: u, Audience: u},
			},
		},
		Transport: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}},
		Retry:     policy.RetryOptions{MaxRetries: -1},
	}
}

// startAzureEnv starts a cloud with the Azure face (startAzure) and
// returns the clients of it.
func startAzureEnv(t testing.TB, opts core.Options) *azureTestEnv {
	t.Helper()
	return newAzureEnv(t, startAzure(t, opts))
}

func newAzureEnv(t testing.TB, srv *server.Server) *azureTestEnv {
	t.Helper()
	e := &azureTestEnv{srv: srv, url: srv.FaceURL(AzureFaceName), co: azureClientOptions(t, srv)}
	cred, err := azidentity.NewClientSecretCredential(AzureDefaultTenantID, AzureDefaultClientID, AzureDefaultClientSecret,
		&azidentity.ClientSecretCredentialOptions{ClientOptions: e.co, DisableInstanceDiscovery: true})
	if err != nil {
		t.Fatal(err)
	}
	e.cred = cred
	ao := &arm.ClientOptions{ClientOptions: e.co}
	sub := AzureDefaultSubscriptionID
	if e.vmss, err = armcompute.NewVirtualMachineScaleSetsClient(sub, cred, ao); err != nil {
		t.Fatal(err)
	}
	if e.vms, err = armcompute.NewVirtualMachineScaleSetVMsClient(sub, cred, ao); err != nil {
		t.Fatal(err)
	}
	if e.vm, err = armcompute.NewVirtualMachinesClient(sub, cred, ao); err != nil {
		t.Fatal(err)
	}
	if e.skus, err = armcompute.NewResourceSKUsClient(sub, cred, ao); err != nil {
		t.Fatal(err)
	}
	return e
}

// testVMSS is a scale set as CAPZ would send it.
func testVMSS(mode armcompute.OrchestrationMode, capacity int64, customData string, zones ...string) armcompute.VirtualMachineScaleSet {
	v := armcompute.VirtualMachineScaleSet{
		Location: to.Ptr("eastus"),
		SKU:      &armcompute.SKU{Name: to.Ptr("Standard_D2s_v3"), Tier: to.Ptr("Standard"), Capacity: to.Ptr(capacity)},
		Tags:     map[string]*string{AzureTagModelHash: to.Ptr("hash-1"), "team": to.Ptr("a")},
		Properties: &armcompute.VirtualMachineScaleSetProperties{
			OrchestrationMode: to.Ptr(mode),
			VirtualMachineProfile: &armcompute.VirtualMachineScaleSetVMProfile{
				StorageProfile: &armcompute.VirtualMachineScaleSetStorageProfile{
					ImageReference: &armcompute.ImageReference{Publisher: to.Ptr("cncf-upstream"), Offer: to.Ptr("capi"), SKU: to.Ptr("ubuntu-2204-gen1"), Version: to.Ptr("130.4.20240717")},
				},
				OSProfile: &armcompute.VirtualMachineScaleSetOSProfile{
					ComputerNamePrefix: to.Ptr("pool0"),
					AdminUsername:      to.Ptr("capi"),
					CustomData:         to.Ptr(base64.StdEncoding.EncodeToString([]byte(customData))),
				},
			},
		},
	}
	if mode == armcompute.OrchestrationModeUniform {
		v.Properties.UpgradePolicy = &armcompute.UpgradePolicy{Mode: to.Ptr(armcompute.UpgradeModeManual)}
	} else {
		v.Properties.PlatformFaultDomainCount = to.Ptr[int32](1)
	}
	for _, z := range zones {
		v.Zones = append(v.Zones, to.Ptr(z))
	}
	return v
}

func (e *azureTestEnv) create(t testing.TB, name string, v armcompute.VirtualMachineScaleSet) armcompute.VirtualMachineScaleSet {
	t.Helper()
	ctx := context.Background()
	p, err := e.vmss.BeginCreateOrUpdate(ctx, testRG, name, v, nil)
	if err != nil {
		t.Fatalf("BeginCreateOrUpdate %s: %v", name, err)
	}
	res, err := p.PollUntilDone(ctx, fastPoll)
	if err != nil {
		t.Fatalf("PollUntilDone %s: %v", name, err)
	}
	return res.VirtualMachineScaleSet
}

func (e *azureTestEnv) listUniform(t testing.TB, name string) []*armcompute.VirtualMachineScaleSetVM {
	t.Helper()
	var out []*armcompute.VirtualMachineScaleSetVM
	pager := e.vms.NewListPager(testRG, name, nil)
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatalf("listing VMs of %s: %v", name, err)
		}
		out = append(out, page.Value...)
	}
	return out
}

func responseError(t testing.TB, err error, status int, code string) *azcore.ResponseError {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("error %v is not an azcore.ResponseError", err)
	}
	if re.StatusCode != status || re.ErrorCode != code {
		t.Fatalf("error = %d %s, want %d %s: %v", re.StatusCode, re.ErrorCode, status, code, err)
	}
	return re
}

func TestAzureToken(t *testing.T) {
	srv := startAzure(t, core.Options{})
	co := azureClientOptions(t, srv)
	ctx := context.Background()
	scope := srv.FaceURL(AzureFaceName) + "/.default"
	// MSAL's instance discovery always asks login.microsoftonline.com:
	// clients of the simulated Azure set DisableInstanceDiscovery.
	cred, err := azidentity.NewClientSecretCredential(AzureDefaultTenantID, AzureDefaultClientID, AzureDefaultClientSecret,
		&azidentity.ClientSecretCredentialOptions{ClientOptions: co, DisableInstanceDiscovery: true})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{scope}})
	if err != nil {
		t.Fatalf("GetToken: %v", err)
	}
	if tok.Token == "" || time.Until(tok.ExpiresOn) < 50*time.Minute {
		t.Fatalf("token %+v: want a token valid for about an hour", tok)
	}

	// A wrong secret, an unknown client: Entra's errors.
	wrong, _ := azidentity.NewClientSecretCredential(AzureDefaultTenantID, AzureDefaultClientID, "nope",
		&azidentity.ClientSecretCredentialOptions{ClientOptions: co, DisableInstanceDiscovery: true})
	_, err = wrong.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{scope}})
	var af *azidentity.AuthenticationFailedError
	if !errors.As(err, &af) || af.RawResponse == nil || af.RawResponse.StatusCode != http.StatusUnauthorized ||
		!strings.Contains(err.Error(), "invalid_client") || !strings.Contains(err.Error(), "AADSTS7000215") {
		t.Fatalf("wrong secret: %v, want a 401 invalid_client AADSTS7000215", err)
	}

	// A registered client works; removed, it does not.
	if err := AzureSetClient(srv.Cloud(), AzureClient{TenantID: "t2", ClientID: "c2", ClientSecret: "s2"}); err != nil {
		t.Fatal(err)
	}
	c2, _ := azidentity.NewClientSecretCredential("t2", "c2", "s2", &azidentity.ClientSecretCredentialOptions{ClientOptions: co, DisableInstanceDiscovery: true})
	if _, err := c2.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{scope}}); err != nil {
		t.Fatalf("registered client: %v", err)
	}
	if err := AzureDeleteClient(srv.Cloud(), AzureDefaultTenantID, AzureDefaultClientID); err != nil {
		t.Fatal(err)
	}
	def, _ := azidentity.NewClientSecretCredential(AzureDefaultTenantID, AzureDefaultClientID, AzureDefaultClientSecret,
		&azidentity.ClientSecretCredentialOptions{ClientOptions: co, DisableInstanceDiscovery: true})
	if _, err := def.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{scope}}); err == nil || !strings.Contains(err.Error(), "AADSTS") {
		t.Fatalf("removed default client: %v, want an Entra error", err)
	}
}

func TestAzureARMRequiresToken(t *testing.T) {
	srv := startAzure(t, core.Options{})
	u := srv.FaceURL(AzureFaceName) + "/subscriptions/" + AzureDefaultSubscriptionID + "/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets?api-version=2024-07-01"
	co := azureClientOptions(t, srv)
	for _, tt := range []struct{ auth, code string }{
		{"", "AuthenticationFailed"},
		{"Bearer abc.def.ghi", "InvalidAuthenticationToken"},
	} {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		if tt.auth != "" {
			req.Header.Set("Authorization", tt.auth)
		}
		resp, err := co.Transport.(*http.Client).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		re := runtime.NewResponseError(resp)
		resp.Body.Close()
		responseError(t, re, http.StatusUnauthorized, tt.code)
	}
}

func TestAzureUniformScaleSet(t *testing.T) {
	e := startAzureEnv(t, core.Options{Faces: []core.Face{&AzureFace{PageSize: 2}}})
	ctx := context.Background()

	got := e.create(t, "pool0", testVMSS(armcompute.OrchestrationModeUniform, 3, "#cloud-config\n", "1", "2"))
	if *got.Properties.ProvisioningState != "Succeeded" || *got.SKU.Capacity != 3 || got.Properties.VirtualMachineProfile.OSProfile.CustomData != nil {
		t.Fatalf("created scale set: state %s capacity %d customData %v", *got.Properties.ProvisioningState, *got.SKU.Capacity, got.Properties.VirtualMachineProfile.OSProfile.CustomData)
	}
	wantID := "/subscriptions/" + AzureDefaultSubscriptionID + "/resourceGroups/" + testRG + "/providers/Microsoft.Compute/virtualMachineScaleSets/pool0"
	if *got.ID != wantID || *got.Properties.OrchestrationMode != armcompute.OrchestrationModeUniform {
		t.Fatalf("scale set ID %s mode %s", *got.ID, *got.Properties.OrchestrationMode)
	}

	// GET never returns custom data.
	g, err := e.vmss.Get(ctx, testRG, "pool0", nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.Properties.VirtualMachineProfile.OSProfile.CustomData != nil {
		t.Fatalf("GET returned custom data")
	}

	// VMs, listed over two pages.
	vms := e.listUniform(t, "pool0")
	if len(vms) != 3 {
		t.Fatalf("listed %d VMs, want 3", len(vms))
	}
	for i, vm := range vms {
		id := []string{"0", "1", "2"}[i]
		host := []string{"pool0000000", "pool0000001", "pool0000002"}[i]
		if *vm.InstanceID != id || *vm.Name != "pool0_"+id || *vm.ID != wantID+"/virtualMachines/"+id ||
			*vm.Properties.OSProfile.ComputerName != host || !*vm.Properties.LatestModelApplied ||
			*vm.Properties.ProvisioningState != "Succeeded" || *vm.Tags[AzureTagModelHash] != "hash-1" {
			t.Fatalf("VM %d: id %s name %s computer %s latest %v state %s", i, *vm.InstanceID, *vm.Name,
				*vm.Properties.OSProfile.ComputerName, *vm.Properties.LatestModelApplied, *vm.Properties.ProvisioningState)
		}
	}
	grp, err := e.srv.Cloud().Scope(AzureFaceName, azureScope(AzureDefaultSubscriptionID, testRG)).GetGroup("pool0")
	if err != nil {
		t.Fatal(err)
	}
	in := grp.Instances[0]
	if in.ProviderID != "azure://"+wantID+"/virtualMachines/0" || in.Hostname != "pool0000000" ||
		in.Metadata[core.MetaLocalHostname] != "pool0000000" || grp.Model.Extra[core.ExtraVersion] != "v1.30.4" || grp.Model.InstanceType != "Standard_D2s_v3" {
		t.Fatalf("instance %+v, model %+v", in, grp.Model)
	}

	// The delete action: the VMs go, the capacity drops.
	dp, err := e.vmss.BeginDeleteInstances(ctx, testRG, "pool0", armcompute.VirtualMachineScaleSetVMInstanceRequiredIDs{InstanceIDs: []*string{to.Ptr("1")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dp.PollUntilDone(ctx, fastPoll); err != nil {
		t.Fatalf("delete instances: %v", err)
	}
	g, _ = e.vmss.Get(ctx, testRG, "pool0", nil)
	if *g.SKU.Capacity != 2 {
		t.Fatalf("capacity after deleting one VM: %d", *g.SKU.Capacity)
	}
	if ids := vmIDs(e.listUniform(t, "pool0")); !slices.Equal(ids, []string{"0", "2"}) {
		t.Fatalf("VMs after deleting 1: %v", ids)
	}
	// An instance the scale set no longer has is refused, as Azure does,
	// and nothing is deleted.
	_, err = e.vmss.BeginDeleteInstances(ctx, testRG, "pool0", armcompute.VirtualMachineScaleSetVMInstanceRequiredIDs{InstanceIDs: []*string{to.Ptr("2"), to.Ptr("1")}}, nil)
	if re := responseError(t, err, http.StatusBadRequest, "InvalidParameter"); !strings.Contains(err.Error(), "instanceId 1 is not an active") {
		t.Fatalf("deleting a gone VM: %v", re)
	}
	if g, _ = e.vmss.Get(ctx, testRG, "pool0", nil); *g.SKU.Capacity != 2 {
		t.Fatalf("capacity after a refused delete: %d", *g.SKU.Capacity)
	}

	// A model change: new VMs get the next IDs, old ones are not latest.
	upd := testVMSS(armcompute.OrchestrationModeUniform, 3, "#cloud-config\n", "1", "2")
	upd.Tags[AzureTagModelHash] = to.Ptr("hash-2")
	upd.Properties.VirtualMachineProfile.OSProfile.CustomData = nil
	e.create(t, "pool0", upd)
	vms = e.listUniform(t, "pool0")
	if ids := vmIDs(vms); !slices.Equal(ids, []string{"0", "2", "3"}) {
		t.Fatalf("VMs after scaling to 3: %v", ids)
	}
	if *vms[0].Properties.LatestModelApplied || !*vms[2].Properties.LatestModelApplied {
		t.Fatalf("latestModelApplied: old %v new %v", *vms[0].Properties.LatestModelApplied, *vms[2].Properties.LatestModelApplied)
	}

	// PATCH the capacity only.
	pp, err := e.vmss.BeginUpdate(ctx, testRG, "pool0", armcompute.VirtualMachineScaleSetUpdate{SKU: &armcompute.SKU{Capacity: to.Ptr[int64](1)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := pp.PollUntilDone(ctx, fastPoll)
	if err != nil || *pr.SKU.Capacity != 1 || *pr.SKU.Name != "Standard_D2s_v3" {
		t.Fatalf("PATCH capacity: %v", err)
	}

	// Delete the scale set.
	del, err := e.vmss.BeginDelete(ctx, testRG, "pool0", nil)
	done(t, del, err)
	_, err = e.vmss.Get(ctx, testRG, "pool0", nil)
	responseError(t, err, http.StatusNotFound, "ResourceNotFound")
}

func vmIDs(vms []*armcompute.VirtualMachineScaleSetVM) []string {
	var ids []string
	for _, vm := range vms {
		ids = append(ids, *vm.InstanceID)
	}
	return ids
}

func TestAzureFlexibleScaleSet(t *testing.T) {
	e := startAzureEnv(t, core.Options{Faces: []core.Face{&AzureFace{PageSize: 2}}})
	ctx := context.Background()
	e.create(t, "flex", testVMSS(armcompute.OrchestrationModeFlexible, 3, "#cloud-config\n", "1", "2", "3"))
	e.create(t, "other", testVMSS(armcompute.OrchestrationModeFlexible, 1, "#cloud-config\n"))

	vmssID := "/subscriptions/" + AzureDefaultSubscriptionID + "/resourceGroups/" + testRG + "/providers/Microsoft.Compute/virtualMachineScaleSets/flex"
	list := func(filter *string) []*armcompute.VirtualMachine {
		var out []*armcompute.VirtualMachine
		pager := e.vm.NewListPager(testRG, &armcompute.VirtualMachinesClientListOptions{Filter: filter})
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatalf("listing VMs: %v", err)
			}
			out = append(out, page.Value...)
		}
		return out
	}
	if all := list(nil); len(all) != 4 {
		t.Fatalf("listed %d VMs in the resource group, want 4", len(all))
	}
	vms := list(to.Ptr("'virtualMachineScaleSet/id' eq '" + vmssID + "'")) // as Azure documents it
	if len(vms) != 3 {
		t.Fatalf("listed %d VMs of flex, want 3", len(vms))
	}
	grp, _ := e.srv.Cloud().Scope(AzureFaceName, azureScope(AzureDefaultSubscriptionID, testRG)).GetGroup("flex")
	for i, vm := range vms {
		name := *vm.Name
		if !strings.HasPrefix(name, "flex_") || len(name) != len("flex_")+8 || *vm.Properties.VirtualMachineScaleSet.ID != vmssID ||
			*vm.ID != "/subscriptions/"+AzureDefaultSubscriptionID+"/resourceGroups/"+testRG+"/providers/Microsoft.Compute/virtualMachines/"+name ||
			*vm.Properties.HardwareProfile.VMSize != "Standard_D2s_v3" || *vm.Properties.ProvisioningState != "Succeeded" ||
			*vm.Properties.OSProfile.ComputerName != "pool0"+name[5:11] || *vm.Tags[AzureTagModelHash] != "hash-1" || len(vm.Zones) != 1 {
			t.Fatalf("VM %d: %s %s", i, name, *vm.ID)
		}
		in := grp.Instances[i]
		if in.ID != name || in.ProviderID != "azure://"+*vm.ID || in.Hostname != *vm.Properties.OSProfile.ComputerName {
			t.Fatalf("instance %+v for VM %s", in, name)
		}
	}
	// Get and delete one VM: the scale set shrinks by one.
	name := *vms[1].Name
	if _, err := e.vm.Get(ctx, testRG, name, nil); err != nil {
		t.Fatalf("Get %s: %v", name, err)
	}
	dp, err := e.vm.BeginDelete(ctx, testRG, name, nil)
	done(t, dp, err)
	if g, _ := e.vmss.Get(ctx, testRG, "flex", nil); *g.SKU.Capacity != 2 {
		t.Fatalf("capacity after deleting a VM: %d", *g.SKU.Capacity)
	}
	_, err = e.vm.Get(ctx, testRG, name, nil)
	responseError(t, err, http.StatusNotFound, "ResourceNotFound")
	// The delete action takes VM names in Flexible mode.
	ap, err := e.vmss.BeginDeleteInstances(ctx, testRG, "flex", armcompute.VirtualMachineScaleSetVMInstanceRequiredIDs{InstanceIDs: []*string{vms[0].Name}}, nil)
	done(t, ap, err)
	if got := list(to.Ptr("virtualMachineScaleSet/id eq '" + vmssID + "'")); len(got) != 1 || *got[0].Name != *vms[2].Name {
		t.Fatalf("VMs left: %d", len(got))
	}
	// The Uniform VM list refuses a Flexible scale set.
	_, err = e.vms.NewListPager(testRG, "flex", nil).NextPage(ctx)
	responseError(t, err, http.StatusBadRequest, "OperationNotAllowed")
}

func TestAzureResumeToken(t *testing.T) {
	e := startAzureEnv(t, core.Options{DefaultSimulation: &core.Simulation{BootDelay: 300 * time.Millisecond}})
	ctx := context.Background()
	p, err := e.vmss.BeginCreateOrUpdate(ctx, testRG, "resume", testVMSS(armcompute.OrchestrationModeUniform, 2, "x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Done() {
		t.Fatalf("the create is done before its VMs booted")
	}
	g, _ := e.vmss.Get(ctx, testRG, "resume", nil)
	if *g.Properties.ProvisioningState != "Creating" {
		t.Fatalf("provisioningState while booting: %s", *g.Properties.ProvisioningState)
	}
	tok, err := p.ResumeToken()
	if err != nil {
		t.Fatal(err)
	}
	// A new client (a restarted manager) resumes the operation.
	e2 := newAzureEnv(t, e.srv)
	p2, err := e2.vmss.BeginCreateOrUpdate(ctx, testRG, "resume", armcompute.VirtualMachineScaleSet{}, &armcompute.VirtualMachineScaleSetsClientBeginCreateOrUpdateOptions{ResumeToken: tok})
	if err != nil {
		t.Fatalf("resuming: %v", err)
	}
	res, err := p2.PollUntilDone(ctx, fastPoll)
	if err != nil || *res.Properties.ProvisioningState != "Succeeded" || *res.SKU.Capacity != 2 {
		t.Fatalf("resumed poller: %v", err)
	}
	if n := e.srv.Stats().CountFace(AzureFaceName, OpAzureVMSSCreateOrUpdate); n != 1 {
		t.Fatalf("%d PUTs, want 1", n)
	}
	// The same through runtime.WithResumeToken... the delete's token.
	dp, err := e.vmss.BeginDelete(ctx, testRG, "resume", nil)
	if err != nil {
		t.Fatal(err)
	}
	dtok, _ := dp.ResumeToken()
	dp2, err := e2.vmss.BeginDelete(ctx, testRG, "resume", &armcompute.VirtualMachineScaleSetsClientBeginDeleteOptions{ResumeToken: dtok})
	done(t, dp2, err)
	if n := e.srv.Stats().CountFace(AzureFaceName, OpAzureVMSSDelete); n != 1 {
		t.Fatalf("%d DELETEs, want 1", n)
	}
}

func TestAzureErrors(t *testing.T) {
	e := startAzureEnv(t, core.Options{Faces: []core.Face{&AzureFace{VCPUQuota: map[string]int{"standardDSv3Family": 10}}}})
	ctx := context.Background()

	_, err := e.vmss.Get(ctx, testRG, "missing", nil)
	responseError(t, err, http.StatusNotFound, "ResourceNotFound")

	bad := testVMSS(armcompute.OrchestrationModeUniform, 1, "x")
	bad.SKU.Name = to.Ptr("Standard_Nope")
	_, err = e.vmss.BeginCreateOrUpdate(ctx, testRG, "bad", bad, nil)
	responseError(t, err, http.StatusBadRequest, "SkuNotAvailable")

	zoned := testVMSS(armcompute.OrchestrationModeUniform, 1, "x", "1")
	zoned.SKU.Name = to.Ptr("Standard_NC6s_v3")
	_, err = e.vmss.BeginCreateOrUpdate(ctx, testRG, "bad", zoned, nil)
	responseError(t, err, http.StatusBadRequest, "InvalidParameter")

	big := testVMSS(armcompute.OrchestrationModeUniform, 1, strings.Repeat("x", 70000))
	_, err = e.vmss.BeginCreateOrUpdate(ctx, testRG, "bad", big, nil)
	responseError(t, err, http.StatusBadRequest, "InvalidParameter")

	// 5 × 2 vCPUs fit the quota of 10; a sixth does not.
	e.create(t, "q", testVMSS(armcompute.OrchestrationModeUniform, 5, "x"))
	_, err = e.vmss.BeginCreateOrUpdate(ctx, testRG, "q2", testVMSS(armcompute.OrchestrationModeUniform, 1, "x"), nil)
	re := responseError(t, err, http.StatusConflict, "OperationNotAllowed")
	if !strings.Contains(err.Error(), "exceeding approved standardDSv3Family Cores quota") {
		t.Fatalf("quota error %v", re)
	}

	// SKUs.
	var skus []*armcompute.ResourceSKU
	pager := e.skus.NewListPager(&armcompute.ResourceSKUsClientListOptions{Filter: to.Ptr("location eq 'eastus'")})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		skus = append(skus, page.Value...)
	}
	var b1s *armcompute.ResourceSKU
	for _, s := range skus {
		if *s.Name == "Standard_B1s" {
			b1s = s
		}
		if *s.Locations[0] != "eastus" {
			t.Fatalf("SKU %s in %s", *s.Name, *s.Locations[0])
		}
	}
	if b1s == nil || len(b1s.LocationInfo[0].Zones) != 3 {
		t.Fatalf("Standard_B1s not listed with 3 zones")
	}
	caps := map[string]string{}
	for _, c := range b1s.Capabilities {
		caps[*c.Name] = *c.Value
	}
	if caps["vCPUs"] != "1" || caps["MemoryGB"] != "1" {
		t.Fatalf("Standard_B1s capabilities %v", caps)
	}
}

func TestAzureThrottled(t *testing.T) {
	e := startAzureEnv(t, core.Options{})
	ctx := context.Background()
	// A token first, then every ARM request throttled.
	e.create(t, "t", testVMSS(armcompute.OrchestrationModeUniform, 0, "x"))
	if err := e.srv.SetFaceFaults(AzureFaceName, &core.Faults{ThrottleRate: 1, RetryAfter: 3 * time.Second}); err != nil {
		t.Fatal(err)
	}
	_, err := e.vmss.Get(ctx, testRG, "t", nil)
	re := responseError(t, err, http.StatusTooManyRequests, "TooManyRequests")
	if re.RawResponse.Header.Get("Retry-After") != "3" || re.RawResponse.Header.Get("x-ms-ratelimit-remaining-subscription-reads") == "" {
		t.Fatalf("throttled headers %v", re.RawResponse.Header)
	}
	if err := e.srv.SetFaceFaults(AzureFaceName, &core.Faults{ErrorRate: 1}); err != nil {
		t.Fatal(err)
	}
	_, err = e.vmss.Get(ctx, testRG, "t", nil)
	var rerr *azcore.ResponseError
	if !errors.As(err, &rerr) || rerr.StatusCode < 500 {
		t.Fatalf("server error: %v", err)
	}
}

func TestAzureSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	srv := startAzure(t, core.Options{DataDir: dir})
	ca := srv.CA()
	if srv.CAFile() == "" || srv.FaceEndpoints()[1].CAFile != srv.CAFile() {
		t.Fatalf("CA file %q, endpoints %+v", srv.CAFile(), srv.FaceEndpoints())
	}
	e := newAzureEnv(t, srv)
	e.create(t, "keep", testVMSS(armcompute.OrchestrationModeUniform, 2, "#cloud-config\n"))
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}

	srv2 := startAzure(t, core.Options{DataDir: dir})
	if string(srv2.CA()) != string(ca) {
		t.Fatalf("the CA changed across a restart")
	}
	e2 := newAzureEnv(t, srv2)
	g, err := e2.vmss.Get(context.Background(), testRG, "keep", nil)
	if err != nil || *g.SKU.Capacity != 2 {
		t.Fatalf("scale set after restart: %v", err)
	}
	if ids := vmIDs(e2.listUniform(t, "keep")); !slices.Equal(ids, []string{"0", "1"}) {
		t.Fatalf("VMs after restart: %v", ids)
	}
	// The custom data survived too: a PUT without it keeps it, and the next
	// VM's model has it.
	cd, err := srv2.Cloud().Scope(AzureFaceName, azureScope(AzureDefaultSubscriptionID, testRG)).CustomData("keep")
	if err != nil || string(cd) != "#cloud-config\n" {
		t.Fatalf("custom data after restart: %q %v", cd, err)
	}
}

func TestAzureBudgets(t *testing.T) {
	srv := startAzure(t, core.Options{Faces: []core.Face{&AzureFace{
		SubscriptionReads: core.Budget{Burst: 3, PerSecond: 0.5},
		ScaleSetWrites:    core.Budget{Burst: 1, PerSecond: 0.25},
	}}})
	e := newAzureEnv(t, srv)
	ctx := context.Background()
	p, err := e.vmss.BeginCreateOrUpdate(ctx, testRG, "b", testVMSS(armcompute.OrchestrationModeUniform, 0, "x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	// The scale set's one write is spent: the next is throttled, for 4s.
	_, err = e.vmss.BeginCreateOrUpdate(ctx, testRG, "b", testVMSS(armcompute.OrchestrationModeUniform, 1, "x"), nil)
	re := responseError(t, err, http.StatusTooManyRequests, "TooManyRequests")
	if ra := re.RawResponse.Header.Get("Retry-After"); ra != "4" {
		t.Fatalf("Retry-After %q, want 4", ra)
	}
	// Another scale set has a budget of its own.
	if _, err := e.vmss.BeginCreateOrUpdate(ctx, testRG, "c", testVMSS(armcompute.OrchestrationModeUniform, 0, "x"), nil); err != nil {
		t.Fatal(err)
	}
	// Reads: 3 at once (the poller's included), then throttled.
	if _, err := p.PollUntilDone(ctx, fastPoll); err != nil {
		t.Fatal(err)
	}
	reads := srv.Stats().Count(OpAzureOperationStatus) + srv.Stats().Count(OpAzureVMSSGet)
	for range 3 - reads {
		if _, err := e.vmss.Get(ctx, testRG, "b", nil); err != nil {
			t.Fatal(err)
		}
	}
	_, err = e.vmss.Get(ctx, testRG, "b", nil)
	re = responseError(t, err, http.StatusTooManyRequests, "TooManyRequests")
	if re.RawResponse.Header.Get("x-ms-ratelimit-remaining-subscription-reads") != "0" || re.RawResponse.Header.Get("Retry-After") != "2" {
		t.Fatalf("throttled read headers %v", re.RawResponse.Header)
	}
}

func TestAzureExpiredTokenAndAdminClients(t *testing.T) {
	srv := startAzure(t, core.Options{Faces: []core.Face{&AzureFace{TokenLifetime: time.Second}}})
	co := azureClientOptions(t, srv)
	u := srv.FaceURL(AzureFaceName)
	hc := co.Transport.(*http.Client)

	// Register a client through the admin endpoint.
	body := strings.NewReader(`{"tenantID":"t9","clientID":"c9","clientSecret":"s9"}`)
	req, _ := http.NewRequest(http.MethodPut, srv.URL()+"/admin/azure/clients", body)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT /admin/azure/clients: %v %v", resp, err)
	}
	resp.Body.Close()
	if cl := AzureClients(srv.Cloud()); len(cl) != 2 {
		t.Fatalf("clients %+v", cl)
	}
	cred, _ := azidentity.NewClientSecretCredential("t9", "c9", "s9", &azidentity.ClientSecretCredentialOptions{ClientOptions: co, DisableInstanceDiscovery: true})
	tok, err := cred.GetToken(context.Background(), policy.TokenRequestOptions{Scopes: []string{u + "/.default"}})
	if err != nil {
		t.Fatal(err)
	}
	get := func() *http.Response {
		req, _ := http.NewRequest(http.MethodGet, u+"/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets?api-version=2024-07-01", nil)
		req.Header.Set("Authorization", "Bearer "+tok.Token)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if resp := get(); resp.StatusCode != http.StatusOK {
		t.Fatalf("fresh token: %s", resp.Status)
	}
	time.Sleep(1100 * time.Millisecond)
	resp = get()
	defer resp.Body.Close()
	responseError(t, runtime.NewResponseError(resp), http.StatusUnauthorized, "ExpiredAuthenticationToken")
}

func TestAzureGroupKeyIsCaseInsensitive(t *testing.T) {
	e := startAzureEnv(t, core.Options{})
	e.create(t, "MixedCase", testVMSS(armcompute.OrchestrationModeUniform, 1, "x"))
	k := AzureGroupKey(strings.ToUpper(AzureDefaultSubscriptionID), "MPOOL", "mixedcase")
	g, err := e.srv.Cloud().Scope(k.Face, k.Scope).GetGroup(k.Name)
	if err != nil || g.Capacity != 1 {
		t.Fatalf("group %v: %v", k, err)
	}
	got, err := e.vmss.Get(context.Background(), "MPool", "MIXEDCASE", nil)
	if err != nil || *got.Name != "MixedCase" {
		t.Fatalf("GET with another case: %v", err)
	}
}

func TestAzureUniformVMGetAndDelete(t *testing.T) {
	e := startAzureEnv(t, core.Options{})
	ctx := context.Background()
	e.create(t, "u", testVMSS(armcompute.OrchestrationModeUniform, 2, "x"))
	vm, err := e.vms.Get(ctx, testRG, "u", "1", nil)
	if err != nil || *vm.InstanceID != "1" || *vm.Properties.OSProfile.ComputerName != "pool0000001" {
		t.Fatalf("Get VM 1: %v", err)
	}
	p, err := e.vms.BeginDelete(ctx, testRG, "u", "0", nil)
	done(t, p, err)
	if g, _ := e.vmss.Get(ctx, testRG, "u", nil); *g.SKU.Capacity != 1 {
		t.Fatalf("capacity after deleting VM 0: %d", *g.SKU.Capacity)
	}
	_, err = e.vms.Get(ctx, testRG, "u", "0", nil)
	responseError(t, err, http.StatusNotFound, "ResourceNotFound")
	// Deleting it again is a no-op, as ARM's DELETE of a missing resource.
	p, err = e.vms.BeginDelete(ctx, testRG, "u", "0", nil)
	done(t, p, err)
	// Scaling out continues the instance IDs: 2, never 0 again.
	up := testVMSS(armcompute.OrchestrationModeUniform, 2, "x")
	e.create(t, "u", up)
	if ids := vmIDs(e.listUniform(t, "u")); !slices.Equal(ids, []string{"1", "2"}) {
		t.Fatalf("VMs after scaling out: %v", ids)
	}
}

func TestAzureFailedProvisioning(t *testing.T) {
	e := startAzureEnv(t, core.Options{DefaultSimulation: &core.Simulation{BootDelay: 50 * time.Millisecond, FailureRate: 1}})
	ctx := context.Background()
	p, err := e.vmss.BeginCreateOrUpdate(ctx, testRG, "f", testVMSS(armcompute.OrchestrationModeUniform, 1, "x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.PollUntilDone(ctx, fastPoll)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.ErrorCode != "VMExtensionProvisioningError" {
		t.Fatalf("PollUntilDone of a failing create: %v", err)
	}
	g, err := e.vmss.Get(ctx, testRG, "f", nil)
	if err != nil || *g.Properties.ProvisioningState != "Failed" {
		t.Fatalf("scale set after failed VMs: %v", err)
	}
	vms := e.listUniform(t, "f")
	if len(vms) != 1 || *vms[0].Properties.ProvisioningState != "Failed" {
		t.Fatalf("failed VM state")
	}
}

// TestAzureRequestsNotServed: an ARM path no operation serves is ARM's 404
// NotFound, counted as OpAzureUnknown; any other path no operation serves
// is Entra ID's 404 invalid_request, uncounted.
func TestAzureRequestsNotServed(t *testing.T) {
	e := startAzureEnv(t, core.Options{})
	tok, err := e.cred.GetToken(context.Background(), policy.TokenRequestOptions{Scopes: []string{e.url + "/.default"}})
	if err != nil {
		t.Fatal(err)
	}
	hc := e.co.Transport.(*http.Client)
	get := func(path string) (*http.Response, []byte) {
		req, _ := http.NewRequest(http.MethodGet, e.url+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok.Token)
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res, body
	}
	res, body := get("/subscriptions/" + AzureDefaultSubscriptionID + "/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks?api-version=2024-05-01")
	var armErr azureapi.ErrorResponse
	if _ = json.Unmarshal(body, &armErr); res.StatusCode != http.StatusNotFound || armErr.Error.Code != azureapi.CodeNotFound ||
		!strings.Contains(armErr.Error.Message, "does not serve GET /subscriptions/") {
		t.Errorf("an unknown ARM path: %s %s, want 404 NotFound", res.Status, body)
	}
	res, body = get("/" + AzureDefaultTenantID + "/oauth2/v2.0/devicecode")
	var tokErr azureapi.TokenError
	if _ = json.Unmarshal(body, &tokErr); res.StatusCode != http.StatusNotFound || tokErr.Error != azureapi.EntraInvalidRequest ||
		!strings.Contains(tokErr.ErrorDescription, "Entra ID does not serve GET /"+AzureDefaultTenantID+"/oauth2/v2.0/devicecode") {
		t.Errorf("an unknown Entra ID path: %s %s, want 404 invalid_request", res.Status, body)
	}
	counted := map[string]int64{}
	for _, c := range e.srv.Stats().Requests {
		if c.Face == AzureFaceName {
			counted[c.Operation] += c.Count
		}
	}
	if counted[OpAzureUnknown] != 1 || len(counted) != 3 || counted[OpAzureToken] != 1 || counted[OpAzureDiscovery] != 1 {
		t.Errorf("counted %v, want the sign-in (discovery, token) and one %s", counted, OpAzureUnknown)
	}
}
