package azure

import (
	"testing"
	"time"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/azureface"
	"github.com/mpool-dev/mpool/sim/server"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// The names seed 000's example and examples/azure/cluster.yaml use.
var (
	clusterName = itest.Azure.ClusterName
	poolName    = itest.Azure.PoolName
)

// startCloud starts a simulated cloud whose VMs join the test API server;
// bootDelay is how long a VM takes to boot.
func startCloud(t testing.TB, bootDelay time.Duration, faces ...core.Face) *server.Server {
	t.Helper()
	return itest.Azure.StartCloud(t, env, itest.CloudOptions{BootDelay: bootDelay, Faces: faces})
}

// fixture is one test's namespace (itest.Azure's fixture): the Cluster
// capz, its AzureCluster and identity (examples/azure/cluster.yaml) and
// the workload cluster's Secrets, the workload cluster being the test API
// server.
type fixture struct{ *itest.Fixture }

func newFixture(t testing.TB, cloud *server.Server) *fixture {
	t.Helper()
	return &fixture{itest.NewFixture(t, env, itest.Azure, cloud)}
}

// start starts a simulated cloud whose VMs boot in bootDelay, a fixture in
// it and a manager (tune as itest.Fixture.StartManager's).
func start(t testing.TB, bootDelay time.Duration, tune ...func(*manager.Options)) (*fixture, *itest.Manager) {
	t.Helper()
	f, m := itest.Start(t, env, itest.Azure, itest.CloudOptions{BootDelay: bootDelay}, tune...)
	return &fixture{f}, m
}

// vmss is the pool's scale set name.
func (f *fixture) vmss() string { return itest.ScaleSet(f.Fixture) }

// updateAzurePool changes the AzureMachinePool with a merge patch.
func (f *fixture) updateAzurePool(mutate func(*infrav1.AzureMachinePool)) {
	f.T.Helper()
	itest.UpdatePool(f.Fixture, mutate)
}

// ops returns how many requests of operation op the Azure face answered
// with a status below 300.
func (f *fixture) ops(op string) int64 { return f.Ops(azureface.AzureFaceName, op) }
