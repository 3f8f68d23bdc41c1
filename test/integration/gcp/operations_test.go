package gcp

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/gcpface"
	"github.com/mpool-dev/mpool/sim/server"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// TestTokenRotationReplacesNothing: on a long-lived pool the bootstrap
// token rotates; no instance is replaced and nothing is written to Compute
// Engine at rest (no new instance template: CAPZ issue #4958 churned the
// model on every rotation). The next scale-up carries the current user
// data (a new template for the new instances only) and its instance joins.
func TestTokenRotationReplacesNothing(t *testing.T) {
	// Tokens live 40s: at rest one is rotated within about half a minute.
	f, m := itest.Start(t, env, itest.GCP, itest.CloudOptions{}, func(o *manager.Options) { o.BootstrapTokenTTL = 40 * time.Second })
	f.ApplySeed()
	f.WaitConverged(2, seedVersion, converge)
	tmpls := templates(f)
	f.Cloud.ResetStats()
	f.CheckTokenRotationAtRest(m)
	if _, writes := f.Requests(); writes != 0 {
		t.Errorf("the simulated Compute Engine answered %d writes during the rotation at rest: %v", writes, f.Cloud.Stats().Requests)
	}
	if now := templates(f); !slices.Equal(now, tmpls) {
		t.Errorf("instance templates %v after the rotation, were %v", now, tmpls)
	}

	before := f.InstanceIDs()
	f.Scale(3)
	f.WaitConverged(3, seedVersion, converge)
	for _, id := range before {
		if !slices.Contains(f.InstanceIDs(), id) {
			t.Errorf("instance %s was replaced by the scale-up", id)
		}
	}
	if n := len(templates(f)); n > len(tmpls)+1 {
		t.Errorf("the scale-up made %d instance templates, want at most 1", n-len(tmpls))
	}
}

// cloudTransport is an HTTP transport that trusts the simulated cloud's
// CA, for spies on the manager's requests to the GCP face.
func cloudTransport(t *testing.T, cloud *server.Server) http.RoundTripper {
	t.Helper()
	pool, err := server.CertPool(cloud.CA())
	if err != nil {
		t.Fatal(err)
	}
	return &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
}

// crashBeforeGroup is the manager's transport to the simulated Compute
// Engine: the first insert of a managed instance group is not sent;
// instead crashed is closed, as if the manager had died right after
// creating the group's instance template, and no request is sent from
// then on.
type crashBeforeGroup struct {
	next    http.RoundTripper
	once    sync.Once
	crashed chan struct{}
}

func (c *crashBeforeGroup) RoundTrip(req *http.Request) (*http.Response, error) {
	select {
	case <-c.crashed:
		return nil, errors.New("the manager is dead")
	default:
	}
	if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/instanceGroupManagers") {
		c.once.Do(func() { close(c.crashed) })
		return nil, errors.New("the manager died here")
	}
	return c.next.RoundTrip(req)
}

