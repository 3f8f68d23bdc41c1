package cloudsim

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mpool-dev/mpool/sim/core"
)

func TestFaultCommand(t *testing.T) {
	srv, err := Start(context.Background(), core.Options{Seed: 9, DataDir: t.TempDir(), DefaultSimulation: &core.Simulation{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	g, err := srv.Cloud().ApplyGroup("pool", core.GroupSpec{Capacity: 4})
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		cmd := NewCommand()
		out := &bytes.Buffer{}
		cmd.SetOut(out)
		cmd.SetErr(&bytes.Buffer{})
		cmd.SetArgs(append([]string{"fault", "--url", srv.URL()}, args...))
		err := cmd.ExecuteContext(context.Background())
		return out.String(), err
	}
	faults := func() map[string]core.InstanceFault {
		g, err := srv.Cloud().GetGroup("pool")
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]core.InstanceFault{}
		for _, in := range g.Instances {
			if in.Fault != core.FaultNone {
				m[in.ID] = in.Fault
			}
		}
		return m
	}
	id := g.Instances[0].ID

	tests := []struct {
		name    string
		args    []string
		wantErr string
		check   func(out string) bool
	}{
		{name: "an instance's fault by ID", args: []string{id, "kubelet-stopped"},
			check: func(string) bool { return faults()[id] == core.FaultKubeletStopped }},
		{name: "cleared with none", args: []string{id, "none"},
			check: func(string) bool { return len(faults()) == 0 }},
		{name: "within a group", args: []string{id, "NodeNotReady", "--group", "pool"},
			check: func(string) bool { return faults()[id] == core.FaultNodeNotReady }},
		{name: "a fraction of a group prints the instances chosen", args: []string{"--group", "pool", "--fraction", "1", "cloud-check-failing"},
			check: func(out string) bool { return len(strings.Fields(out)) == 4 && len(faults()) == 4 }},
		{name: "an unknown fault", args: []string{id, "sleepy"}, wantErr: "unknown instance fault"},
		{name: "an unknown instance", args: []string{"i-missing", "never-joins"}, wantErr: "NotFound"},
		{name: "a fraction without a group", args: []string{"--fraction", "1", "none"}, wantErr: "--fraction takes --group"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := run(tt.args...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !tt.check(out) {
				t.Fatalf("err = %v, out %q, faults %v", err, out, faults())
			}
		})
	}
}
