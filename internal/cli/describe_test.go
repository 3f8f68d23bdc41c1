package cli

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
)

// timestamps matches the RFC 3339 times of the structured output, which
// the API server sets (creation times) and golden files cannot hold.
var timestamps = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)

func TestDescribeMachinePool(t *testing.T) {
	f := newFixture(t, "cli-describe")
	tests := []struct {
		name   string
		args   []string
		golden string
	}{
		{
			name:   "plain text when stdout is not a terminal",
			args:   []string{"describe", "machinepool", "workers", "-n", f.ns},
			golden: "describe_machinepool",
		},
		{
			name:   "the mp alias is the same command",
			args:   []string{"describe", "mp", "workers", "-n", f.ns},
			golden: "describe_machinepool",
		},
		{
			name:   "--color=always paints even a non-terminal",
			args:   []string{"describe", "machinepool", "workers", "-n", f.ns, "--color=always"},
			golden: "describe_machinepool_color",
		},
		{
			name:   "--color=never is plain",
			args:   []string{"describe", "machinepool", "workers", "-n", f.ns, "--color=never"},
			golden: "describe_machinepool",
		},
		{
			name:   "-o json is the documented view",
			args:   []string{"describe", "machinepool", "workers", "-n", f.ns, "-o", "json"},
			golden: "describe_machinepool_json",
		},
		{
			name:   "-o yaml is the same view",
			args:   []string{"describe", "machinepool", "workers", "-n", f.ns, "-o", "yaml"},
			golden: "describe_machinepool_yaml",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, f.clock, tt.args...)
			if r.err != nil {
				t.Fatalf("describe failed: %v\nstderr: %s", r.err, r.stderr.String())
			}
			golden(t, tt.golden, timestamps.ReplaceAllString(r.stdout.String(), "<time>"))
		})
	}
}

// TestDescribeMachinePoolJSON checks the structured view's content, beyond
// its golden bytes: the counts, the model and the Nodes of each instance.
func TestDescribeMachinePoolJSON(t *testing.T) {
	f := newFixture(t, "cli-describe-json")
	r := runCLI(t, f.clock, "describe", "mp", "workers", "-n", f.ns, "-o", "json")
	if r.err != nil {
		t.Fatalf("describe failed: %v", r.err)
	}
	var v MachinePoolView
	if err := json.Unmarshal([]byte(r.stdout.String()), &v); err != nil {
		t.Fatalf("the output is not a MachinePoolView: %v\n%s", err, r.stdout.String())
	}
	want := ReplicaCounts{Desired: 3, Current: 3, Ready: 2, Available: 2, UpToDate: 2}
	if v.Replicas != want {
		t.Errorf("replicas = %+v, want %+v", v.Replicas, want)
	}
	if v.Infrastructure == nil || len(v.Infrastructure.Instances) != 3 {
		t.Fatalf("want 3 instances, got %+v", v.Infrastructure)
	}
	for i, is := range fixtureInstances {
		in := v.Infrastructure.Instances[i]
		wantStatus := "Ready"
		if !is.nodeReady {
			wantStatus = "NotReady"
		}
		switch {
		case in.Name != "workers-"+is.suffix:
			t.Errorf("instance %d is %s, want workers-%s", i, in.Name, is.suffix)
		case ptr.Deref(in.UpToDate, !is.upToDate) != is.upToDate:
			t.Errorf("%s: upToDate = %v, want %v", in.Name, in.UpToDate, is.upToDate)
		case in.Node == nil || in.Node.Name != f.nodeName(is.suffix) || in.Node.Status != wantStatus:
			t.Errorf("%s: node = %+v, want %s %s", in.Name, in.Node, f.nodeName(is.suffix), wantStatus)
		case in.Machine != in.Name:
			t.Errorf("%s: machine = %q, want %q", in.Name, in.Machine, in.Name)
		}
	}
}

func TestDescribeCluster(t *testing.T) {
	f := newFixture(t, "cli-describe-cluster")
	tests := []struct {
		name   string
		args   []string
		golden string
	}{
		{name: "plain", args: []string{"describe", "cluster", "demo", "-n", f.ns}, golden: "describe_cluster"},
		{name: "colour", args: []string{"describe", "cluster", "demo", "-n", f.ns, "--color=always"}, golden: "describe_cluster_color"},
		{name: "json", args: []string{"describe", "cluster", "demo", "-n", f.ns, "-o", "json"}, golden: "describe_cluster_json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, f.clock, tt.args...)
			if r.err != nil {
				t.Fatalf("describe failed: %v", r.err)
			}
			golden(t, tt.golden, timestamps.ReplaceAllString(r.stdout.String(), "<time>"))
		})
	}
}

// TestDescribeWithoutWorkloadCluster: a workload cluster that cannot be
// reached leaves the Nodes' status out and says why, instead of failing.
func TestDescribeWithoutWorkloadCluster(t *testing.T) {
	f := newFixture(t, "cli-no-workload")
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "demo-kubeconfig"}}
	if err := env.Client.Delete(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, f.clock, "describe", "mp", "workers", "-n", f.ns)
	if r.err != nil {
		t.Fatalf("describe failed: %v", r.err)
	}
	out := r.stdout.String()
	for _, want := range []string{
		"note: Nodes of cluster cli-no-workload/demo not read: secret cli-no-workload/demo-kubeconfig not found",
		"node cli-no-workload-a  healthy    age 42m",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "  Ready for ") {
		t.Errorf("output shows Node readiness it could not read:\n%s", out)
	}
}

// TestNotFound: every command names a missing object the same way and
// fails.
func TestNotFound(t *testing.T) {
	const ns = "cli-missing"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "describe machinepool", args: []string{"describe", "machinepool", "nope"}, want: "machinepool cli-missing/nope not found"},
		{name: "describe cluster", args: []string{"describe", "cluster", "nope"}, want: "cluster cli-missing/nope not found"},
		{name: "rollout status", args: []string{"rollout", "status", "nope"}, want: "machinepool cli-missing/nope not found"},
		{name: "rollout status --watch", args: []string{"rollout", "status", "nope", "--watch"}, want: "machinepool cli-missing/nope not found"},
		{name: "rollout pause", args: []string{"rollout", "pause", "nope"}, want: "machinepool cli-missing/nope not found"},
		{name: "rollout resume", args: []string{"rollout", "resume", "nope"}, want: "machinepool cli-missing/nope not found"},
		{name: "scale machinepool", args: []string{"scale", "machinepool", "nope", "--replicas", "2"}, want: "machinepool cli-missing/nope not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, clock.RealClock{}, append(tt.args, "-n", ns)...)
			if r.err == nil || r.err.Error() != tt.want {
				t.Fatalf("error = %v, want %q", r.err, tt.want)
			}
			if r.stdout.String() != "" {
				t.Errorf("unexpected output: %s", r.stdout.String())
			}
		})
	}
}
