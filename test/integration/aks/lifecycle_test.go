package aks

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/face/azureface"
	"github.com/mpool-dev/mpool/sim/server"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

const (
	converge = 2 * time.Minute
	// version is the example's; next the AKS cluster's, which agent pools
	// may be upgraded to.
	version = "v1.31.2"
	next    = "v1.32.0"
)

// start starts a simulated cloud with the simulated AKS cluster the example
// names (at next), a fixture (examples/aks/cluster.yaml applied) and a
// manager.
func start(t *testing.T) (*itest.Fixture, *itest.Manager) {
	t.Helper()
	srv := itest.AKS.StartCloud(t, env, itest.CloudOptions{Version: next, BootDelay: 200 * time.Millisecond})
	f := itest.NewFixture(t, env, itest.AKS, srv)
	return f, f.StartManager()
}

// clientOptions are the options and credential of an independent client
// of the simulated AKS (the same endpoint as the manager's).
func clientOptions(t *testing.T, srv *server.Server) (azcore.ClientOptions, azcore.TokenCredential) {
	t.Helper()
	pool, err := server.CertPool(srv.CA())
	if err != nil {
		t.Fatal(err)
	}
	u := srv.FaceURL(azureface.AzureFaceName)
	co := azcore.ClientOptions{
		Cloud: cloud.Configuration{ActiveDirectoryAuthorityHost: u + "/",
			Services: map[cloud.ServiceName]cloud.ServiceConfiguration{cloud.ResourceManager: {Endpoint: u, Audience: u}}},
		Transport: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}},
		Retry:     policy.RetryOptions{MaxRetries: -1},
	}
	cred, err := azidentity.NewClientSecretCredential(azureface.AzureDefaultTenantID, azureface.AzureDefaultClientID, azureface.AzureDefaultClientSecret,
		&azidentity.ClientSecretCredentialOptions{ClientOptions: co, DisableInstanceDiscovery: true})
	if err != nil {
		t.Fatal(err)
	}
	return co, cred
}

