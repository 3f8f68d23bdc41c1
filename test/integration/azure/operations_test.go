package azure

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/azureface"
	"github.com/mpool-dev/mpool/sim/server"
	"github.com/mpool-dev/mpool/test/integration/itest"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestRestartMidPut: the manager is killed while the scale set's create
// (a long-running PUT, slowed by the VMs' boot) is in flight, its poller's
// resume token recorded on the pool (status.longRunningOperationStates,
// as CAPZ keeps a future); the restarted manager resumes that operation
// (the pool keeps the same token while it runs, as the new manager's
// own) and converges without a second PUT, nothing orphaned. Uniform
// and Flexible scale sets.
func TestRestartMidPut(t *testing.T) {
	for _, c := range []struct {
		mode, version string
		seed          []func(*unstructured.Unstructured)
	}{{"Uniform", seedVersion, nil}, {"Flexible", flexibleVersion, []func(*unstructured.Unstructured){flexible}}} {
		t.Run(c.mode, func(t *testing.T) { testRestartMidPut(t, c.version, c.seed...) })
	}
}

func testRestartMidPut(t *testing.T, version string, seed ...func(*unstructured.Unstructured)) {
	f, m := start(t, 8*time.Second)
	f.ApplySeed(seed...)
	future := func() (infrav1.Future, error) {
		ap := &infrav1.AzureMachinePool{}
		if err := env.Client.Get(f.Ctx, f.Key(poolName), ap); err != nil {
			return infrav1.Future{}, err
		}
		if lro := ap.Status.LongRunningOperationStates; len(lro) == 1 {
			return lro[0], nil
		}
		return infrav1.Future{}, fmt.Errorf("longRunningOperationStates %+v", ap.Status.LongRunningOperationStates)
	}
	var token string
	testenv.Eventually(t, converge, func() error {
		fu, err := future()
		if err != nil {
			return err
		}
		if fu.Type != "PUT" || fu.ServiceName != "scalesets" || fu.Name != f.vmss() || !strings.HasPrefix(fu.Data, "{") {
			return fmt.Errorf("future %+v; want the scale set PUT's resume token", fu)
		}
		token = fu.Data
		return nil
	})
	m.Stop()
	if g := f.Group(); g == nil || g.Operation == nil && !itest.Booting(g) {
		t.Fatalf("the PUT was not in flight when the manager stopped: %+v", g)
	}

	f.StartManager()
	// The new manager's reconciles keep the operation it resumed, token
	// and all, while the scale set is still creating.
	f.PokeUntilReconciled(t, 2)
	if g := f.Group(); g != nil && itest.Booting(g) {
		if fu, err := future(); err != nil || fu.Data != token {
			t.Fatalf("after the restart, mid-operation: future %+v, %v; want the resumed token %.30s...", fu, err, token)
		}
	} else {
		t.Logf("the operation finished before the new manager's reconciles: its token not checked")
	}
	testenv.Eventually(t, converge, func() error { return f.Converged(2, version) })
	if n := f.ops(azureface.OpAzureVMSSCreateOrUpdate); n != 1 {
		t.Errorf("the simulated Azure answered %d scale set PUTs, want exactly 1", n)
	}
	if n := f.ops(azureface.OpAzureVMSSUpdate); n != 0 {
		t.Errorf("the simulated Azure answered %d scale set PATCHes, want none", n)
	}
	testenv.Eventually(t, converge, func() error {
		if fu, err := future(); err == nil {
			return fmt.Errorf("at rest, future %+v", fu)
		}
		return nil
	})
	k := azureface.AzureGroupKey(azureface.AzureDefaultSubscriptionID, azureface.AzureDefaultResourceGroup, f.vmss())
	if sets := f.Cloud.Cloud().Scope(k.Face, k.Scope).ListGroups(); len(sets) != 1 {
		t.Errorf("the resource group holds scale sets %v, want only the pool's", sets)
	}
	f.DeletePoolAndWaitGone(converge)
}

// runWithSpy brings seed 000's pool to Running, scales it to 4 and rolls
// it to another vmSize, through a spy, and returns the spy.
func runWithSpy(t *testing.T, faults *core.Faults) itest.FaultCounts {
	cloud := startCloud(t, 0)
	if faults != nil {
		if err := cloud.SetFaceFaults(azureface.AzureFaceName, faults); err != nil {
			t.Fatal(err)
		}
	}
	f := newFixture(t, cloud)
	pool, err := server.CertPool(cloud.CA())
	if err != nil {
		t.Fatal(err)
	}
	spy := &itest.FaultSpy{
		Next:      &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
		API:       func(req *http.Request) bool { return strings.HasPrefix(req.URL.Path, "/subscriptions/") },
		Throttled: func(resp *http.Response) bool { return resp.StatusCode == http.StatusTooManyRequests },
	}
	f.StartManager(func(o *manager.Options) {
		o.CloudHTTPClient = &http.Client{Timeout: 30 * time.Second, Transport: spy}
	})
	f.ApplySeed()
	f.WaitConverged(2, seedVersion, converge)
	f.Scale(4)
	f.WaitConverged(4, seedVersion, converge)
	before := f.InstanceIDs()
	f.updateAzurePool(func(p *infrav1.AzureMachinePool) { p.Spec.Template.VMSize = "Standard_D4s_v3" })
	f.WaitRolled(before, 4, seedVersion, converge)
	return spy.Counts()
}

// TestFaultyARM: with 20% of ARM requests answered 429 or 500, the pool
// still converges (created, scaled, rolled), with at most twice the requests it needed answered, and
// never sends a request before the Retry-After of a 429 expired.
func TestFaultyARM(t *testing.T) {
	// Each run in a subtest: its Nodes go when it ends (see newFixture).
	var clean, faulty *itest.FaultCounts
	t.Run("fault-free", func(t *testing.T) { c := runWithSpy(t, nil); clean = &c })
	t.Run("20% faults", func(t *testing.T) {
		c := runWithSpy(t, &core.Faults{ThrottleRate: 0.1, ErrorRate: 0.1, RetryAfter: time.Second})
		faulty = &c
	})
	if clean == nil || faulty == nil {
		t.FailNow()
	}
	t.Logf("ARM requests to create, scale and roll a pool: %d fault-free; with 20%% faults %d, %d answered, %d throttled", clean.Requests, faulty.Requests, faulty.Succeeded, faulty.Throttled)
	// The fault-free run's count depends on how long the VMs take to join
	// (the engine polls meanwhile); the faulty run's answered requests are
	// the work it needed. Each fault may cost one request more, no more:
	// no retry storm.
	if faulty.Requests > 2*faulty.Succeeded {
		t.Errorf("with 20%% faults the pool took %d ARM requests for %d answered ones: more than twice", faulty.Requests, faulty.Succeeded)
	}
	if faulty.Throttled == 0 {
		t.Error("no request was throttled: the test proves nothing about Retry-After")
	}
	for _, e := range faulty.Early {
		t.Error(e)
	}
}
