package local_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/mpool-dev/mpool/internal/metrics"
	"github.com/mpool-dev/mpool/internal/provider/local"
	"github.com/mpool-dev/mpool/internal/scalegroup"
	"github.com/mpool-dev/mpool/internal/testenv/cloudtest"
	"github.com/mpool-dev/mpool/sim/cloudsim"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/localface"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// startCloud runs a simulated cloud on loopback (real HTTP) with a fake
// clock and returns it with the local ScaleGroup pointed at it.
func startCloud(t testing.TB, sim core.Simulation) (*cloudtest.Env, *local.Client) {
	t.Helper()
	var c *local.Client
	e := cloudtest.Start(t, cloudtest.Options{Face: core.LocalFace, Simulation: sim, Now: t0}, func(e *cloudtest.Env) (sg scalegroup.ScaleGroup, err error) {
		c, err = local.New(e.Srv.URL(), local.Options{})
		return c, err
	})
	return e, c
}

func spec(capacity int32, hash string) scalegroup.GroupSpec {
	return scalegroup.GroupSpec{
		Capacity:  capacity,
		ModelHash: hash,
		Model: scalegroup.Model{
			InstanceType: "sim.large",
			Image:        "ubuntu-24.04",
			Zones:        []string{"z1", "z2"},
			CustomData:   []byte("#cloud-config\n"),
			Version:      "v1.31.0",
		},
	}
}

// TestContract checks the ScaleGroup contract against a live simulated cloud.
func TestContract(t *testing.T) {
	ctx := context.Background()
	_, sg := startCloud(t, core.Simulation{})

	t.Run("Get of a missing group is NotFound", func(t *testing.T) {
		_, err := sg.Get(ctx, scalegroup.Ref{Name: "missing"})
		if !scalegroup.IsNotFound(err) {
			t.Fatalf("Get: %v, want NotFound", err)
		}
	})
	t.Run("Apply creates, and is idempotent", func(t *testing.T) {
		g, err := sg.Apply(ctx, scalegroup.Ref{Name: "pool"}, spec(3, "h1"))
		if err != nil {
			t.Fatalf("Apply: %v", err)
		}
		if g.Capacity != 3 || len(g.Instances) != 3 || g.ModelHash != "h1" {
			t.Fatalf("Apply returned capacity %d, %d instances, hash %q", g.Capacity, len(g.Instances), g.ModelHash)
		}
		first := cloudtest.IDs(g)
		g, err = sg.Apply(ctx, scalegroup.Ref{Name: "pool"}, spec(3, "h1"))
		if err != nil {
			t.Fatalf("Apply again: %v", err)
		}
		if !slices.Equal(first, cloudtest.IDs(g)) {
			t.Fatalf("re-applying the same spec changed instances: %v → %v", first, cloudtest.IDs(g))
		}
		g, err = sg.Get(ctx, scalegroup.Ref{Name: "pool"})
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		for _, in := range g.Instances {
			if in.State != scalegroup.StateRunning || in.ModelHash != "h1" || in.Zone == "" ||
				in.ProviderID != "local:///pool/"+in.ID || in.CreatedAt.IsZero() {
				t.Fatalf("instance %+v: want Running, hash h1, a zone, providerID local:///pool/<id>, a creation time", in)
			}
		}
		if g.Pending() {
			t.Fatalf("group at rest reports an operation: %+v", g.Operation)
		}
	})
	t.Run("DeleteInstances deletes exactly those and lowers the capacity", func(t *testing.T) {
		g, _ := sg.Get(ctx, scalegroup.Ref{Name: "pool"})
		victim := g.Instances[0].ID
		if err := sg.DeleteInstances(ctx, scalegroup.Ref{Name: "pool"}, []string{victim, "i-missing"}); err != nil {
			t.Fatalf("DeleteInstances: %v", err)
		}
		g, _ = sg.Get(ctx, scalegroup.Ref{Name: "pool"})
		if g.Capacity != 2 || slices.Contains(cloudtest.IDs(g), victim) || len(g.Instances) != 2 {
			t.Fatalf("after deleting %s: capacity %d, instances %v", victim, g.Capacity, cloudtest.IDs(g))
		}
	})
	t.Run("DeleteInstances of a missing id, a missing group or no ids succeeds", func(t *testing.T) {
		for _, c := range []struct {
			group string
			ids   []string
		}{{"pool", []string{"i-nope"}}, {"missing", []string{"i-1"}}, {"pool", nil}} {
			if err := sg.DeleteInstances(ctx, scalegroup.Ref{Name: c.group}, c.ids); err != nil {
				t.Fatalf("DeleteInstances(%s, %v): %v", c.group, c.ids, err)
			}
		}
		if g, _ := sg.Get(ctx, scalegroup.Ref{Name: "pool"}); g.Capacity != 2 {
			t.Fatalf("capacity changed to %d by no-op deletes", g.Capacity)
		}
	})
	t.Run("Invalid specs are Invalid", func(t *testing.T) {
		_, err := sg.Apply(ctx, scalegroup.Ref{Name: "Not_A_Name"}, spec(1, "h"))
		if !scalegroup.IsInvalid(err) {
			t.Fatalf("Apply with an invalid name: %v, want Invalid", err)
		}
		bad := spec(1, "h")
		bad.Model.InPlace = local.Simulation{FailureRate: ptr.To(1.5)}
		if _, err := sg.Apply(ctx, scalegroup.Ref{Name: "pool"}, bad); !scalegroup.IsInvalid(err) {
			t.Fatalf("Apply with a failure rate above 1: %v, want Invalid", err)
		}
		bad = spec(1, "h")
		bad.Model.Provider = struct{ Disk int }{Disk: 30}
		if _, err := sg.Apply(ctx, scalegroup.Ref{Name: "pool"}, bad); !scalegroup.IsInvalid(err) {
			t.Fatalf("Apply with another provider's model fields: %v, want Invalid", err)
		}
	})
	t.Run("Delete, then Get is NotFound and Delete again succeeds", func(t *testing.T) {
		if err := sg.Delete(ctx, scalegroup.Ref{Name: "pool"}); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		if _, err := sg.Get(ctx, scalegroup.Ref{Name: "pool"}); !scalegroup.IsNotFound(err) {
			t.Fatalf("Get after Delete: %v, want NotFound", err)
		}
		if err := sg.Delete(ctx, scalegroup.Ref{Name: "pool"}); err != nil {
			t.Fatalf("Delete again: %v", err)
		}
	})
}

