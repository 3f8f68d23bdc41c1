package aks_test

import (
	"context"
	"crypto/tls"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	azureprovider "github.com/mpool-dev/mpool/internal/provider/azure"
	"github.com/mpool-dev/mpool/internal/provider/azure/aks"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/provider/contract/contracttest"
	"github.com/mpool-dev/mpool/internal/scalegroup"
	"github.com/mpool-dev/mpool/sim/cloudsim"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/azureface"
	"github.com/mpool-dev/mpool/sim/server"
)

// TestScaleGroupKeepsTheContract runs the ScaleGroup contract suite on the
// AKS provider against the simulated AKS, with agent pools the Adapter maps
// from an AzureManagedMachinePool.
func TestScaleGroupKeepsTheContract(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	srv, sg, cp := startSimulatedAKS(t, core.Options{Clock: clk, Seed: 7, DefaultSimulation: &core.Simulation{BootDelay: time.Second}})
	amp := &infrav1.AzureManagedMachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "contract"},
		Spec: infrav1.AzureManagedMachinePoolSpec{Mode: infrav1.NodePoolModeUser, SKU: "Standard_D2s_v5"}}
	n := 0
	names := map[string]string{}
	contracttest.ScaleGroup(t, contracttest.ScaleGroupCase{
		ScaleGroup: sg,
		Ref: func(name string) scalegroup.Ref {
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
		Spec: func(capacity int32, hash string) scalegroup.GroupSpec {
			mp := &clusterv1.MachinePool{Spec: clusterv1.MachinePoolSpec{ClusterName: "aks", Replicas: ptr.To(capacity)}}
			d, err := aks.Adapter{}.Desired(amp, contract.Owner{MachinePool: mp, Version: "v" + azureface.AKSDefaultVersion, InfraCluster: cp})
			if err != nil {
				t.Fatal(err)
			}
			return scalegroup.GroupSpec{Capacity: capacity, ModelHash: hash, Model: d.Model}
		},
		Advance: func() { clk.Step(time.Second) },
		Throttle: func() func() {
			if err := srv.SetFaceFaults(azureface.AzureFaceName, &core.Faults{ThrottleRate: 1, RetryAfter: time.Second}); err != nil {
				t.Fatal(err)
			}
			return func() { _ = srv.SetFaceFaults(azureface.AzureFaceName, nil) }
		},
	})
}

// startSimulatedAKS starts a simulated cloud (opts) with the AKS cluster
// examples/aks names, and returns the AKS provider on it (the real
// armcontainerservice over HTTPS with the cloud's CA, the default client
// secret) and the AzureManagedControlPlane naming the cluster.
func startSimulatedAKS(t *testing.T, opts core.Options) (*server.Server, *aks.AgentPools, *infrav1.AzureManagedControlPlane) {
	t.Helper()
	srv, err := cloudsim.Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("starting the simulated cloud: %v", err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	if err := azureface.AKSCreateCluster(srv.Cloud(), azureface.AzureDefaultSubscriptionID, azureface.AzureDefaultResourceGroup,
		azureface.AKSDefaultClusterName, azureface.AzureDefaultLocation, ""); err != nil {
		t.Fatal(err)
	}
	sg := newAgentPools(t, srv)
	cp := &infrav1.AzureManagedControlPlane{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: azureface.AKSDefaultClusterName},
		Spec: infrav1.AzureManagedControlPlaneSpec{SubscriptionID: azureface.AzureDefaultSubscriptionID,
			ResourceGroupName: azureface.AzureDefaultResourceGroup, Location: azureface.AzureDefaultLocation, Version: "v" + azureface.AKSDefaultVersion}}
	return srv, sg, cp
}

// newAgentPools is a new AKS provider (a manager's) on srv: the real
// armcontainerservice over HTTPS with the cloud's CA, the default client
// secret.
func newAgentPools(t *testing.T, srv *server.Server) *aks.AgentPools {
	t.Helper()
	pool, err := server.CertPool(srv.CA())
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	u := srv.FaceURL(azureface.AzureFaceName)
	po := azureprovider.Options{ResourceManagerEndpoint: u, AuthorityHost: u + "/", HTTPClient: hc}
	cred, err := azureprovider.NewClientSecretCredential(po, azureface.AzureDefaultTenantID, azureface.AzureDefaultClientID, azureface.AzureDefaultClientSecret)
	if err != nil {
		t.Fatal(err)
	}
	po.Credentials = &azureprovider.IdentityCredentials{Default: cred}
	sg, err := aks.New(po)
	if err != nil {
		t.Fatal(err)
	}
	return sg
}