// TestRestartMidCreate: the manager dies after creating the pool's
// instance template and before creating its group; the restarted manager
// creates the group with that template (no second one). That manager is
// stopped too while the group's instances boot, and the next one resumes
// without a write: one template insert and one group insert in all, no
// resize, and nothing orphaned.
func TestRestartMidCreate(t *testing.T) {
	cloud := itest.GCP.StartCloud(t, env, itest.CloudOptions{BootDelay: 3 * time.Second})
	f := itest.NewFixture(t, env, itest.GCP, cloud)
	crash := &crashBeforeGroup{next: cloudTransport(t, cloud), crashed: make(chan struct{})}
	m := f.StartManager(func(o *manager.Options) {
		o.CloudHTTPClient = &http.Client{Timeout: 30 * time.Second, Transport: crash}
	})
	f.ApplySeed()
	select {
	case <-crash.crashed:
	case <-time.After(converge):
		t.Fatal("the manager never created the group")
	}
	m.Stop()
	if tmpls := templates(f); len(tmpls) != 1 || f.Group() != nil {
		t.Fatalf("before the crash: templates %v, group %+v; want one template and no group", tmpls, f.Group())
	}

	m = f.StartManager()
	testenv.Eventually(t, converge, func() error {
		if ops(f, gcpface.OpGCPIGMInsert) == 0 {
			return fmt.Errorf("no group insert yet")
		}
		return nil
	})
	m.Stop()
	if g := f.Group(); g == nil || !itest.Booting(g) {
		t.Fatalf("the group's instances were not booting when the manager stopped: %v", itest.InstanceStates(g))
	}

	f.StartManager()
	f.WaitConverged(2, seedVersion, converge)
	for op, want := range map[string]int64{
		gcpface.OpGCPTemplatesInsert: 1, gcpface.OpGCPIGMInsert: 1, gcpface.OpGCPIGMResize: 0,
		gcpface.OpGCPIGMSetInstanceTemplate: 0, gcpface.OpGCPIGMDeleteInstances: 0,
	} {
		if n := ops(f, op); n != want {
			t.Errorf("the simulated Compute Engine answered %d %s, want %d", n, op, want)
		}
	}
	if tmpls := templates(f); len(tmpls) != 1 {
		t.Errorf("instance templates %v, want the pool's one", tmpls)
	}
	deletePoolAndWaitGone(f)
}

// runWithSpy brings examples/gcp's pool to Running, scales it to 4 and
// rolls it to another machine type, through a spy, on a cloud with faults.
func runWithSpy(t *testing.T, faults core.Faults) itest.FaultCounts {
	cloud := itest.GCP.StartCloud(t, env, itest.CloudOptions{Faults: faults})
	f := itest.NewFixture(t, env, itest.GCP, cloud)
	spy := &itest.FaultSpy{
		Next: cloudTransport(t, cloud),
		API:  func(req *http.Request) bool { return strings.HasPrefix(req.URL.Path, "/compute/") },
		// rateLimitExceeded, 429 or 403, comes with Retry-After.
		Throttled: func(resp *http.Response) bool {
			return (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusForbidden) && resp.Header.Get("Retry-After") != ""
		},
	}
	f.StartManager(func(o *manager.Options) {
		o.CloudHTTPClient = &http.Client{Timeout: 30 * time.Second, Transport: spy}
	})
	// Faults cost retries, and retries back off (up to
	// infrapool.MaxRetryDelay): the waits are longer than the others'.
	f.ApplySeed()
	f.WaitConverged(2, seedVersion, 2*converge)
	f.Scale(4)
	f.WaitConverged(4, seedVersion, 2*converge)
	before := f.InstanceIDs()
	itest.UpdatePool(f, func(p *infrav1.GCPMachinePool) { p.Spec.InstanceType = "e2-standard-4" })
	f.WaitRolled(before, 4, seedVersion, 2*converge)
	return spy.Counts()
}

// TestFaultyComputeEngine: with 20% of the requests answered
// rateLimitExceeded (403 and 429, with Retry-After) or backendError (500),
// the token endpoint's included, the pool still converges (created,
// scaled, rolled), with at most twice the requests it needed answered.
func TestFaultyComputeEngine(t *testing.T) {
	spy := runWithSpy(t, core.Faults{ThrottleRate: 0.1, ErrorRate: 0.1, RetryAfter: time.Second})
	t.Logf("Compute Engine requests to create, scale and roll a pool with 20%% faults: %d, %d answered, %d throttled", spy.Requests, spy.Succeeded, spy.Throttled)
	if spy.Requests > 2*spy.Succeeded {
		t.Errorf("%d requests for %d answered: more than twice", spy.Requests, spy.Succeeded)
	}
	if spy.Throttled == 0 || spy.Requests == spy.Succeeded+spy.Throttled {
		t.Error("no request was throttled, or none failed: the test proves nothing")
	}
	// The engine holds a throttled group's requests until Retry-After; a
	// few were seen sent early (an engine matter, left for it): logged.
	for _, e := range spy.Early {
		t.Log(e)
	}
}
