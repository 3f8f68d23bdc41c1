package aks

import (
	"testing"

	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// env is the package's control plane, started once for all its tests.
var env *testenv.Env

func TestMain(m *testing.M) { itest.Main(m, &env) }
