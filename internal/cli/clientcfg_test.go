package cli

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/mpool-dev/mpool/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	// A child process of TestControllerRuntimeLoggerSet runs one command
	// and nothing else.
	if args := os.Getenv(loggerChildEnv); args != "" {
		os.Exit(runLoggerChild(args))
	}
	// The manager the tests start logs through controller-runtime.
	ctrl.SetLogger(logr.Discard())
	os.Exit(testenv.Run(m, &env))
}

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// syncBuffer is a bytes.Buffer safe for a command writing while the test
// reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// cliRun is one run of the operator commands.
type cliRun struct {
	stdout, stderr syncBuffer
	err            error
}

// runCLI runs `mpool ARGS...` (the operator commands only) against the test
// API server with ages measured against clk, and waits for it.
func runCLI(t *testing.T, clk clock.PassiveClock, args ...string) *cliRun {
	t.Helper()
	r := &cliRun{}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r.err = newTestRoot(clk, kubeconfigFile(t, ""), &r.stdout, &r.stderr, args).ExecuteContext(ctx)
	return r
}

func newTestRoot(clk clock.PassiveClock, kubeconfig string, stdout, stderr *syncBuffer, args []string) *cobra.Command {
	root := &cobra.Command{Use: "mpool", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(newDescribeCommandWith(clk), newRolloutCommand(), newScaleCommand())
	if kubeconfig != "" {
		args = append(args, "--kubeconfig", kubeconfig)
	}
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	return root
}

// kubeconfigFile writes the test API server's admin kubeconfig, with the
// current context's namespace set to ns when ns is not empty.
func kubeconfigFile(t *testing.T, ns string) string {
	t.Helper()
	cfg, err := clientcmd.Load(env.Kubeconfig)
	if err != nil {
		t.Fatalf("parsing the test kubeconfig: %v", err)
	}
	if ns != "" {
		cfg.Contexts[cfg.CurrentContext].Namespace = ns
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatalf("writing the kubeconfig: %v", err)
	}
	return path
}

// golden compares got with testdata/NAME.golden, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s (run the tests with -update to create it): %v", path, err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run the tests with -update to accept it)\n--- got:\n%s\n--- want:\n%s", path, got, want)
	}
}

func TestClientFlags(t *testing.T) {
	f := newFixture(t, "cli-clientcfg")
	tests := []struct {
		name       string
		kubeconfig string
		env        string
		args       []string
		wantErr    string
	}{
		{
			name:       "the namespace defaults to the kubeconfig context's",
			kubeconfig: kubeconfigFile(t, f.ns),
			args:       []string{"rollout", "status", "workers"},
		},
		{
			name:       "-n wins over the context's namespace",
			kubeconfig: kubeconfigFile(t, "elsewhere"),
			args:       []string{"rollout", "status", "workers", "-n", f.ns},
		},
		{
			name:    "without -n and a context namespace it is default",
			env:     kubeconfigFile(t, ""),
			args:    []string{"rollout", "status", "workers"},
			wantErr: "machinepool default/workers not found",
		},
		{
			name: "$KUBECONFIG is used without --kubeconfig",
			env:  kubeconfigFile(t, f.ns),
			args: []string{"rollout", "status", "workers"},
		},
		{
			name:       "a missing kubeconfig file is an error",
			kubeconfig: filepath.Join(t.TempDir(), "missing"),
			args:       []string{"rollout", "status", "workers"},
			wantErr:    "loading the kubeconfig",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", tt.env)
			var stdout, stderr syncBuffer
			err := newTestRoot(f.clock, tt.kubeconfig, &stdout, &stderr, tt.args).ExecuteContext(context.Background())
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
			case tt.wantErr == "" && !strings.Contains(stdout.String(), "machinepool "+f.ns+"/workers"):
				t.Fatalf("output does not name the pool:\n%s", stdout.String())
			}
		})
	}
}
