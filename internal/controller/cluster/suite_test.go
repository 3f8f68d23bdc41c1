package cluster

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/internal/workload"
)

var (
	env *testenv.Env
	cc  *workload.ClusterCache
)

// TestMain starts the control plane and one manager running the Cluster
// controller for every test, and stops the manager before the control plane.
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
	cc, err = workload.New(workload.Options{SecretReader: mgr.GetClient(), Scheme: env.Scheme,
		ConnectTimeout: time.Second, RequestTimeout: 2 * time.Second, SyncTimeout: 5 * time.Second})
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(cc); err != nil {
		return nil, err
	}
	r := &Reconciler{Client: mgr.GetClient(), ClusterCache: cc, PlacementKinds: []schema.GroupKind{infrav1.GroupVersion.WithKind(infrav1.AWSClusterKind).GroupKind()}}
	ctx, cancel := context.WithCancel(context.Background())
	if err := r.SetupWithManager(ctx, mgr, controller.Options{}); err != nil {
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
