// Package testenv runs one embedded control plane (etcd and a real
// kube-apiserver, see internal/kubeenv) per test package, with mpool's CRDs
// installed, and offers the small helpers integration tests share.
//
//	var env *testenv.Env
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/config/crd"
	"github.com/mpool-dev/mpool/internal/admission/flexibleversion"
	"github.com/mpool-dev/mpool/internal/conversion"
	"github.com/mpool-dev/mpool/internal/kubeenv"
	mpoolscheme "github.com/mpool-dev/mpool/internal/scheme"
)

// Env is a running control plane with clients for it.
type Env struct {
	// Config is an admin (system:masters) client configuration.
	Config *rest.Config
	// Client is a controller-runtime client (no cache) with Scheme.
	Client client.Client
	// Scheme knows client-go's types and every mpool API group.
	Scheme *runtime.Scheme
	// Kubeconfig is an admin kubeconfig for this API server; tests use it
	// as a workload cluster's <cluster>-kubeconfig Secret.
	Kubeconfig []byte
	// CAData is the cluster CA certificate (PEM).
	CAData []byte
	// ControlPlane is the running etcd and kube-apiserver.
	ControlPlane *kubeenv.ControlPlane
}

// APIServerArgsEnv names an environment variable whose space-separated
// words are added to the test kube-apiserver's flags, e.g.
// MPOOL_TEST_APISERVER_ARGS=--profiling=true to profile it in a benchmark.
const APIServerArgsEnv = "MPOOL_TEST_APISERVER_ARGS"

// Options tune the control plane of Start.
type Options struct {
	// CRDs, when set, chooses which of mpool's CRDs are installed (a test
	// beside upstream Cluster API installs upstream's own core and
	// bootstrap CRDs instead of mpool's copies).
	CRDs func(*apiextensionsv1.CustomResourceDefinition) bool
}

// Start starts a control plane with mpool's CRDs installed.
func Start(ctx context.Context) (*Env, error) { return StartWith(ctx, Options{}) }

// StartWith starts a control plane with the CRDs o chooses installed.
func StartWith(ctx context.Context, o Options) (*Env, error) {
	all, err := crd.CRDs()
	if err != nil {
		return nil, err
	}
	crds := all[:0]
	for _, c := range all {
		if o.CRDs == nil || o.CRDs(c) {
			crds = append(crds, c)
		}
	}
	cp, err := kubeenv.Start(ctx, kubeenv.Options{Progress: os.Stderr, CRDs: crds, Conversion: conversion.ForConfig,
		Validation:         flexibleversion.Embedded,
		ExtraAPIServerArgs: strings.Fields(os.Getenv(APIServerArgsEnv))})
	if err != nil {
		return nil, err
	}
	env, err := newEnv(cp)
	if err != nil {
		_ = cp.Stop()
		return nil, err
	}
	return env, nil
}

func newEnv(cp *kubeenv.ControlPlane) (*Env, error) {
	cfg := cp.RESTConfig()
	cl, err := mpoolscheme.NewClient(cfg)
	if err != nil {
		return nil, err
	}
	scheme := cl.Scheme()
	kc, err := cp.Kubeconfig()
	if err != nil {
		return nil, err
	}
	return &Env{Config: cfg, Client: cl, Scheme: scheme, Kubeconfig: kc, CAData: cp.CAData(), ControlPlane: cp}, nil
}

// Stop stops the control plane.
func (e *Env) Stop() error { return e.ControlPlane.Stop() }

// Run starts a control plane, stores it in *env, runs the package's tests and
// stops it. It returns the exit code for os.Exit.
func Run(m *testing.M, env **Env) int { return RunWith(m, env, nil) }

// RunWith is Run with a package's own setup once the control plane runs
// (installing policies, starting a shared manager): setup's error fails the
// package, and the teardown it returns (if any) runs after the tests and
// before the control plane stops, so that no watch holds it up.
func RunWith(m *testing.M, env **Env, setup func(*Env) (teardown func(), err error)) int {
	return RunWithOptions(m, env, Options{}, setup)
}

// RunWithOptions is RunWith with a control plane tuned by o.
func RunWithOptions(m *testing.M, env **Env, o Options, setup func(*Env) (teardown func(), err error)) int {
	if err := serveDebug(); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	e, err := StartWith(ctx, o)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: starting the control plane: %v\n", err)
		return 1
	}
	*env = e
	defer func() {
		if err := e.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "testenv: stopping the control plane: %v\n", err)
		}
	}()
	if setup != nil {
		teardown, err := setup(e)
		if err != nil {
			fmt.Fprintf(os.Stderr, "testenv: setting up the package: %v\n", err)
			return 1
		}
		if teardown != nil {
			defer teardown()
		}
	}
	return m.Run()
}

// NewNamespace creates a namespace with a random name for one test.
// Namespaces are not deleted: no namespace controller runs to finalize them,
// and each package's control plane is thrown away at the end.
func (e *Env) NewNamespace(t testing.TB) string {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "test-" + hex.EncodeToString(b)}}
	if err := e.Client.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	return ns.Name
}

// Eventually polls cond every 50ms until it returns nil, failing t with the
// last error once timeout has passed.
func Eventually(t testing.TB, timeout time.Duration, cond func() error) {
	t.Helper()
	EventuallyEvery(t, timeout, 50*time.Millisecond, cond)
}

// EventuallyEvery is Eventually polling every interval: for a condition
// whose check costs the process under test (a metrics gather reads every
// pool).
func EventuallyEvery(t testing.TB, timeout, interval time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s: %v", timeout, err)
		}
		time.Sleep(interval)
	}
}
