package kubeenv

import (
	"context"
	"debug/buildinfo"
	"os"
	"testing"
	"time"
)

// TestUpstreamCAPABuilds builds (or finds cached) CAPA's manager and checks
// what the peer tests rely on: the binary is the pinned release, and its
// CRDs (AWSMachinePool among them) and webhooks are beside it.
func TestUpstreamCAPABuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds CAPA's manager (many minutes on a cold cache)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	u, err := EnsureUpstreamCAPA(ctx, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	info, err := buildinfo.ReadFile(u.Manager)
	if err != nil {
		t.Fatal(err)
	}
	if info.Main.Path != capaModule || info.Main.Version != UpstreamCAPAVersion {
		t.Errorf("%s is built from %s %s, want %s %s", u.Manager, info.Main.Path, info.Main.Version, capaModule, UpstreamCAPAVersion)
	}
	crds, err := u.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range crds {
		found = found || c.Name == "awsmachinepools.infrastructure.cluster.x-k8s.io"
	}
	if !found {
		t.Errorf("no AWSMachinePool CRD among CAPA's %d", len(crds))
	}
	muts, vals, err := u.Webhooks()
	if err != nil || len(muts) == 0 || len(vals) == 0 {
		t.Errorf("CAPA's webhooks: %d mutating, %d validating, %v", len(muts), len(vals), err)
	}
}
