package managedcluster

import (
	"context"
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/mpool-dev/mpool/internal/testenv"
)

var env *testenv.Env

// TestMain starts the control plane and one manager running the
// AzureManagedCluster controller for every test.
func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	os.Exit(testenv.RunWith(m, &env, func(e *testenv.Env) (func(), error) {
		return e.RunManager(func(ctx context.Context, mgr ctrl.Manager) error {
			return (&Reconciler{Client: mgr.GetClient()}).SetupWithManager(ctx, mgr, controller.Options{})
		})
	}))
}