// agentPools is an AgentPoolsClient of the simulated AKS: an independent
// client of the same endpoint as the manager's.
func agentPools(t *testing.T, srv *server.Server) *armcontainerservice.AgentPoolsClient {
	t.Helper()
	co, cred := clientOptions(t, srv)
	c, err := armcontainerservice.NewAgentPoolsClient(azureface.AzureDefaultSubscriptionID, cred, &arm.ClientOptions{ClientOptions: co, DisableRPRegistration: true})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAKSAgentPoolLifecycle: the examples become a Running pool of AKS
// nodes (AKS's names, labels and providerIDs); a pool at rest costs one
// agent pool GET and one machines list per reconcile and no write; scaling
// 2→3→2 is one agent pool PUT each; a version upgrade is AKS's own
// surge-replace, one PUT, never fewer than 2 nodes serving nor more than
// 2+maxSurge (1) nodes, with the manager restarted mid-upgrade; an
// AzureManagedMachinePoolMachine
// marked for deletion is removed through deleteMachines; deleting the pool leaves no
// agent pool, scale set or Node.
func TestAKSAgentPoolLifecycle(t *testing.T) {
	f, m := start(t)
	f.ApplySeed()
	f.WaitConverged(2, version, converge)
	aps := agentPools(t, f.Cloud)
	ap, err := aps.Get(f.Ctx, azureface.AzureDefaultResourceGroup, azureface.AKSDefaultClusterName, itest.AKS.PoolName, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := ap.Properties; ptr.Deref(p.Count, 0) != 2 || ptr.Deref(p.ProvisioningState, "") != "Succeeded" || ptr.Deref(p.Mode, "") != armcontainerservice.AgentPoolModeSystem {
		t.Fatalf("agent pool count %v, state %v, mode %v", ptr.Deref(p.Count, 0), ptr.Deref(p.ProvisioningState, ""), ptr.Deref(p.Mode, ""))
	}

	// At rest: reads only, one agent pool GET and one machines list per Get.
	pool := &infrav1.AzureManagedMachinePool{}
	if err := env.Client.Get(f.Ctx, f.Key(itest.AKS.PoolName), pool); err != nil {
		t.Fatal(err)
	}
	writes := func() int64 {
		return f.Ops(azureface.AzureFaceName, azureface.OpAKSAgentPoolsCreateOrUpdate) + f.Ops(azureface.AzureFaceName, azureface.OpAKSAgentPoolsDeleteMachines) +
			f.Ops(azureface.AzureFaceName, azureface.OpAKSAgentPoolsDelete)
	}
	w0, g0, l0 := writes(), f.Ops(azureface.AzureFaceName, azureface.OpAKSAgentPoolsGet), f.Ops(azureface.AzureFaceName, azureface.OpAKSMachinesList)
	env.PokeUntilReconciled(t, pool, "azuremanagedmachinepool", 5)
	w1, g1, l1 := writes(), f.Ops(azureface.AzureFaceName, azureface.OpAKSAgentPoolsGet), f.Ops(azureface.AzureFaceName, azureface.OpAKSMachinesList)
	if w1 != w0 || g1-g0 < 5 || g1-g0 != l1-l0 {
		t.Fatalf("a pool at rest: %d writes, %d agent pool GETs, %d machines lists over 5+ reconciles; want 0 writes and one of each per reconcile", w1-w0, g1-g0, l1-l0)
	}

	// Scale 2 → 3 → 2: one PUT each; AKS picks the node it removes.
	for _, n := range []int32{3, 2} {
		puts := f.Ops(azureface.AzureFaceName, azureface.OpAKSAgentPoolsCreateOrUpdate)
		f.Scale(n)
		f.WaitConverged(int(n), version, converge)
		if got := f.Ops(azureface.AzureFaceName, azureface.OpAKSAgentPoolsCreateOrUpdate) - puts; got != 1 {
			t.Fatalf("scaling to %d: %d agent pool PUTs, want 1", n, got)
		}
	}

	// Upgrade v1.31.2 → v1.32.0: AKS's own surge-replace, within maxSurge.
	before := f.NodeNames()
	puts := f.Ops(azureface.AzureFaceName, azureface.OpAKSAgentPoolsCreateOrUpdate)
	f.SetVersion(next)
	var violation error
	sawUpgrading := false
	token := ""
	testenv.Eventually(t, converge, func() error {
		nodes := f.PoolNodes()
		serving := 0
		for i := range nodes {
			if testenv.NodeReady(&nodes[i]) && !nodes[i].Spec.Unschedulable {
				serving++
			}
		}
		if violation == nil && (serving < 2 || len(nodes) > 3) {
			violation = fmt.Errorf("%d Nodes, %d serving: maxSurge 1 of 2 broken", len(nodes), serving)
		}
		// The pool's recorded operation, read before the agent pool.
		pool := &infrav1.AzureManagedMachinePool{}
		if err := env.Client.Get(f.Ctx, f.Key(itest.AKS.PoolName), pool); err != nil {
			return err
		}
		var recorded string
		if lro := pool.Status.LongRunningOperationStates; len(lro) == 1 && lro[0].Type == "PUT" {
			recorded = lro[0].Data
		}
		if ap, err := aps.Get(f.Ctx, azureface.AzureDefaultResourceGroup, azureface.AKSDefaultClusterName, itest.AKS.PoolName, nil); err == nil &&
			ptr.Deref(ap.Properties.ProvisioningState, "") == "Upgrading" {
			switch {
			case !sawUpgrading && recorded != "":
				// The manager restarts mid-upgrade, the PUT's resume
				// token recorded: the new one follows AKS's upgrade and
				// writes nothing.
				sawUpgrading, token = true, recorded
				m.Stop()
				m = f.StartManager()
			case sawUpgrading && recorded != token && violation == nil:
				// The new manager resumes the recorded operation: it keeps
				// its token while AKS upgrades (an operation it did not
				// know would be another client's, recorded with none).
				violation = fmt.Errorf("mid-upgrade after the restart, the pool records operation %.20q; want the PUT's %.20q", recorded, token)
			}
		}
		if err := f.Converged(2, next); err != nil {
			return err
		}
		for n := range f.NodeNames() {
			if before[n] {
				return fmt.Errorf("Node %s has not been replaced", n)
			}
		}
		return nil
	})
	if violation != nil {
		t.Fatal(violation)
	}
	if got := f.Ops(azureface.AzureFaceName, azureface.OpAKSAgentPoolsCreateOrUpdate) - puts; !sawUpgrading || got != 1 {
		t.Fatalf("the upgrade: upgrading seen %v, %d agent pool PUTs; want one", sawUpgrading, got)
	}

	// One AzureManagedMachinePoolMachine marked for deletion (Cluster API's
	// delete-machine annotation): that node is drained and removed with
	// deleteMachines, and the pool made whole again.
	machines := &infrav1.AzureManagedMachinePoolMachineList{}
	if err := env.Client.List(f.Ctx, machines, client.InNamespace(f.NS)); err != nil || len(machines.Items) != 2 {
		t.Fatalf("listing the machines: %v (%d)", err, len(machines.Items))
	}
	victim := machines.Items[0]
	patch := client.MergeFrom(victim.DeepCopy())
	victim.Annotations = map[string]string{clusterv1.DeleteMachineAnnotation: "true"}
	if err := env.Client.Patch(f.Ctx, &victim, patch); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, converge, func() error {
		if f.NodeNames()[victim.Spec.InstanceID] {
			return fmt.Errorf("Node %s is still there (%d deleteMachines; machines %v)", victim.Spec.InstanceID,
				f.Ops(azureface.AzureFaceName, azureface.OpAKSAgentPoolsDeleteMachines), f.InstanceIDs())
		}
		return f.Converged(2, next)
	})
	if f.Ops(azureface.AzureFaceName, azureface.OpAKSAgentPoolsDeleteMachines) != 1 {
		t.Fatalf("%d deleteMachines, want 1", f.Ops(azureface.AzureFaceName, azureface.OpAKSAgentPoolsDeleteMachines))
	}

	// Deletion: no agent pool, scale set or Node is left.
	f.DeletePoolAndWaitGone(converge)
	testenv.Eventually(t, converge, func() error {
		if _, err := aps.Get(f.Ctx, azureface.AzureDefaultResourceGroup, azureface.AKSDefaultClusterName, itest.AKS.PoolName, nil); err == nil {
			return fmt.Errorf("the agent pool is still there")
		}
		if g := f.Group(); g != nil {
			return fmt.Errorf("scale set %s left with %d VMs", g.Name, len(g.Instances))
		}
		if n := len(f.PoolNodes()); n != 0 {
			return fmt.Errorf("%d Nodes left", n)
		}
		return nil
	})
}

// TestAKSRefusedInputSaysWhatToChange: a VM size AKS does not offer, and a
// System pool scaled to 0, are refused by AKS, and the pool's ScaleGroupReady
// says what to change; fixing them converges.
func TestAKSRefusedInputSaysWhatToChange(t *testing.T) {
	f, _ := start(t)
	f.ApplySeed(func(u *unstructured.Unstructured) {
		if u.GetKind() == "AzureManagedMachinePool" {
			_ = unstructured.SetNestedField(u.Object, "Standard_Nope_v9", "spec", "sku")
		}
	})
	f.WaitPoolCondition(converge, infrav1.ScaleGroupReadyCondition, metav1.ConditionFalse, "VMSizeNotSupported", "Standard_Nope_v9")

	// The SKU cannot be changed in place: a new pool with a size AKS has.
	f.DeletePoolAndWaitGone(converge)
	f.ApplySeed()
	f.WaitConverged(2, version, converge)

	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) { mp.Spec.Replicas = ptr.To[int32](0) })
	f.WaitPoolCondition(converge, infrav1.ScaleGroupReadyCondition, metav1.ConditionFalse, "System agent pool needs at least 1 node", "spec.replicas", "spec.mode")
	f.Scale(2)
	f.WaitConverged(2, version, converge)

	// What AKS cannot change in place is refused at admission, naming the
	// field and what to do instead.
	for _, c := range []struct {
		name, field string
		mutate      func(*infrav1.AzureManagedMachinePool)
	}{
		{"the VM size", "spec.sku", func(p *infrav1.AzureManagedMachinePool) { p.Spec.SKU = "Standard_D4s_v5" }},
		{"maxPods", "spec.maxPods", func(p *infrav1.AzureManagedMachinePool) { p.Spec.MaxPods = ptr.To[int32](50) }},
		{"the zones", "spec.availabilityZones", func(p *infrav1.AzureManagedMachinePool) { p.Spec.AvailabilityZones = []string{"3"} }},
	} {
		pool := &infrav1.AzureManagedMachinePool{}
		if err := env.Client.Get(f.Ctx, f.PoolKey(), pool); err != nil {
			t.Fatal(err)
		}
		c.mutate(pool)
		err := env.Client.Update(f.Ctx, pool)
		if err == nil || !strings.Contains(err.Error(), c.field+" is immutable") {
			t.Errorf("changing %s: %v; want a refusal naming %s", c.name, err, c.field)
		}
	}
}
