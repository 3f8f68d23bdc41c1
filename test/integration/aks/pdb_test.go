package aks

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/azureface"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// aksMinute is the simulated AKS's minute in these tests: AKS's default
// drainTimeoutInMinutes (30) lasts 3s.
const aksMinute = 100 * time.Millisecond

// retryBase is the engine's default wait before it sends a Failed agent
// pool's PUT again (infrapool.Timing.FailedRetry).
const retryBase = 20 * time.Second

// TestAKSUpgradeBlockedByPDB: a PodDisruptionBudget that blocks every
// drain makes AKS's own upgrade fail with UpgradeFailed once
// drainTimeoutInMinutes has passed, as undrainableNodeBehavior says: under
// Schedule the blocked nodes are schedulable again and the surge nodes go
// (the pool is back to 2 nodes); under Cordon a blocked node stays
// cordoned, labelled kubernetes.azure.com/upgrade-status: Quarantined, with
// a surge node kept in its place. The manager is restarted mid-upgrade:
// the new one resumes the PUT's poller from the resume token the pool
// records (status.longRunningOperationStates), so the pool's
// ScaleGroupReady says why in AKS's words (UpgradeFailed, the node, the
// budget), not only "Failed". mpool sends the same PUT again after a
// backoff (retryBase), as CAPZ does through Azure Service Operator, and
// the condition says when; once the budget lets the pods go, that retry
// completes the upgrade with no change of the pool.
func TestAKSUpgradeBlockedByPDB(t *testing.T) {
	for _, behavior := range []string{azureface.AKSUndrainableSchedule, azureface.AKSUndrainableCordon} {
		t.Run(behavior, func(t *testing.T) { testUpgradeBlockedByPDB(t, behavior) })
	}
}

func testUpgradeBlockedByPDB(t *testing.T, behavior string) {
	srv := itest.AKS.StartCloud(t, env, itest.CloudOptions{Version: next, BootDelay: 200 * time.Millisecond,
		Faces: []core.Face{&azureface.AzureFace{AKSMinute: aksMinute}}})
	f := itest.NewFixture(t, env, itest.AKS, srv)
	m := f.StartManager()
	f.ApplySeed()
	f.WaitConverged(2, version, converge)
	if behavior == azureface.AKSUndrainableCordon {
		setUndrainableNodeBehavior(t, f, behavior)
	}

	// A guarded pod on every node: no drain can finish.
	guarded := f.GuardNodes(converge)

	puts := func() int64 { return f.Ops(azureface.AzureFaceName, azureface.OpAKSAgentPoolsCreateOrUpdate) }
	p0 := puts()
	f.SetVersion(next)
	// The PUT's operation is recorded on the pool; the manager restarts
	// before AKS gives up (drainTimeoutInMinutes).
	token := waitRecordedPut(t, f)
	m.Stop()
	f.StartManager()
	var violation error
	f.WaitPoolCondition(converge, infrav1.ScaleGroupReadyCondition, metav1.ConditionFalse, azureface.AKSCodeUpgradeFailed, "Disruption Budget",
		"undrainableNodeBehavior "+behavior, "retrying in 20s", "attempt 1")
	if n := puts() - p0; n != 1 {
		t.Fatalf("%d agent pool PUTs after the restart; want the one that failed (token %.20s...)", n, token)
	}
	// Never more than 2 + maxSurge (1) nodes, besides the surge node kept
	// for each quarantined one.
	testenv.Eventually(t, converge, func() error {
		nodes := f.PoolNodes()
		quarantined, schedulable := 0, 0
		for _, n := range nodes {
			if n.Labels[azureface.AKSLabelUpgradeStatus] == azureface.AKSUpgradeStatusQuarantined {
				quarantined++
				if !n.Spec.Unschedulable || !guarded[n.Name] {
					violation = fmt.Errorf("quarantined Node %s: unschedulable %v, an old node %v", n.Name, n.Spec.Unschedulable, guarded[n.Name])
				}
			}
			if !n.Spec.Unschedulable {
				schedulable++
			}
		}
		if len(nodes) > 3+quarantined {
			violation = fmt.Errorf("%d Nodes, %d quarantined: more than 2 + maxSurge 1", len(nodes), quarantined)
		}
		switch behavior {
		case azureface.AKSUndrainableSchedule:
			// Both old nodes blocked and schedulable again, the surge node gone.
			if len(nodes) != 2 || schedulable != 2 || quarantined != 0 {
				return fmt.Errorf("%d Nodes, %d schedulable, %d quarantined; want the 2 old ones, schedulable", len(nodes), schedulable, quarantined)
			}
		case azureface.AKSUndrainableCordon:
			// Both old nodes quarantined, each with a surge node in its place.
			if len(nodes) != 4 || quarantined != 2 || schedulable != 2 {
				return fmt.Errorf("%d Nodes, %d schedulable, %d quarantined; want 2 quarantined and 2 new", len(nodes), schedulable, quarantined)
			}
		}
		return nil
	})
	if violation != nil {
		t.Fatal(violation)
	}
	// The failed upgrade is not asked for again before its backoff.
	f.PokeUntilReconciled(t, 5)
	if n := puts() - p0; n != 1 {
		t.Fatalf("%d agent pool PUTs right after the failed upgrade; want the one that failed", n)
	}

	// The budget lets the pods go; the retry completes the upgrade.
	f.Unguard()
	f.WaitConverged(2, next, converge+retryBase)
	if n := puts() - p0; n < 2 {
		t.Fatalf("%d agent pool PUTs; want the failed one and its retry", n)
	}
	for n := range f.NodeNames() {
		if guarded[n] {
			t.Fatalf("Node %s of %s is still there", n, version)
		}
	}
}

