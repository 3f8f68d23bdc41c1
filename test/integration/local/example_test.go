package local

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
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
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
		for {
			u := &unstructured.Unstructured{}
			if err := dec.Decode(&u.Object); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				t.Fatalf("%s: %v", file, err)
			}
			if len(u.Object) == 0 {
				continue
			}
			u.SetNamespace(ns)
			if err := env.Client.Create(t.Context(), u, client.DryRunAll); err != nil {
				t.Errorf("%s: %s %s: %v", filepath.Base(file), u.GetKind(), u.GetName(), err)
			}
			kinds[u.GetKind()] = true
		}
		_ = f.Close()
	}
	for _, k := range []string{"Cluster", "MachinePool", "LocalMachinePool", "KubeadmConfig"} {
		if !kinds[k] {
			t.Errorf("the examples have no %s", k)
		}
	}
}
