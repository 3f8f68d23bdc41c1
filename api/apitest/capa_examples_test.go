package apitest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// capaExample is examples/capa/machinepool.yaml: documents of CAPA's own
// flavor template, in the pinned sigs.k8s.io/cluster-api-provider-aws/v2
// module, with variables filled.
const (
	capaExample  = "machinepool.yaml"
	capaTemplate = "cluster-template-machinepool.yaml"
)

// TestCAPAExampleIsCAPAsTemplate checks that every document of
// examples/capa/machinepool.yaml is the document of the same kind in CAPA's
// template, unchanged but for filled ${VARS}.
func TestCAPAExampleIsCAPAsTemplate(t *testing.T) {
	root := repoRoot(t)
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/cluster-api-provider-aws/v2")
	cmd.Dir = root
	dir, err := cmd.Output()
	if err != nil {
		t.Fatalf("locating the CAPA module: %v", err)
	}
	tmpl, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), "templates", capaTemplate))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := os.ReadFile(filepath.Join(root, "examples", "capa", capaExample))
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string]string{}
	for _, doc := range strings.Split(string(tmpl), "\n---\n") {
		byKind[kindOf(doc)] = doc
	}
	docs := strings.Split(exampleBody(string(ex)), "\n---\n")
	n := 0
	for _, doc := range docs {
		doc = strings.TrimPrefix(strings.TrimSpace(doc), "---\n")
		if doc == "" {
			continue
		}
		n++
		k := kindOf(doc)
		want, ok := byKind[k]
		if !ok {
			t.Errorf("examples/capa/%s holds a %s, which CAPA's %s has not", capaExample, k, capaTemplate)
			continue
		}
		if _, err := matchFilled(want, doc); err != nil {
			t.Errorf("examples/capa/%s's %s is not CAPA's with its variables filled: %v", capaExample, k, err)
		}
	}
	if n < 3 {
		t.Errorf("examples/capa/%s holds %d documents, want the MachinePool, AWSMachinePool and KubeadmConfig", capaExample, n)
	}
}

// TestCAPAExampleRoundTrips applies examples/capa/machinepool.yaml (the
// AWSMachinePool in CAPA's v1beta2, through the conversion webhook to
// mpool's stored v1beta1 and back) and asserts every field written reads
// back unchanged.
func TestCAPAExampleRoundTrips(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "examples", "capa", capaExample))
	if err != nil {
		t.Fatal(err)
	}
	applyAndCompare(t, exampleBody(string(b)))
}

func kindOf(doc string) string {
	m := regexp.MustCompile(`(?m)^kind: (\S+)`).FindStringSubmatch(doc)
	if m == nil {
		return ""
	}
	return m[1]
}
