package apitest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
)

// TestGeneratedFilesUpToDate regenerates the CRDs (with CAPA's v1beta2
// versions added by hack/capaversions), the manager's RBAC role
// and the deepcopy functions into a temporary directory and fails if the
// committed ones differ.
func TestGeneratedFilesUpToDate(t *testing.T) {
	root := repoRoot(t)
	tmp := t.TempDir()

	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("go", append([]string{"tool", "controller-gen"}, args...)...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("controller-gen %v: %v\n%s", args, err, out)
		}
	}

	crdDir := filepath.Join(tmp, "crd")
	run("crd", "paths=./api/...", "output:crd:artifacts:config="+crdDir)
	capa := exec.Command("go", "run", "./hack/capaversions", crdDir)
	capa.Dir = root
	if out, err := capa.CombinedOutput(); err != nil {
		t.Fatalf("hack/capaversions: %v\n%s", err, out)
	}
	compareDirs(t, filepath.Join(root, "config", "crd", "bases"), crdDir)

	rbacDir := filepath.Join(tmp, "rbac")
	run("rbac:roleName=manager-role", "paths=./internal/...", "output:rbac:artifacts:config="+rbacDir)
	compareFile(t, filepath.Join(root, "config", "rbac", "role.yaml"), filepath.Join(rbacDir, "role.yaml"))

	for _, pkg := range []string{"api/infrastructure/v1beta1"} {
		out := filepath.Join(tmp, "object", filepath.FromSlash(pkg))
		run("object:headerFile=hack/boilerplate.go.txt", "paths=./"+pkg, "output:object:dir="+out)
		compareFile(t, filepath.Join(root, filepath.FromSlash(pkg), "zz_generated.deepcopy.go"),
			filepath.Join(out, "zz_generated.deepcopy.go"))
	}

	// The core and kubeadm bootstrap CRDs are upstream's own, copied unchanged from
	// the pinned sigs.k8s.io/cluster-api module.
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/cluster-api")
	cmd.Dir = root
	dir, err := cmd.Output()
	if err != nil {
		t.Fatalf("locating sigs.k8s.io/cluster-api: %v", err)
	}
	capi := string(bytes.TrimSpace(dir))
	for _, f := range []string{"clusters", "machines", "machinepools", "machinesets", "machinedeployments", "machinehealthchecks"} {
		name := "cluster.x-k8s.io_" + f + ".yaml"
		compareFile(t, filepath.Join(root, "config", "crd", "core", name),
			filepath.Join(capi, "core", "config", "crd", "bases", name))
	}
	for _, f := range []string{"kubeadmconfigs", "kubeadmconfigtemplates"} {
		name := "bootstrap.cluster.x-k8s.io_" + f + ".yaml"
		compareFile(t, filepath.Join(root, "config", "crd", "bootstrap", name),
			filepath.Join(capi, "bootstrap", "kubeadm", "config", "crd", "bases", name))
	}
}

func compareDirs(t *testing.T, committed, generated string) {
	t.Helper()
	names := func(dir string) []string {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatalf("reading %s: %v (run hack/generate.sh)", dir, err)
		}
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		sort.Strings(out)
		return out
	}
	want, got := names(generated), names(committed)
	if len(want) != len(got) {
		t.Errorf("%s holds %v, generation produces %v: run hack/generate.sh", committed, got, want)
	}
	for _, n := range want {
		compareFile(t, filepath.Join(committed, n), filepath.Join(generated, n))
	}
}

func compareFile(t *testing.T, committed, generated string) {
	t.Helper()
	want, err := os.ReadFile(generated)
	if err != nil {
		t.Fatalf("reading generated %s: %v", generated, err)
	}
	got, err := os.ReadFile(committed)
	if err != nil {
		t.Errorf("%s is missing: run hack/generate.sh", committed)
		return
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s is out of date: run hack/generate.sh", committed)
	}
}
