package cli

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

func TestScaleMachinePool(t *testing.T) {
	f := newFixture(t, "cli-scale")
	ctx := context.Background()
	key := types.NamespacedName{Namespace: f.ns, Name: "workers"}
	replicas := func() int32 {
		t.Helper()
		mp := &clusterv1.MachinePool{}
		if err := env.Client.Get(ctx, key, mp); err != nil {
			t.Fatal(err)
		}
		return ptr.Deref(mp.Spec.Replicas, -1)
	}

	var out strings.Builder
	steps := []struct {
		name         string
		args         []string
		wantErr      string
		wantReplicas int32
	}{
		{name: "scale out", args: []string{"--replicas", "5"}, wantReplicas: 5},
		{name: "the same count changes nothing", args: []string{"--replicas=5"}, wantReplicas: 5},
		{name: "scale in to zero", args: []string{"--replicas", "0"}, wantReplicas: 0},
		{name: "a negative count is refused", args: []string{"--replicas", "-1"}, wantErr: "--replicas must be 0 or more, got -1", wantReplicas: 0},
		{name: "a negative count with = is refused", args: []string{"--replicas=-3"}, wantErr: "--replicas must be 0 or more, got -3", wantReplicas: 0},
		{name: "--replicas is required", args: nil, wantErr: `required flag(s) "replicas" not set`, wantReplicas: 0},
		{name: "back to three", args: []string{"--replicas", "3"}, wantReplicas: 3},
	}
	for _, st := range steps {
		args := append([]string{"scale", "machinepool", "workers", "-n", f.ns}, st.args...)
		r := runCLI(t, f.clock, args...)
		switch {
		case st.wantErr == "" && r.err != nil:
			t.Fatalf("%s: %v", st.name, r.err)
		case st.wantErr != "" && (r.err == nil || r.err.Error() != st.wantErr):
			t.Fatalf("%s: error = %v, want %q", st.name, r.err, st.wantErr)
		}
		if got := replicas(); got != st.wantReplicas {
			t.Errorf("%s: spec.replicas = %d, want %d", st.name, got, st.wantReplicas)
		}
		if st.wantErr == "" {
			out.WriteString("$ mpool scale machinepool workers " + strings.Join(st.args, " ") + "\n" + r.stdout.String())
		}
	}
	golden(t, "scale", out.String())

	// An external actor owning the replica count gets a warning.
	mp := &clusterv1.MachinePool{}
	if err := env.Client.Get(ctx, key, mp); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(mp.DeepCopy())
	mp.Annotations = map[string]string{clusterv1.ReplicasManagedByAnnotation: "cluster-autoscaler"}
	if err := env.Client.Patch(ctx, mp, patch); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, f.clock, "scale", "mp", "workers", "-n", f.ns, "--replicas", "4")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if want := "warning: machinepool cli-scale/workers has cluster.x-k8s.io/replicas-managed-by=\"cluster-autoscaler\""; !strings.Contains(r.stderr.String(), want) {
		t.Errorf("stderr lacks %q: %q", want, r.stderr.String())
	}
	if got := replicas(); got != 4 {
		t.Errorf("spec.replicas = %d, want 4", got)
	}
}
