package managedcluster

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/mpool-dev/mpool/internal/testenv"
)

var env *testenv.Env

// TestMain starts the control plane and one manager running the
// AzureManagedCluster controller for every test.
func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	os.Exit(testenv.RunWith(m, &env, func(*testenv.Env) (func(), error) { return startManager() }))
}

func startManager() (func(), error) {
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := (&Reconciler{Client: mgr.GetClient()}).SetupWithManager(ctx, mgr, controller.Options{}); err != nil {
		cancel()
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "manager stopped: %v\n", err)
		}
	}()
	return func() { cancel(); <-done }, nil
}
