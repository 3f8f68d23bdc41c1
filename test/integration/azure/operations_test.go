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
)

// TestRestartMidPut: the manager is killed while the scale set's create
// (a long-running PUT) is in flight; the restarted manager picks the
// operation up from the scale set and the pool's recorded reference and
// converges without a second PUT, and nothing is orphaned.
func TestRestartMidPut(t *testing.T) {
	f, m := start(t, 3*time.Second)
	f.ApplySeed()
	testenv.Eventually(t, converge, func() error {
		if n := f.ops(azureface.OpAzureVMSSCreateOrUpdate); n == 0 {
			return fmt.Errorf("no scale set PUT yet")
		}
		return nil
	})
	m.Stop()
	if g := f.Group(); g == nil || g.Operation == nil && !itest.Booting(g) {
		t.Fatalf("the PUT was not in flight when the manager stopped: %+v", g)
	}

	sawFuture := false
	f.StartManager()
	testenv.Eventually(t, converge, func() error {
		ap := &infrav1.AzureMachinePool{}
		if err := env.Client.Get(f.Ctx, f.Key(poolName), ap); err == nil && len(ap.Status.LongRunningOperationStates) > 0 {
			sawFuture = true
		}
		return f.Converged(2, seedVersion)
	})
	if n := f.ops(azureface.OpAzureVMSSCreateOrUpdate); n != 1 {
		t.Errorf("the simulated Azure answered %d scale set PUTs, want exactly 1", n)
	}
	if n := f.ops(azureface.OpAzureVMSSUpdate); n != 0 {
		t.Errorf("the simulated Azure answered %d scale set PATCHes, want none", n)
	}
	if !sawFuture {
		t.Error("status.longRunningOperationStates never recorded the operation in flight")
	}
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
