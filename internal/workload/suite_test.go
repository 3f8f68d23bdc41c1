package workload

import (
	"os"
	"testing"

	"github.com/mpool-dev/mpool/internal/testenv"
)

// env is this package's control plane. It plays both the management cluster
// (the kubeconfig Secrets) and the workload cluster (the Nodes).
var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }
