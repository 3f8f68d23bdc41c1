package aws

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/sim/server"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// The names seed 004's example and examples/aws/cluster.yaml use.
var (
	clusterName = itest.AWS.ClusterName
	poolName    = itest.AWS.PoolName
)

// identity is the AWSClusterStaticIdentity examples/aws/cluster.yaml
// creates, and its Secret's name.
const identity = "capa-static-identity"

const (
	// seedVersion is the version seed 004's MachinePool asks for.
	seedVersion = "v1.16.8"
	converge    = 2 * time.Minute
)

// startCloud starts a simulated cloud whose instances join the test API
// server; bootDelay is how long an instance takes to boot.
func startCloud(t testing.TB, bootDelay time.Duration) *server.Server {
	t.Helper()
	return itest.AWS.StartCloud(t, env, itest.CloudOptions{BootDelay: bootDelay})
}

// fixture is one test's namespace (itest.AWS's fixture): the Cluster capa,
// its AWSCluster, static identity and Secret (examples/aws/cluster.yaml),
// the workload cluster being the test API server.
type fixture struct{ *itest.Fixture }

func newFixture(t testing.TB, cloud *server.Server) *fixture {
	t.Helper()
	return &fixture{itest.NewFixture(t, env, itest.AWS, cloud)}
}

// start starts a simulated cloud whose instances boot in bootDelay, a
// fixture in it and a manager (tune as itest.Fixture.StartManager's).
func start(t testing.TB, bootDelay time.Duration, tune ...func(*manager.Options)) (*fixture, *itest.Manager) {
	t.Helper()
	f, m := itest.Start(t, env, itest.AWS, itest.CloudOptions{BootDelay: bootDelay}, tune...)
	return &fixture{f}, m
}

// asg is the pool's Auto Scaling Group name.
func (f *fixture) asg() string { return itest.ASG(f.Fixture) }

// updateAWSPool changes the AWSMachinePool with a merge patch.
func (f *fixture) updateAWSPool(mutate func(*infrav1.AWSMachinePool)) {
	f.T.Helper()
	itest.UpdatePool(f.Fixture, mutate)
}

// waitConverged waits until the pool has converged with n instances on
// version (itest.Fixture.Converged).
func (f *fixture) waitConverged(n int, version string) {
	f.T.Helper()
	f.WaitConverged(n, version, converge)
}

// waitRolled waits until none of the instances in before is left and the
// pool has converged again.
func (f *fixture) waitRolled(before []string, n int, version string) {
	f.T.Helper()
	f.WaitRolled(before, n, version, converge)
}

// queryForm reads the AWS query API form (Action and parameters) of the
// manager's request req, leaving its body readable for the transport: an
// empty form for a request that is not a POST with a body, or whose body
// is not a form.
func queryForm(req *http.Request) (url.Values, error) {
	if req.Body == nil || req.Method != http.MethodPost {
		return url.Values{}, nil
	}
	b, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(b))
	form, err := url.ParseQuery(string(b))
	if err != nil {
		return url.Values{}, nil
	}
	return form, nil
}

// ops returns how many requests of operation op the AWS face answered
// with a status below 300.
func (f *fixture) ops(op string) int64 { return f.Ops(awsface.AWSFaceName, op) }

// deletePoolAndWaitGone deletes the MachinePool and waits until nothing
// of it is left (itest.Fixture.DeletePoolAndWaitGone), launch templates
// included.
func (f *fixture) deletePoolAndWaitGone() {
	f.T.Helper()
	f.DeletePoolAndWaitGone(converge)
	if lts := f.launchTemplates(); len(lts) > 0 {
		f.T.Errorf("launch templates left: %v", lts)
	}
}
