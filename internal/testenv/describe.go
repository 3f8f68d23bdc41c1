package testenv

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
)

// CheckDescribe runs `clusterctl describe cluster` (the binary at
// clusterctl, with extra arguments after the command's own) against the
// management cluster of kubeconfig until it exits 0 and shows the Cluster
// ns/cluster, the MachinePool ns/pool and each Machine machines returns
// Ready, Available and up to date ("1 1 1 1"), and returns what it printed
// last. Conditions settle a moment after a pool runs, hence the poll.
func CheckDescribe(t testing.TB, clusterctl, kubeconfig, ns, cluster, pool string, machines func() ([]string, error), extra ...string) string {
	t.Helper()
	home := t.TempDir()
	cfg := filepath.Join(home, "clusterctl.yaml")
	if err := os.WriteFile(cfg, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"describe", "cluster", cluster, "-n", ns, "--kubeconfig", kubeconfig, "--grouping=false", "--config", cfg}, extra...)
	// Rows read "<Kind> <namespace>/<name>[, <version>]" after the tree.
	row := func(kind, name, rest string) *regexp.Regexp {
		return regexp.MustCompile(`(?m)^[ │├└─]*` + kind + ` ` + regexp.QuoteMeta(ns+"/"+name) + rest)
	}
	var out string
	Eventually(t, time.Minute, func() error {
		cmd := exec.CommandContext(context.Background(), clusterctl, args...)
		cmd.Env = append(os.Environ(), "CLUSTERCTL_DISABLE_VERSIONCHECK=true", "HOME="+home,
			"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "NO_COLOR=1")
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		err := cmd.Run()
		out = buf.String()
		if err != nil {
			return fmt.Errorf("clusterctl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		names, err := machines()
		if err != nil {
			return err
		}
		wants := []*regexp.Regexp{row("Cluster", cluster, `(,|\s|$)`), row("MachinePool", pool, `(,|\s|$)`)}
		for _, m := range names {
			// "<Kind> ns/name, version  REPLICAS AVAILABLE READY UP-TO-DATE STATUS":
			// 1 1 1 1 for a Ready, Available, up-to-date Machine.
			wants = append(wants, row("Machine", m, `,? \S*\s+1\s+1\s+1\s+1\b`))
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
	return out
}
