package kubeenv

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestEnsureClusterctlBuildsThePinnedVersion builds (or finds cached)
// clusterctl and checks that the binary reports ClusterctlVersion.
func TestEnsureClusterctlBuildsThePinnedVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds clusterctl from source on first use; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	start := time.Now()
	bin, err := EnsureClusterctl(ctx, testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("EnsureClusterctl returned %s in %s", bin, time.Since(start).Round(time.Millisecond))

	cmd := exec.CommandContext(ctx, bin, "version", "-o", "short")
	// No update check against GitHub, and no state written to the user's
	// clusterctl config directory.
	cmd.Env = append(cmd.Environ(), "CLUSTERCTL_DISABLE_VERSIONCHECK=true", "XDG_CONFIG_HOME="+t.TempDir(), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("clusterctl version -o short: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != ClusterctlVersion {
		t.Fatalf("clusterctl version -o short printed %q, want %q", got, ClusterctlVersion)
	}

	again, err := EnsureClusterctl(ctx, testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	if again != bin {
		t.Fatalf("second EnsureClusterctl returned %s, want the cached %s", again, bin)
	}
}

// TestVersionLDFlags: the release builds' version stamp, with the major
// version without its v.
func TestVersionLDFlags(t *testing.T) {
	const p = "sigs.k8s.io/cluster-api/version"
	want := "-s -w -X " + p + ".gitVersion=v1.14.2 -X " + p + ".gitMajor=1 -X " + p + ".gitMinor=14 -X " + p + ".gitTreeState=clean"
	if got := versionLDFlags(p, "v1.14.2"); got != want {
		t.Fatalf("versionLDFlags:\n got %s\nwant %s", got, want)
	}
}
