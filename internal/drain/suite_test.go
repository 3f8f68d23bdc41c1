package drain_test

import (
	"os"
	"testing"

	"github.com/mpool-dev/mpool/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }
