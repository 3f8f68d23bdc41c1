// Package itest is what the integration test packages (test/integration/*)
// share: one fixture (Fixture) parameterised by provider (Provider: Local,
// Azure, AWS, EKS) — a test's namespace with its Cluster and the
// provider's objects, the simulated cloud whose instances join the
// package's API server, object factories and Eventually-style waits that
// read the resulting state the same way for every cloud — and an mpool
// manager built by internal/manager as `mpool manager` and `mpool up`
// build theirs (every controller, the providers from the registry, the
// feature-gate policy and the metrics), running until the test ends. Each
// package's harness is a thin instance of the fixture.
package itest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	capifeature "sigs.k8s.io/cluster-api/feature"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/mpool-dev/mpool/examples"
	"github.com/mpool-dev/mpool/internal/controller/infrapool"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/metrics"
	"github.com/mpool-dev/mpool/internal/provider"
	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/cloudsim"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/sim/server"
)

// StartCloud starts a simulated cloud with opts (DataDir defaults to a
// temporary directory) whose node agent joins env's API server, and stops
// it when the test ends.
func StartCloud(t testing.TB, env *testenv.Env, opts core.Options) *server.Server {
	t.Helper()
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	env.JoinThisAPIServer(&opts)
	srv, err := cloudsim.Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("starting the simulated cloud: %v", err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	return srv
}

// ManagerOptions are the options the integration tests' managers start
// with, for the test namespace ns of env's API server: no metrics or probe
// listeners, 4 workers per controller, the engine's waits shortened, a
// cache that sees only ns (the pools other tests left behind belong to
// other clouds), and workload clients with the manager's own limits (the
// workload cluster is the test API server itself, not a remote cluster).
// The provider's settings are the caller's.
func ManagerOptions(env *testenv.Env, ns string) manager.Options {
	return manager.Options{
		MetricsBindAddress:     "0",
		HealthProbeBindAddress: "0",
		Concurrency:            4,
		EngineTiming:           infrapool.Timing{Converging: 300 * time.Millisecond, Drain: 300 * time.Millisecond, QuotaRetry: 2 * time.Second},
		CacheNamespaces:        []string{ns},
		SkipNameValidation:     true,
		WorkloadQPS:            env.Config.QPS,
		WorkloadBurst:          env.Config.Burst,
	}
}

// Providers returns the configurations of the named providers pointed at
// cloud as `mpool up` points them, but with no credentials of the
// manager's own (pools use their cluster identities, whose Secrets are in
// the test namespace ns) and the simulated AWS's region as the default.
func Providers(cloud *server.Server, ns string, names ...string) provider.Configs {
	return provider.NewConfigs(names...).ForSimulatedCloud(kit.Simulated{
		FaceURL:           cloud.FaceURL,
		CAFile:            cloud.CAFile(),
		IdentityNamespace: ns,
		Accounts:          map[string]kit.Account{awsface.AWSFaceName: {Region: awsface.AWSDefaultRegion}},
	})
}

// Manager is an mpool manager running in a test.
type Manager struct {
	// ScaleGroup is the provider's ScaleGroup as its engine calls it
	// (counting requests by result).
	ScaleGroup *metrics.Instrumented
	// ScaleGroups are the ScaleGroups of every provider the manager
	// started, by provider name (ScaleGroup among them).
	ScaleGroups map[string]*metrics.Instrumented

	run *background
}

// StartManager builds a manager from opts against the API server of cfg
// and runs it until the test ends (or Stop). provider names the provider
// whose ScaleGroup the test observes; the test fails when the manager did
// not start it.
func StartManager(t testing.TB, cfg *rest.Config, opts manager.Options, provider string) *Manager {
	t.Helper()
	mgr, err := manager.New(context.Background(), rest.CopyConfig(cfg), opts)
	if err != nil {
		t.Fatalf("creating the manager: %v", err)
	}
	m := &Manager{ScaleGroups: map[string]*metrics.Instrumented{}}
	for _, p := range mgr.Providers {
		m.ScaleGroups[p.Provider.Name] = p.ScaleGroup
		if p.Provider.Name == provider {
			m.ScaleGroup = p.ScaleGroup
		}
	}
	if m.ScaleGroup == nil {
		t.Fatalf("the manager did not start the %s provider", provider)
	}
	m.run = runInBackground(t, func(ctx context.Context) {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "manager stopped: %v\n", err)
		}
	})
	return m
}

// Stop stops the manager and waits until it has stopped, as if the process
// had been killed between two reconciles. It is safe to call more than
// once.
func (m *Manager) Stop() { m.run.Stop() }