// armPipeline is an ARM pipeline of the simulated AKS for raw requests.
func armPipeline(t *testing.T, f *itest.Fixture) (runtime.Pipeline, string) {
	t.Helper()
	co, cred := clientOptions(t, f.Cloud)
	c, err := arm.NewClient("mpool-test", "v0.0.0", cred, &arm.ClientOptions{ClientOptions: co, DisableRPRegistration: true})
	if err != nil {
		t.Fatal(err)
	}
	u := f.Cloud.FaceURL(azureface.AzureFaceName) + "/subscriptions/" + azureface.AzureDefaultSubscriptionID + "/resourceGroups/" + azureface.AzureDefaultResourceGroup +
		"/providers/Microsoft.ContainerService/managedClusters/" + azureface.AKSDefaultClusterName + "/agentPools/" + itest.AKS.PoolName
	return c.Pipeline(), u
}

// setUndrainableNodeBehavior sets the pool's upgradeSettings.undrainableNodeBehavior
// as a client of an API version that has it does (armcontainerservice/v6,
// mpool's, has not: AKS keeps it through mpool's writes).
func setUndrainableNodeBehavior(t *testing.T, f *itest.Fixture, behavior string) {
	t.Helper()
	pl, u := armPipeline(t, f)
	do := func(method string, body any) map[string]any {
		req, err := runtime.NewRequest(f.Ctx, method, u+"?api-version=2025-07-01")
		if err != nil {
			t.Fatal(err)
		}
		if body != nil {
			if err := runtime.MarshalAsJSON(req, body); err != nil {
				t.Fatal(err)
			}
		}
		resp, err := pl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			b, _ := runtime.Payload(resp)
			t.Fatalf("%s %s: %s %s", method, u, resp.Status, b)
		}
		var out map[string]any
		if err := runtime.UnmarshalAsJSON(resp, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	ap := do(http.MethodGet, nil)
	props := ap["properties"].(map[string]any)
	us, _ := props["upgradeSettings"].(map[string]any)
	if us == nil {
		us = map[string]any{}
	}
	us["undrainableNodeBehavior"] = behavior
	props["upgradeSettings"] = us
	do(http.MethodPut, map[string]any{"properties": props})
	testenv.Eventually(t, converge, func() error {
		got := do(http.MethodGet, nil)["properties"].(map[string]any)
		if s := got["provisioningState"]; s != "Succeeded" {
			return fmt.Errorf("agent pool %v", s)
		}
		if b := got["upgradeSettings"].(map[string]any)["undrainableNodeBehavior"]; b != behavior {
			return fmt.Errorf("undrainableNodeBehavior %v", b)
		}
		return nil
	})
}

// waitRecordedPut waits until the pool records the agent pool's PUT in
// progress (CAPZ's longRunningOperationStates, its poller's resume token)
// and returns the token.
func waitRecordedPut(t *testing.T, f *itest.Fixture) string {
	t.Helper()
	var token string
	testenv.Eventually(t, converge, func() error {
		pool := &infrav1.AzureManagedMachinePool{}
		if err := env.Client.Get(f.Ctx, f.Key(itest.AKS.PoolName), pool); err != nil {
			return err
		}
		lro := pool.Status.LongRunningOperationStates
		if len(lro) != 1 || lro[0].Type != "PUT" || lro[0].ServiceName != "agentpools" || lro[0].Name != itest.AKS.PoolName ||
			lro[0].ResourceGroup != azureface.AzureDefaultResourceGroup || lro[0].Data == "" {
			return fmt.Errorf("longRunningOperationStates %+v; want the agent pool's PUT", lro)
		}
		token = lro[0].Data
		return nil
	})
	return token
}
