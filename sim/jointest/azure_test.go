package jointest

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/azureface"
	"github.com/mpool-dev/mpool/sim/server"
)

// TestAzureVMsJoin: scale sets created through the real Azure SDK against
// the Azure face boot VMs that join with Azure's providerIDs, named by the
// seeds' {{ ds.meta_data["local_hostname"] }}: the VM's computer name.
func TestAzureVMsJoin(t *testing.T) {
	ctx := context.Background()
	cs := clientset(t)
	srv := startCloudWith(t, cloudOptions(t))

	pool, err := server.CertPool(srv.CA())
	if err != nil {
		t.Fatal(err)
	}
	u := srv.FaceURL(azureface.AzureFaceName)
	co := azcore.ClientOptions{
		Cloud: cloud.Configuration{
			ActiveDirectoryAuthorityHost: u + "/",
			Services:                     map[cloud.ServiceName]cloud.ServiceConfiguration{cloud.ResourceManager: {Endpoint: u, Audience: u}},
		},
		Transport: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}},
	}
	cred, err := azidentity.NewClientSecretCredential(azureface.AzureDefaultTenantID, azureface.AzureDefaultClientID, azureface.AzureDefaultClientSecret,
		&azidentity.ClientSecretCredentialOptions{ClientOptions: co, DisableInstanceDiscovery: true})
	if err != nil {
		t.Fatal(err)
	}
	client, err := armcompute.NewVirtualMachineScaleSetsClient(azureface.AzureDefaultSubscriptionID, cred, &arm.ClientOptions{ClientOptions: co})
	if err != nil {
		t.Fatal(err)
	}

	token := createToken(t, time.Now().Add(time.Hour))
	customData := base64.StdEncoding.EncodeToString(cloudInit("kubeadm.k8s.io/v1beta4", token, caHash(t)))
	rg := azureface.AzureDefaultResourceGroup
	base := "azure:///subscriptions/" + azureface.AzureDefaultSubscriptionID + "/resourceGroups/" + rg + "/providers/Microsoft.Compute/"
	for _, tt := range []struct {
		name, prefix string
		mode         armcompute.OrchestrationMode
	}{
		{"uni", "uni-", armcompute.OrchestrationModeUniform},
		{"flex", "flex-", armcompute.OrchestrationModeFlexible},
	} {
		p, err := client.BeginCreateOrUpdate(ctx, rg, tt.name, armcompute.VirtualMachineScaleSet{
			Location: to.Ptr(azureface.AzureDefaultLocation),
			SKU:      &armcompute.SKU{Name: to.Ptr("Standard_D4s_v5"), Capacity: to.Ptr[int64](2)},
			Zones:    []*string{to.Ptr("1"), to.Ptr("2")},
			Properties: &armcompute.VirtualMachineScaleSetProperties{
				OrchestrationMode: to.Ptr(tt.mode),
				VirtualMachineProfile: &armcompute.VirtualMachineScaleSetVMProfile{
					StorageProfile: &armcompute.VirtualMachineScaleSetStorageProfile{ImageReference: &armcompute.ImageReference{
						Publisher: to.Ptr("cncf-upstream"), Offer: to.Ptr("capi"), SKU: to.Ptr("ubuntu-2204-gen1"), Version: to.Ptr("131.2.20250101"),
					}},
					OSProfile: &armcompute.VirtualMachineScaleSetOSProfile{ComputerNamePrefix: to.Ptr(tt.prefix), AdminUsername: to.Ptr("capi"), CustomData: to.Ptr(customData)},
				},
			},
		}, nil)
		if err != nil {
			t.Fatalf("creating %s: %v", tt.name, err)
		}
		if _, err := p.PollUntilDone(ctx, &runtime.PollUntilDoneOptions{Frequency: 50 * time.Millisecond}); err != nil {
			t.Fatalf("creating %s: %v", tt.name, err)
		}

		scope := srv.Cloud().Scope(azureface.AzureFaceName, "/subscriptions/"+azureface.AzureDefaultSubscriptionID+"/resourceGroups/"+rg)
		g := waitJoin(t, core.JoinJoined, func() (*core.Group, error) { return scope.GetGroup(tt.name) })
		for i, in := range g.Instances {
			want := base + "virtualMachines/" + in.ID
			if tt.mode == armcompute.OrchestrationModeUniform {
				want = base + "virtualMachineScaleSets/uni/virtualMachines/" + fmt.Sprint(i)
				if in.Hostname != fmt.Sprintf("uni-00000%d", i) {
					t.Errorf("uniform VM %d host name %q", i, in.Hostname)
				}
			}
			n, err := cs.CoreV1().Nodes().Get(ctx, in.Hostname, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("node of VM %s: %v", in.ID, err)
			}
			if n.Spec.ProviderID != want || n.Labels[corev1.LabelInstanceTypeStable] != "Standard_D4s_v5" || n.Status.NodeInfo.KubeletVersion != "v1.31.2" ||
				n.Status.Capacity.Cpu().String() != "4" || nodeReady(n) != corev1.ConditionTrue {
				t.Errorf("node %s: providerID %q (want %s), labels %v, version %s, cpu %s", n.Name, n.Spec.ProviderID, want, n.Labels,
					n.Status.NodeInfo.KubeletVersion, n.Status.Capacity.Cpu())
			}
		}
		dp, err := client.BeginDelete(ctx, rg, tt.name, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dp.PollUntilDone(ctx, &runtime.PollUntilDoneOptions{Frequency: 50 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		for _, in := range g.Instances {
			_ = cs.CoreV1().Nodes().Delete(ctx, in.Hostname, metav1.DeleteOptions{})
		}
	}
}
