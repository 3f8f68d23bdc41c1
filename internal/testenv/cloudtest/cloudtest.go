// Package cloudtest runs a provider's ScaleGroup tests against the
// simulated cloud, with no API server: one cloud on a fake clock per test
// (Start), and what those tests share (Env: Apply, Get and Settle of a
// group, the requests a call made of the provider's face, the cloud's own
// view of a group, the contract suite's case and the benchmark of a big
// group's Get). The integration tests' fixture, with an API server and a
// manager, is test/integration/itest.
package cloudtest

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mpool-dev/mpool/internal/provider/contract/contracttest"
	"github.com/mpool-dev/mpool/internal/scalegroup"
	"github.com/mpool-dev/mpool/sim/cloudsim"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/server"
)

// Seed seeds every test cloud's randomness.
const Seed = 7

// BootDelay is how long instances take to boot in DefaultSimulation: on
// the fake clock, so a test steps it rather than waiting.
const BootDelay = 10 * time.Second

// DefaultSimulation is the simulation most tests run: instances boot in
// BootDelay.
var DefaultSimulation = core.Simulation{BootDelay: BootDelay}

// Options say what cloud Start starts.
type Options struct {
	// Face names the face the provider's ScaleGroup reaches ("local",
	// "azure", "aws", ...): Requests counts its requests, Throttle faults
	// it.
	Face string
	// Simulation is the cloud's default simulation; its BootDelay is how
	// far Settle steps the clock.
	Simulation core.Simulation
	// Faces are the faces configured otherwise than by default (nil: every
	// face as it comes).
	Faces []core.Face
	// Ignored are operations of the face that Requests does not count
	// (Azure's Entra ID token and discovery requests).
	Ignored []string
	// Now is where the fake clock starts. Zero is the wall clock's time,
	// which a face serving HTTPS needs: the cloud signs its TLS
	// certificate with its clock, and the client checks it against the
	// wall clock.
	Now time.Time
}

// Env is a simulated cloud on a fake clock and the ScaleGroup a test
// drives through one of its faces.
type Env struct {
	// Srv is the simulated cloud.
	Srv *server.Server
	// Clk is the cloud's clock: tests step it rather than wait.
	Clk *clocktesting.FakeClock
	// SG is the ScaleGroup under test.
	SG scalegroup.ScaleGroup

	opts Options
}

