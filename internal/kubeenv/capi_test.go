package kubeenv

import (
	"context"
	"debug/buildinfo"
	"os"
	"testing"
	"time"
)

// TestUpstreamCAPIBuilds builds (or finds cached) upstream Cluster API's
// managers and checks what the interop tests rely on: both binaries report
// the pinned version, and the release's CRDs and webhooks are beside them.
func TestUpstreamCAPIBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds upstream Cluster API's managers (minutes on a cold cache)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	u, err := EnsureUpstreamCAPI(ctx, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	for _, bin := range []string{u.Core, u.Kubeadm} {
		info, err := buildinfo.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		if info.Main.Path != capiModule || info.Main.Version != UpstreamCAPIVersion {
			t.Errorf("%s is built from %s %s, want %s %s", bin, info.Main.Path, info.Main.Version, capiModule, UpstreamCAPIVersion)
		}
	}
	for _, c := range []UpstreamComponent{UpstreamCore, UpstreamKubeadm} {
		crds, err := u.CRDs(c)
		if err != nil || len(crds) == 0 {
			t.Errorf("CRDs of %s: %d, %v", c, len(crds), err)
		}
		muts, vals, err := u.Webhooks(c)
		if err != nil || len(muts) == 0 || len(vals) == 0 {
			t.Errorf("webhooks of %s: %d mutating, %d validating, %v", c, len(muts), len(vals), err)
		}
	}
}