func TestAsynchronousOperations(t *testing.T) {
	ctx := context.Background()
	e, sg := startCloud(t, core.Simulation{})
	s := spec(2, "h1")
	s.Model.InPlace = local.Simulation{
		ProvisionDelay: ptr.To(5 * time.Second),
		BootDelay:      ptr.To(10 * time.Second),
		BootJitter:     ptr.To(time.Duration(0)),
		DeleteDelay:    ptr.To(3 * time.Second),
	}
	g, err := sg.Apply(ctx, scalegroup.Ref{Name: "pool"}, s)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if !g.Pending() || g.Operation.Type != scalegroup.OperationScale {
		t.Fatalf("Apply with a provision delay: operation %+v, want a pending Scale", g.Operation)
	}
	for _, in := range g.Instances {
		if in.State != scalegroup.StateCreating {
			t.Fatalf("instance %s is %s, want Creating", in.ID, in.State)
		}
	}
	// The in-place settings became the group's knobs, not model fields.
	cg, _ := e.Srv.Cloud().GetGroup("pool")
	if cg.Simulation.BootDelay != 10*time.Second || cg.Simulation.DeleteDelay != 3*time.Second {
		t.Fatalf("simulation = %+v, want boot 10s, delete 3s", cg.Simulation)
	}
	if len(cg.Model.Extra) != 1 || cg.Model.Extra[core.ExtraVersion] != "v1.31.0" {
		t.Fatalf("model extra = %v, want version only", cg.Model.Extra)
	}

	// A caller that restarts resumes from Get alone.
	e.Clk.Step(5 * time.Second)
	g, _ = sg.Get(ctx, scalegroup.Ref{Name: "pool"})
	if g.Pending() || g.Instances[0].State != scalegroup.StateBooting {
		t.Fatalf("after provisioning: pending %v, state %s; want done and Booting", g.Pending(), g.Instances[0].State)
	}
	e.Clk.Step(10 * time.Second)
	g, _ = sg.Get(ctx, scalegroup.Ref{Name: "pool"})
	if g.Instances[0].State != scalegroup.StateRunning {
		t.Fatalf("after booting: %s, want Running", g.Instances[0].State)
	}
	if err := sg.DeleteInstances(ctx, scalegroup.Ref{Name: "pool"}, []string{g.Instances[0].ID}); err != nil {
		t.Fatal(err)
	}
	g, _ = sg.Get(ctx, scalegroup.Ref{Name: "pool"})
	if !g.Pending() || g.Instances[0].State != scalegroup.StateDeleting {
		t.Fatalf("deleting: pending %v, state %s; want pending and Deleting", g.Pending(), g.Instances[0].State)
	}
	e.Clk.Step(3 * time.Second)
	if g, _ = sg.Get(ctx, scalegroup.Ref{Name: "pool"}); g.Pending() || len(g.Instances) != 1 {
		t.Fatalf("after the delete delay: pending %v, %d instances; want done with 1", g.Pending(), len(g.Instances))
	}
}

