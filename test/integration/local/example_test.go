package local

import (
	"path/filepath"
	"testing"

	"github.com/mpool-dev/mpool/test/integration/itest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestExamplesApply checks that every manifest in examples/local is accepted
// by the API server's validation (server-side dry run).
func TestExamplesApply(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "examples", "local", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	ns := env.NewNamespace(t)
	kinds := map[string]bool{}
	for _, file := range files {
		for _, u := range itest.Manifest(t, ns, "examples", "local", filepath.Base(file)) {
			if err := env.Client.Create(t.Context(), u, client.DryRunAll); err != nil {
				t.Errorf("%s: %s %s: %v", filepath.Base(file), u.GetKind(), u.GetName(), err)
			}
			kinds[u.GetKind()] = true
		}
	}
	for _, k := range []string{"Cluster", "MachinePool", "LocalMachinePool", "KubeadmConfig"} {
		if !kinds[k] {
			t.Errorf("the examples have no %s", k)
		}
	}
}
