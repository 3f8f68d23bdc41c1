package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/examples"
	"github.com/mpool-dev/mpool/internal/kubeenv"
	"github.com/mpool-dev/mpool/internal/testenv"
)

// TestClusterctlDescribesThePool checks that mpool's management cluster is
// acceptable to upstream tooling: on `mpool up`, the local example pool in
// today's Cluster API (examples/v1beta2/local-machinepool.yaml, the v1beta2
// equivalent of examples/local/machinepool.yaml) becomes Running, and
// `clusterctl describe cluster` of the pinned upstream release exits 0 and
// shows the Cluster, the MachinePool and each of its Machines, Ready and
// Available.
func TestClusterctlDescribesThePool(t *testing.T) {
	bin := buildMpool(t)
	// --empty: the example below is the pool `up` would otherwise create as
	// its sample; here it is applied the way the README's kubectl does.
	up, _ := startUp(t, bin, "--data-dir", t.TempDir(), "--empty")
	up.drain()
	c := up.client(t)
	ctx := context.Background()
	const ns, cluster, pool = "default", "local", "local-mp-0"

	b, err := os.ReadFile("../../examples/v1beta2/local-machinepool.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := examples.Objects(b, ns)
	if err != nil {
		t.Fatalf("examples/v1beta2/local-machinepool.yaml: %v", err)
	}
	for _, u := range objs {
		if err := c.Create(ctx, u); err != nil {
			t.Fatalf("applying %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}

	mp := &clusterv1.MachinePool{}
	testenv.Eventually(t, 5*time.Minute, func() error {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: pool}, mp); err != nil {
			return err
		}
		if mp.Status.Phase != string(clusterv1.MachinePoolPhaseRunning) || ptr.Deref(mp.Status.ReadyReplicas, -1) != 3 {
			return fmt.Errorf("MachinePool %s/%s %q, %v ready", ns, pool, mp.Status.Phase, mp.Status.ReadyReplicas)
		}
		return nil
	})

	// The pool's Machines, as the API server has them: the ones it controls.
	var machines []string
	testenv.Eventually(t, time.Minute, func() error {
		list := &clusterv1.MachineList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		machines = machines[:0]
		var others []string
		for _, m := range list.Items {
			if ref := controllerOf(&m); ref != nil && ref.Kind == "MachinePool" && ref.Name == pool {
				machines = append(machines, m.Name)
			} else {
				others = append(others, fmt.Sprintf("%s (labels %v, owners %v)", m.Name, m.Labels, m.OwnerReferences))
			}
		}
		if len(machines) != 3 {
			return fmt.Errorf("%d Machines controlled by MachinePool %s, want 3; others: %v", len(machines), pool, others)
		}
		return nil
	})

	clusterctl, err := kubeenv.EnsureClusterctl(ctx, testWriter{t})
	if err != nil {
		t.Skipf("clusterctl %s cannot be built here: %v", kubeenv.ClusterctlVersion, err)
	}
	home := t.TempDir()
	args := []string{"describe", "cluster", cluster, "-n", ns, "--kubeconfig", up.kubeconfig,
		"--show-machinesets", "--grouping=false",
		"--config", filepath.Join(home, "clusterctl.yaml")}
	if err := os.WriteFile(filepath.Join(home, "clusterctl.yaml"), nil, 0o600); err != nil {
		t.Fatal(err)
	}

	// Conditions settle a moment after Running: poll until clusterctl
	// exits 0 and shows everything, then report what it showed.
	var out string
	var missing []string
	testenv.Eventually(t, time.Minute, func() error {
		cmd := exec.CommandContext(ctx, clusterctl, args...)
		cmd.Env = append(os.Environ(),
			"CLUSTERCTL_DISABLE_VERSIONCHECK=true",
			"HOME="+home,
			"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
			"NO_COLOR=1")
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		err := cmd.Run()
		out = buf.String()
		if err != nil {
			return fmt.Errorf("clusterctl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		missing = missing[:0]
		// Rows read "<Kind> <namespace>/<name>[, <version>]" after the tree.
		row := func(kind, name string) *regexp.Regexp {
			return regexp.MustCompile(`(?m)^[ │├└─]*` + kind + ` ` + regexp.QuoteMeta(ns+"/"+name) + `(,|\s|$)`)
		}
		wants := []*regexp.Regexp{row("Cluster", cluster), row("MachinePool", pool)}
		for _, m := range machines {
			// "<Kind> ns/name, version  REPLICAS AVAILABLE READY UP-TO-DATE STATUS":
			// 1 1 1 1 for a Ready, Available, up-to-date Machine.
			wants = append(wants, regexp.MustCompile(`(?m)^[ │├└─]*Machine `+regexp.QuoteMeta(ns+"/"+m)+`,? \S*\s+1\s+1\s+1\s+1\b`))
		}
		for _, re := range wants {
			if !re.MatchString(out) {
				missing = append(missing, re.String())
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("clusterctl describe lacks %v:\n%s", missing, out)
		}
		return nil
	})
	t.Logf("clusterctl %s:\n%s", strings.Join(args, " "), out)
	up.stop(t)
}

func controllerOf(m *clusterv1.Machine) *struct{ Kind, Name string } {
	for _, r := range m.OwnerReferences {
		if ptr.Deref(r.Controller, false) {
			return &struct{ Kind, Name string }{r.Kind, r.Name}
		}
	}
	return nil
}

// testWriter sends progress lines (a clusterctl build) to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