func TestErrorsAreTyped(t *testing.T) {
	ctx := context.Background()
	e, sg := startCloud(t, core.Simulation{})
	if _, err := sg.Apply(ctx, scalegroup.Ref{Name: "pool"}, spec(1, "h")); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		faults core.Faults
		setup  func() error
		call   func() error
		check  func(t *testing.T, err error)
	}{
		{
			name:   "throttling surfaces as Throttled with the Retry-After",
			faults: core.Faults{ThrottleRate: 1, RetryAfter: 3 * time.Second},
			call:   func() error { _, err := sg.Get(ctx, scalegroup.Ref{Name: "pool"}); return err },
			check: func(t *testing.T, err error) {
				ra, ok := scalegroup.IsThrottled(err)
				if !ok || ra != 3*time.Second {
					t.Fatalf("err = %v: throttled %v retry-after %s, want true 3s", err, ok, ra)
				}
			},
		},
		{
			name:   "sub-second Retry-After rounds up to a second",
			faults: core.Faults{ThrottleRate: 1, RetryAfter: 200 * time.Millisecond},
			call:   func() error { return sg.DeleteInstances(ctx, scalegroup.Ref{Name: "pool"}, []string{"x"}) },
			check: func(t *testing.T, err error) {
				if ra, ok := scalegroup.IsThrottled(err); !ok || ra != time.Second {
					t.Fatalf("err = %v: throttled %v retry-after %s, want true 1s", err, ok, ra)
				}
			},
		},
		{
			name:   "server errors are Transient",
			faults: core.Faults{ErrorRate: 1},
			call:   func() error { _, err := sg.Apply(ctx, scalegroup.Ref{Name: "pool"}, spec(1, "h")); return err },
			check: func(t *testing.T, err error) {
				if !scalegroup.IsTransient(err) {
					t.Fatalf("err = %v, want Transient", err)
				}
			},
		},
		{
			name:  "quota is QuotaExceeded",
			setup: func() error { return e.Srv.Cloud().SetMaxInstances(2) },
			call:  func() error { _, err := sg.Apply(ctx, scalegroup.Ref{Name: "pool"}, spec(5, "h")); return err },
			check: func(t *testing.T, err error) {
				if !scalegroup.IsQuotaExceeded(err) {
					t.Fatalf("err = %v, want QuotaExceeded", err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := e.Srv.SetFaults(tt.faults); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = e.Srv.SetFaults(core.Faults{}); _ = e.Srv.Cloud().SetMaxInstances(0) }()
			if tt.setup != nil {
				if err := tt.setup(); err != nil {
					t.Fatal(err)
				}
			}
			err := tt.call()
			tt.check(t, fmt.Errorf("wrapped by a caller: %w", err))
		})
	}

	// Unreachable clouds are Transient too.
	dead, _ := local.New("http://127.0.0.1:1", local.Options{})
	if _, err := dead.Get(ctx, scalegroup.Ref{Name: "pool"}); !scalegroup.IsTransient(err) {
		t.Fatalf("unreachable cloud: %v, want Transient", err)
	}
}

func TestMetricsAndStats(t *testing.T) {
	ctx := context.Background()
	e, client := startCloud(t, core.Simulation{})
	sg := metrics.WithMetrics(client, local.ProviderName)
	if _, err := sg.Apply(ctx, scalegroup.Ref{Name: "pool"}, spec(2, "h")); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := sg.Get(ctx, scalegroup.Ref{Name: "pool"}); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = sg.Get(ctx, scalegroup.Ref{Name: "missing"})
	_ = sg.Delete(ctx, scalegroup.Ref{Name: "pool"})

	counts := sg.Counts()
	if counts.Reads() != 4 || counts.Writes() != 2 || counts[metrics.OpGet]["not_found"] != 1 {
		t.Fatalf("counts = %v: want 4 reads (1 not_found), 2 writes", counts)
	}
	st := e.Srv.Stats()
	if st.CountStatus(localface.OpGetGroup, http.StatusOK) != 3 || st.CountStatus(localface.OpGetGroup, http.StatusNotFound) != 1 ||
		st.Count(localface.OpPutGroup) != 1 || st.CountStatus(localface.OpDeleteGroup, http.StatusAccepted) != 1 {
		t.Fatalf("cloud stats = %+v", st)
	}
}

// BenchmarkApplyAndBoot1000 measures, over real HTTP on loopback, creating a
// group of 1,000 instances with zero boot delay until all are Running (the
// node agent is off: no join).
func BenchmarkApplyAndBoot1000(b *testing.B) {
	ctx := context.Background()
	srv, err := cloudsim.Start(ctx, core.Options{DefaultSimulation: &core.Simulation{}})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Stop()
	sg, _ := local.New(srv.URL(), local.Options{})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		name := scalegroup.Ref{Name: fmt.Sprintf("bench-%d", i)}
		if _, err := sg.Apply(ctx, name, spec(1000, "h")); err != nil {
			b.Fatal(err)
		}
		for {
			g, err := sg.Get(ctx, name)
			if err != nil {
				b.Fatal(err)
			}
			running := 0
			for _, in := range g.Instances {
				if in.State == scalegroup.StateRunning {
					running++
				}
			}
			if running == 1000 {
				break
			}
		}
		b.StopTimer()
		if err := sg.Delete(ctx, name); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
