package eks

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"

	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/sim/face/eksface"
	"github.com/mpool-dev/mpool/sim/server"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// The names examples/eks uses.
var (
	clusterName = itest.EKS.ClusterName
	poolName    = itest.EKS.PoolName
)

const converge = 2 * time.Minute

// startCloud starts a simulated cloud whose instances join the test API
// server, with the simulated EKS cluster the example names at version.
func startCloud(t testing.TB, version string) *server.Server {
	t.Helper()
	return startCloudWith(t, version)
}

// startCloudWith is startCloud with faces configured otherwise (an EKS
// face with a shorter eviction timeout).
func startCloudWith(t testing.TB, version string, faces ...core.Face) *server.Server {
	t.Helper()
	return startCloudWithBoot(t, version, 200*time.Millisecond, faces...)
}

// startCloudWithBoot is startCloudWith with instances that boot in
// bootDelay.
func startCloudWithBoot(t testing.TB, version string, bootDelay time.Duration, faces ...core.Face) *server.Server {
	t.Helper()
	return itest.EKS.StartCloud(t, env, itest.CloudOptions{Version: version, BootDelay: bootDelay, Faces: faces})
}

// start starts a simulated cloud with the simulated EKS cluster at
// version, a fixture in it and a manager (tune as
// itest.Fixture.StartManager's).
func start(t testing.TB, version string, tune ...func(*manager.Options)) (*fixture, *itest.Manager) {
	t.Helper()
	f := newFixture(t, startCloud(t, version))
	return f, f.StartManager(tune...)
}

// startSeeded is start with the seed's pool applied and converged at its
// two nodes of v1.31.0.
func startSeeded(t testing.TB, version string, tune ...func(*manager.Options)) (*fixture, *itest.Manager) {
	t.Helper()
	f, m := start(t, version, tune...)
	f.ApplySeed()
	f.WaitConverged(2, "v1.31.0", converge)
	return f, m
}

// fixture is one test's namespace (itest.EKS's fixture) with
// examples/eks/cluster.yaml applied, the workload cluster being the test
// API server, and an EKS client of the simulated EKS.
type fixture struct {
	*itest.Fixture
	eks *awseks.Client
}

func newFixture(t testing.TB, cloud *server.Server) *fixture {
	t.Helper()
	cfg := awsface.DefaultSDKConfig(cloud.FaceURL(eksface.EKSFaceName))
	cfg.RetryMaxAttempts = 1
	return &fixture{Fixture: itest.NewFixture(t, env, itest.EKS, cloud), eks: awseks.NewFromConfig(cfg)}
}

// nodegroup is the pool's node group name.
func (f *fixture) nodegroup() string { return itest.Nodegroup(f.Fixture) }

// describe returns the node group as EKS reports it, with the error.
func (f *fixture) describe() (*awseks.DescribeNodegroupOutput, error) {
	return f.eks.DescribeNodegroup(f.Ctx, &awseks.DescribeNodegroupInput{ClusterName: aws.String(eksface.EKSDefaultClusterName), NodegroupName: aws.String(f.nodegroup())})
}
