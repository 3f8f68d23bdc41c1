package eks

import (
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/mpool-dev/mpool/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(testenv.Logger())
	os.Exit(testenv.Run(m, &env))
}