// AWSCLI returns the AWS CLI (an independent client of the simulated AWS and
// EKS), installing Debian's awscli when it is absent; it skips the test,
// saying why, only where it cannot be had.
func AWSCLI(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("aws"); err == nil {
		if exec.Command(p, "--version").Run() == nil {
			return p
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "sh", "-c", "apt-get install -y -q awscli || (apt-get update -q && apt-get install -y -q awscli)").CombinedOutput(); err != nil {
		t.Skipf("the AWS CLI is not installed and could not be (apt-get install awscli: %v):\n%s", err, out)
	}
	p, err := exec.LookPath("aws")
	if err != nil {
		t.Skipf("apt-get installed awscli but no aws command is on PATH: %v", err)
	}
	return p
}

// RunAWSCLI runs the AWS CLI cli (AWSCLI's) with args against the
// simulated cloud's face at endpoint, with the default account's key and
// region and no local configuration, and returns its JSON output, failing
// the test when it fails.
func RunAWSCLI(t testing.TB, cli, endpoint string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(cli, append([]string{"--endpoint-url", endpoint, "--region", awsface.AWSDefaultRegion, "--output", "json"}, args...)...)
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+awsface.AWSDefaultAccessKeyID, "AWS_SECRET_ACCESS_KEY="+awsface.AWSDefaultSecretAccessKey,
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PAGER=")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
		}
		t.Fatalf("aws %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// Manifest reads a manifest of the repository (path relative to its root)
// into objects of namespace ns.
func Manifest(t testing.TB, ns string, path ...string) []*unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"..", "..", ".."}, path...)...))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := examples.Objects(b, ns)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// CreateCluster creates the objects of a cluster manifest (path as
// Manifest's) in ns, its Cluster's controlPlaneEndpoint pointed at env's API
// server so that the cloud's instances join it, and registers env as the
// workload cluster of clusterName.
func CreateCluster(t testing.TB, env *testenv.Env, ns, clusterName string, path ...string) {
	t.Helper()
	CreateClusterObjects(t, env, ns, clusterName, Manifest(t, ns, path...))
}

// CreateClusterObjects is CreateCluster with the manifest's objects read
// (and changed) by the caller.
func CreateClusterObjects(t testing.TB, env *testenv.Env, ns, clusterName string, objs []*unstructured.Unstructured) {
	t.Helper()
	endpoint := env.ControlPlaneEndpoint(t)
	for _, obj := range objs {
		if obj.GetKind() == "Cluster" {
			_ = unstructured.SetNestedField(obj.Object, endpoint.Host, "spec", "controlPlaneEndpoint", "host")
			_ = unstructured.SetNestedField(obj.Object, int64(endpoint.Port), "spec", "controlPlaneEndpoint", "port")
		}
		if err := env.Client.Create(context.Background(), obj); err != nil {
			t.Fatalf("creating %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	env.RegisterWorkloadCluster(t, ns, clusterName)
}

// ConditionNotTrue returns nil when conditions hold t, not True, with reason
// and a message that contains every one of words, and says what differs
// otherwise: a condition that says what the user must change.
func ConditionNotTrue(conditions []metav1.Condition, t, reason string, words ...string) error {
	c := meta.FindStatusCondition(conditions, t)
	if c == nil || c.Status == metav1.ConditionTrue || c.Reason != reason {
		return fmt.Errorf("condition %s is %+v, want False or Unknown, %s", t, c, reason)
	}
	for _, w := range words {
		if !strings.Contains(c.Message, w) {
			return fmt.Errorf("condition %s's message %q does not mention %q", t, c.Message, w)
		}
	}
	return nil
}

// ConditionsTrue returns nil when conditions hold every one of types,
// True, and says which do not otherwise.
func ConditionsTrue(conditions []metav1.Condition, types ...string) error {
	var errs []error
	for _, t := range types {
		if c := meta.FindStatusCondition(conditions, t); c == nil || c.Status != metav1.ConditionTrue {
			errs = append(errs, fmt.Errorf("condition %s is %+v, want True", t, c))
		}
	}
	return errors.Join(errs...)
}

// WithReconcilerRateLimiting turns Cluster API's reconciler rate limiting
// on for one test (until it ends), for a test whose subject is what the
// MachineHealthCheck does at upstream's pace; call it before the test's
// manager starts. Tests that call it do not run in parallel.
func WithReconcilerRateLimiting(t testing.TB) {
	t.Helper()
	set := func(on bool) error {
		return capifeature.MutableGates.Set(fmt.Sprintf("%s=%t", capifeature.ReconcilerRateLimiting, on))
	}
	if err := set(true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set(false) })
}

// Main runs a package's tests against one control plane, which it stores
// in env (the package's TestMain), with the controllers' logs as
// MPOOL_TEST_LOG asks.
//
// Cluster API's reconciler rate limiting (its feature gate
// ReconcilerRateLimiting, beta and on by default, which the managers
// carry as upstream's controllers do) is off in these tests: it holds
// upstream's MachineHealthCheck controller to one reconcile of a check
// every 15 seconds, which only stretches every wait for the check (seeing
// the Machines, marking an unhealthy one, seeing it healthy again) and
// decides nothing the tests assert (WithReconcilerRateLimiting turns it
// on for a test that needs upstream's pace).
func Main(m *testing.M, env **testenv.Env) {
	ctrl.SetLogger(testenv.Logger())
	if err := capifeature.MutableGates.Set(string(capifeature.ReconcilerRateLimiting) + "=false"); err != nil {
		fmt.Fprintf(os.Stderr, "turning Cluster API's reconciler rate limiting off: %v\n", err)
		os.Exit(1)
	}
	os.Exit(testenv.Run(m, env))
}