// Start starts a simulated cloud as o says, on a fake clock, and stops it
// when the test ends, and the ScaleGroup under test, which build builds
// against it (failing the test when it cannot).
func Start(t testing.TB, o Options, build func(*Env) (scalegroup.ScaleGroup, error)) *Env {
	t.Helper()
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	clk := clocktesting.NewFakeClock(now)
	sim := o.Simulation
	srv, err := cloudsim.Start(context.Background(), core.Options{Clock: clk, Seed: Seed, DefaultSimulation: &sim, Faces: o.Faces})
	if err != nil {
		t.Fatalf("starting the simulated cloud: %v", err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	e := &Env{Srv: srv, Clk: clk, opts: o}
	if e.SG, err = build(e); err != nil {
		t.Fatalf("building the ScaleGroup: %v", err)
	}
	return e
}

// FaceURL is the base URL of the face the ScaleGroup reaches.
func (e *Env) FaceURL() string { return e.Srv.FaceURL(e.opts.Face) }

// Apply applies s to the group at r, failing the test on an error.
func (e *Env) Apply(t testing.TB, r scalegroup.Ref, s scalegroup.GroupSpec) *scalegroup.Group {
	t.Helper()
	g, err := e.SG.Apply(context.Background(), r, s)
	if err != nil {
		t.Fatalf("Apply %s: %v", r.Name, err)
	}
	return g
}

// ApplyCounted is Apply, with the requests it made of the face.
func (e *Env) ApplyCounted(t testing.TB, r scalegroup.Ref, s scalegroup.GroupSpec) (*scalegroup.Group, Requests) {
	t.Helper()
	var g *scalegroup.Group
	got := e.Count(func() { g = e.Apply(t, r, s) })
	return g, got
}

// Get reads the group at r, failing the test on an error.
func (e *Env) Get(t testing.TB, r scalegroup.Ref) *scalegroup.Group {
	t.Helper()
	g, err := e.SG.Get(context.Background(), r)
	if err != nil {
		t.Fatalf("Get %s: %v", r.Name, err)
	}
	return g
}

// Settle steps the clock past the boot delay and returns the group at r
// once it is at rest with every instance running, failing the test when
// it does not get there (bounded: the simulation advances on each read).
func (e *Env) Settle(t testing.TB, r scalegroup.Ref) *scalegroup.Group {
	t.Helper()
	e.Clk.Step(e.opts.Simulation.BootDelay + time.Second)
	var g *scalegroup.Group
	for range 20 {
		g = e.Get(t, r)
		if !g.Pending() && !slices.ContainsFunc(g.Instances, func(in scalegroup.Instance) bool { return in.State != scalegroup.StateRunning }) {
			return g
		}
		e.Clk.Step(time.Second)
	}
	t.Fatalf("group %s did not settle: %+v", r.Name, g)
	return nil
}

// Requests counts a face's requests by operation.
type Requests map[string]int64

// Total is the number of requests.
func (r Requests) Total() int64 {
	var n int64
	for _, c := range r {
		n += c
	}
	return n
}

// Requests returns the requests the face has answered since the cloud's
// statistics were last reset, but the ignored operations.
func (e *Env) Requests() Requests {
	out := Requests{}
	for _, r := range e.Srv.Stats().Requests {
		if r.Face == e.opts.Face && !slices.Contains(e.opts.Ignored, r.Operation) {
			out[r.Operation] += r.Count
		}
	}
	return out
}

// Count returns the requests do made of the face.
func (e *Env) Count(do func()) Requests {
	e.Srv.ResetStats()
	do()
	return e.Requests()
}

// CloudGroup is the cloud's own view of the group at k (not counted,
// never faulted), failing the test when it does not exist.
func (e *Env) CloudGroup(t testing.TB, k core.GroupKey) *core.Group {
	t.Helper()
	g, err := e.Srv.Cloud().Scope(k.Face, k.Scope).GetGroup(k.Name)
	if err != nil {
		t.Fatalf("the cloud's group %s: %v", k.Name, err)
	}
	return g
}

// CustomData is the custom data (user data) the group at k launches its
// new instances with.
func (e *Env) CustomData(t testing.TB, k core.GroupKey) string {
	t.Helper()
	cd, err := e.Srv.Cloud().Scope(k.Face, k.Scope).CustomData(k.Name)
	if err != nil {
		t.Fatalf("the custom data of the cloud's group %s: %v", k.Name, err)
	}
	return string(cd)
}

// Throttle makes the face throttle every call (with a Retry-After of a
// second) until the function it returns is called.
func (e *Env) Throttle(t testing.TB) (restore func()) {
	t.Helper()
	if err := e.Srv.SetFaceFaults(e.opts.Face, &core.Faults{ThrottleRate: 1, RetryAfter: time.Second}); err != nil {
		t.Fatal(err)
	}
	return func() { _ = e.Srv.SetFaceFaults(e.opts.Face, nil) }
}

// ContractCase is the contract suite's case for the ScaleGroup: groups
// placed by ref, of spec, the cloud advanced by a second of its clock and
// throttled by Throttle.
func (e *Env) ContractCase(t testing.TB, ref func(name string) scalegroup.Ref, spec func(capacity int32, hash string) scalegroup.GroupSpec) contracttest.ScaleGroupCase {
	return contracttest.ScaleGroupCase{
		ScaleGroup: e.SG,
		Ref:        ref,
		Spec:       spec,
		Advance:    func() { e.Clk.Step(time.Second) },
		Throttle:   func() func() { return e.Throttle(t) },
	}
}

// BenchGet is a reconcile's read of a big group: it applies spec(n) at r
// (n is 1,000, 50 with MPOOL_BENCH_SMALL=1), settles it, then times Get
// and reports the face's requests per Get, failing the benchmark unless
// they are want: a read must not cost more as the group grows.
func (e *Env) BenchGet(b *testing.B, r scalegroup.Ref, spec func(n int32) scalegroup.GroupSpec, want float64) {
	b.Helper()
	n := int32(1000)
	if os.Getenv("MPOOL_BENCH_SMALL") == "1" {
		n = 50
	}
	e.Apply(b, r, spec(n))
	e.Settle(b, r)
	ctx := context.Background()
	e.Srv.ResetStats()
	gets := 0
	for b.Loop() {
		g, err := e.SG.Get(ctx, r)
		if err != nil {
			b.Fatal(err)
		}
		if int32(len(g.Instances)) != n {
			b.Fatalf("Get returned %d instances, want %d", len(g.Instances), n)
		}
		gets++
	}
	perGet := float64(e.Requests().Total()) / float64(gets)
	b.ReportMetric(perGet, "requests/Get")
	if perGet != want {
		b.Fatalf("%.2f requests per Get, want %v", perGet, want)
	}
}

// IDs are the IDs of the group's instances, in its order.
func IDs(g *scalegroup.Group) []string {
	var out []string
	for _, in := range g.Instances {
		out = append(out, in.ID)
	}
	return out
}
