package local

import (
	"os"
	"strconv"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/mpool-dev/mpool/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(testLogger())
	os.Exit(testenv.Run(m, &env))
}

// testLogger logs to stderr when MPOOL_TEST_LOG is a verbosity (0, 1, ...),
// and nowhere otherwise.
func testLogger() logr.Logger {
	v, err := strconv.Atoi(os.Getenv("MPOOL_TEST_LOG"))
	if err != nil {
		return logr.Discard()
	}
	return textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(v), textlogger.Output(os.Stderr)))
}
