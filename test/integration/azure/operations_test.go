package azure

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/azureface"
	"github.com/mpool-dev/mpool/sim/server"
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
	if g := f.Group(); g == nil || g.Operation == nil && !booting(g) {
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

func booting(g *core.Group) bool {
	for _, in := range g.Instances {
		if in.State != core.StateRunning {
			return true
		}
	}
	return false
}

// armSpy is the manager's HTTP transport to the simulated Azure: it counts
// ARM requests (and those answered, neither throttled nor failed) and checks that none is sent before a Retry-After the face
// answered has expired.
type armSpy struct {
	next http.RoundTripper

	mu        sync.Mutex
	requests  int
	succeeded int
	throttled int
	notBefore time.Time
	early     []string
}

func (s *armSpy) RoundTrip(req *http.Request) (*http.Response, error) {
	arm := strings.HasPrefix(req.URL.Path, "/subscriptions/")
	now := time.Now()
	if arm {
		s.mu.Lock()
		s.requests++
		if now.Before(s.notBefore) {
			s.early = append(s.early, fmt.Sprintf("%s %s sent %s before Retry-After expired", req.Method, req.URL.Path, s.notBefore.Sub(now).Round(time.Millisecond)))
		}
		s.mu.Unlock()
	}
	resp, err := s.next.RoundTrip(req)
	if err == nil && arm && resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500 {
		s.mu.Lock()
		s.succeeded++
		s.mu.Unlock()
	}
	if err == nil && arm && resp.StatusCode == http.StatusTooManyRequests {
		if secs, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil {
			s.mu.Lock()
			s.throttled++
			// A margin for the request in flight on another worker when
			// the answer arrived.
			if until := time.Now().Add(time.Duration(secs)*time.Second - 50*time.Millisecond); until.After(s.notBefore) {
				s.notBefore = until
			}
			s.mu.Unlock()
		}
	}
	return resp, err
}

// runWithSpy brings seed 000's pool to Running, scales it to 4 and rolls
// it to another vmSize, through a spy, and returns the spy.
func runWithSpy(t *testing.T, faults *core.Faults) *armSpy {
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
	spy := &armSpy{next: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
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
	return spy
}

// TestFaultyARM: with 20% of ARM requests answered 429 or 500, the pool
// still converges (created, scaled, rolled), with at most twice the requests it needed answered, and
// never sends a request before the Retry-After of a 429 expired.
func TestFaultyARM(t *testing.T) {
	// Each run in a subtest: its Nodes go when it ends (see newFixture).
	var clean, faulty *armSpy
	t.Run("fault-free", func(t *testing.T) { clean = runWithSpy(t, nil) })
	t.Run("20% faults", func(t *testing.T) {
		faulty = runWithSpy(t, &core.Faults{ThrottleRate: 0.1, ErrorRate: 0.1, RetryAfter: time.Second})
	})
	if clean == nil || faulty == nil {
		t.FailNow()
	}
	t.Logf("ARM requests to create, scale and roll a pool: %d fault-free; with 20%% faults %d, %d answered, %d throttled", clean.requests, faulty.requests, faulty.succeeded, faulty.throttled)
	// The fault-free run's count depends on how long the VMs take to join
	// (the engine polls meanwhile); the faulty run's answered requests are
	// the work it needed. Each fault may cost one request more, no more:
	// no retry storm.
	if faulty.requests > 2*faulty.succeeded {
		t.Errorf("with 20%% faults the pool took %d ARM requests for %d answered ones: more than twice", faulty.requests, faulty.succeeded)
	}
	if faulty.throttled == 0 {
		t.Error("no request was throttled: the test proves nothing about Retry-After")
	}
	for _, e := range faulty.early {
		t.Error(e)
	}
}
