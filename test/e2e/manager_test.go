package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/config/crd"
	"github.com/mpool-dev/mpool/internal/testenv"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func httpGet(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestManagerAgainstAManagementCluster runs `mpool manager` the way a
// Deployment does: kubeconfig, leader election, metrics and probe endpoints,
// and a clean exit on SIGTERM.
func TestManagerAgainstAManagementCluster(t *testing.T) {
	env, err := testenv.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.Kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	bin := buildMpool(t)
	metrics, probes := freeAddr(t), freeAddr(t)
	cmd := exec.Command(bin, "manager", "--kubeconfig", kubeconfig,
		"--leader-elect", "--leader-election-namespace", "default",
		"--metrics-bind-address", metrics, "--health-probe-bind-address", probes,
		"--feature-gates", "SkipMachinePoolModelReconciliation=true")
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	testenv.Eventually(t, 60*time.Second, func() error {
		if code, body := httpGet("http://" + probes + "/readyz"); code != http.StatusOK {
			return fmt.Errorf("readyz: %d %s\n%s", code, body, out)
		}
		return nil
	})
	testenv.Eventually(t, 60*time.Second, func() error {
		lease := &coordinationv1.Lease{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "mpool-manager.cluster.x-k8s.io"}, lease); err != nil {
			return fmt.Errorf("leader election lease: %w", err)
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			return fmt.Errorf("lease has no holder")
		}
		return nil
	})
	// The leader applies the admission policies that span two objects.
	pols, binds, err := crd.AdmissionPolicies()
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		for _, p := range pols {
			if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(p), &admissionregistrationv1.ValidatingAdmissionPolicy{}); err != nil {
				return fmt.Errorf("admission policy %s: %w", p.Name, err)
			}
		}
		for _, b := range binds {
			if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(b), &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}); err != nil {
				return fmt.Errorf("admission policy binding %s: %w", b.Name, err)
			}
		}
		return nil
	})
	testenv.Eventually(t, 30*time.Second, func() error {
		if code, body := httpGet("http://" + metrics + "/metrics"); code != http.StatusOK || !strings.Contains(body, "leader_election_master_status") {
			return fmt.Errorf("metrics: %d", code)
		}
		return nil
	})

	// Once a pool exists the leader exports its metrics, next to the
	// controllers' own.
	pool := &clusterv1.MachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "metrics"},
		Spec: clusterv1.MachinePoolSpec{
			ClusterName: "e2e",
			Replicas:    ptr.To[int32](3),
			Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				ClusterName: "e2e",
				Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To("metrics-bootstrap")},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "LocalMachinePool", Name: "metrics",
				},
			}},
		},
	}
	if err := env.Client.Create(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	poolLabels := `cluster="e2e",name="metrics",namespace="default"`
	testenv.Eventually(t, 30*time.Second, func() error {
		_, body := httpGet("http://" + metrics + "/metrics")
		for _, want := range []string{
			`mpool_machinepool_replicas{` + poolLabels + `,state="desired"} 3`,
			`mpool_machinepool_phase{` + poolLabels + `,phase=`,
			`controller_runtime_reconcile_total{controller="machinepool"`,
		} {
			if !strings.Contains(body, want) {
				return fmt.Errorf("metrics have no %s", want)
			}
		}
		return nil
	})

	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("manager did not exit cleanly on SIGTERM: %v\n%s", err, out)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("manager did not stop within 60s of SIGTERM\n%s", out)
	}
	if !strings.Contains(out.String(), "SkipMachinePoolModelReconciliation=true") {
		t.Errorf("the manager did not log the feature gates it runs with:\n%s", out)
	}
}

// TestManagerRefusesBadGateEnv checks a malformed EXP_ variable is refused
// with a message naming it, before anything starts.
func TestManagerRefusesBadGateEnv(t *testing.T) {
	bin := buildMpool(t)
	cmd := exec.Command(bin, "manager", "--kubeconfig", "/nonexistent")
	cmd.Env = append(os.Environ(), "EXP_MACHINE_POOL=maybe")
	b, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(b), "EXP_MACHINE_POOL") {
		t.Fatalf("want a refusal naming EXP_MACHINE_POOL, got err=%v:\n%s", err, b)
	}
}
