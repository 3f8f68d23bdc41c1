package interop

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

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/internal/kubeenv"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// CheckDescribe runs `clusterctl describe cluster` of the pinned upstream
// release against the fixture's cluster until it shows the Cluster, the
// MachinePool and each of the pool's Machines Ready, Available and up to
// date (1 1 1 1), and logs what it showed.
func CheckDescribe(t *testing.T, f *itest.Fixture, kubeconfig string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	clusterctl, err := kubeenv.EnsureClusterctl(ctx, os.Stderr)
	if err != nil {
		t.Fatalf("building clusterctl %s: %v", kubeenv.ClusterctlVersion, err)
	}
	home := t.TempDir()
	cfg := filepath.Join(home, "clusterctl.yaml")
	if err := os.WriteFile(cfg, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ns, cluster, pool := f.NS, f.Provider.ClusterName, f.Provider.PoolName
	args := []string{"describe", "cluster", cluster, "-n", ns, "--kubeconfig", kubeconfig, "--grouping=false", "--config", cfg}
	row := func(kind, name, rest string) *regexp.Regexp {
		return regexp.MustCompile(`(?m)^[ │├└─]*` + kind + ` ` + regexp.QuoteMeta(ns+"/"+name) + rest)
	}
	var out string
	testenv.Eventually(t, time.Minute, func() error {
		cmd := exec.CommandContext(ctx, clusterctl, args...)
		cmd.Env = append(os.Environ(), "CLUSTERCTL_DISABLE_VERSIONCHECK=true", "HOME="+home,
			"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "NO_COLOR=1")
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		err := cmd.Run()
		out = buf.String()
		if err != nil {
			return fmt.Errorf("clusterctl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		wants := []*regexp.Regexp{row("Cluster", cluster, `(,|\s|$)`), row("MachinePool", pool, `(,|\s|$)`)}
		ms := &clusterv1.MachineList{}
		if err := f.Env.Client.List(f.Ctx, ms, client.InNamespace(ns), client.MatchingLabels{clusterv1.MachinePoolNameLabel: pool}); err != nil {
			return err
		}
		for _, m := range ms.Items {
			wants = append(wants, row("Machine", m.Name, `,? \S*\s+1\s+1\s+1\s+1\b`))
		}
		var missing []string
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
}
