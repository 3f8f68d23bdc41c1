package cluster

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

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
	return env.RunManager(func(ctx context.Context, mgr ctrl.Manager) error {
		var err error
		cc, err = workload.New(workload.Options{SecretReader: mgr.GetClient(), Scheme: env.Scheme,
			ConnectTimeout: time.Second, RequestTimeout: 2 * time.Second, SyncTimeout: 5 * time.Second})
		if err != nil {
			return err
		}
		if err := mgr.Add(cc); err != nil {
			return err
		}
		r := &Reconciler{Client: mgr.GetClient(), ClusterCache: cc, PlacementKinds: []schema.GroupKind{infrav1.GroupVersion.WithKind(infrav1.AWSClusterKind).GroupKind()}}
		return r.SetupWithManager(ctx, mgr, controller.Options{})
	})
}
