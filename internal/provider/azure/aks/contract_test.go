package aks_test

import (
	"crypto/tls"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	azureprovider "github.com/mpool-dev/mpool/internal/provider/azure"
	"github.com/mpool-dev/mpool/internal/provider/azure/aks"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/provider/contract/contracttest"
	"github.com/mpool-dev/mpool/internal/scalegroup"
	"github.com/mpool-dev/mpool/internal/testenv/cloudtest"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/azureface"
	"github.com/mpool-dev/mpool/sim/server"
)

// TestScaleGroupKeepsTheContract runs the ScaleGroup contract suite on the
// AKS provider against the simulated AKS, with agent pools the Adapter maps
// from an AzureManagedMachinePool.
func TestScaleGroupKeepsTheContract(t *testing.T) {
	e := cloudtest.Start(t, cloudtest.Options{Face: azureface.AzureFaceName, Simulation: core.Simulation{BootDelay: time.Second}}, func(e *cloudtest.Env) (scalegroup.ScaleGroup, error) {
		if err := azureface.AKSCreateCluster(e.Srv.Cloud(), azureface.AzureDefaultSubscriptionID, azureface.AzureDefaultResourceGroup,
			azureface.AKSDefaultClusterName, azureface.AzureDefaultLocation, ""); err != nil {
			return nil, err
		}
		pool, err := server.CertPool(e.Srv.CA())
		if err != nil {
			return nil, err
		}
		hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
		opts := azureprovider.Options{ResourceManagerEndpoint: e.FaceURL(), AuthorityHost: e.FaceURL() + "/", HTTPClient: hc}
		cred, err := azureprovider.NewClientSecretCredential(opts, azureface.AzureDefaultTenantID, azureface.AzureDefaultClientID, azureface.AzureDefaultClientSecret)
		if err != nil {
			return nil, err
		}
		opts.Credentials = &azureprovider.IdentityCredentials{Default: cred}
		return aks.New(opts)
	})
	cp := &infrav1.AzureManagedControlPlane{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: azureface.AKSDefaultClusterName},
		Spec: infrav1.AzureManagedControlPlaneSpec{SubscriptionID: azureface.AzureDefaultSubscriptionID,
			ResourceGroupName: azureface.AzureDefaultResourceGroup, Location: azureface.AzureDefaultLocation, Version: "v" + azureface.AKSDefaultVersion}}
	amp := &infrav1.AzureManagedMachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "contract"},
		Spec: infrav1.AzureManagedMachinePoolSpec{Mode: infrav1.NodePoolModeUser, SKU: "Standard_D2s_v5"}}
	n := 0
	names := map[string]string{}
	contracttest.ScaleGroup(t, e.ContractCase(t,
		func(name string) scalegroup.Ref {
			if names[name] == "" {
				n++
				names[name] = "pool" + string(rune('a'+n))
			}
			p := amp.DeepCopy()
			p.Name = names[name]
			ref, err := aks.Adapter{}.GroupRef(p, cp)
			if err != nil {
				t.Fatal(err)
			}
			return ref
		},
		func(capacity int32, hash string) scalegroup.GroupSpec {
			mp := &clusterv1.MachinePool{Spec: clusterv1.MachinePoolSpec{ClusterName: "aks", Replicas: ptr.To(capacity)}}
			d, err := aks.Adapter{}.Desired(amp, contract.Owner{MachinePool: mp, Version: "v" + azureface.AKSDefaultVersion, InfraCluster: cp})
			if err != nil {
				t.Fatal(err)
			}
			return scalegroup.GroupSpec{Capacity: capacity, ModelHash: hash, Model: d.Model}
		}))
}
