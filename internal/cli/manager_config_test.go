package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLoadConfigUnlimited: `mpool manager --kubeconfig` runs without
// client-go's default client-side limit of 5 requests per second, as the
// in-cluster configuration (controller-runtime's GetConfig) does; the
// limit made a pool of 20 take seconds longer to come up from a
// workstation than in a Pod.
func TestLoadConfigUnlimited(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	kubeconfig := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443"}
users:
- name: u
  user: {token: t}
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
`
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.QPS != -1 {
		t.Errorf("QPS %v, want -1 (no client-side limit)", cfg.QPS)
	}
}
