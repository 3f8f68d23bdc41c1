package peer

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/mpool-dev/mpool/internal/kubeenv"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/cloudsim"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/sim/server"
	"github.com/mpool-dev/mpool/test/interop"
)

// The package's control plane (CAPA's: none of mpool's CRDs), upstream
// Cluster API's managers, the simulated AWS and CAPA's manager pointed at
// it: the peer; a second control plane with mpool's CRDs and mpool's
// manager pointed at the same simulated AWS: mpool.
var (
	env      *testenv.Env
	up       *interop.Upstream
	cloud    *server.Server
	capa     *CAPA
	mpoolEnv *testenv.Env
	mpool    *Mpool
	peerSys  *System
	mpoolSys *System
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(testenv.Logger())
	none := func(*apiextensionsv1.CustomResourceDefinition) bool { return false }
	os.Exit(testenv.RunWithOptions(m, &env, testenv.Options{CRDs: none}, setup))
}

// setup starts what the package's tests share, in order: upstream's core
// and kubeadm bootstrap managers, mpool's control plane, the simulated AWS
// whose instances join either API server (no boot delay), CAPA's manager
// pointed at it and CAPA's default controller identity, and mpool's
// manager pointed at it.
func setup(e *testenv.Env) (func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), 55*time.Minute)
	defer cancel()
	if err := kubeenv.InstallCRDs(ctx, e.Config, []*apiextensionsv1.CustomResourceDefinition{interop.ControlPlaneCRD()}); err != nil {
		return nil, err
	}
	var teardowns []func()
	stop := func() {
		for i := len(teardowns) - 1; i >= 0; i-- {
			teardowns[i]()
		}
	}
	var err error
	if up, err = interop.Start(ctx, e, manager.ModeProviders); err != nil {
		return nil, err
	}
	teardowns = append(teardowns, up.Stop)
	// mpool serves the kinds CAPA does: a control plane of its own.
	if mpoolEnv, err = testenv.StartWith(ctx, testenv.Options{}); err != nil {
		stop()
		return nil, fmt.Errorf("starting mpool's control plane: %w", err)
	}
	teardowns = append(teardowns, func() { _ = mpoolEnv.Stop() })
	if err := kubeenv.InstallCRDs(ctx, mpoolEnv.Config, []*apiextensionsv1.CustomResourceDefinition{interop.ControlPlaneCRD()}); err != nil {
		stop()
		return nil, err
	}
	dataDir, err := os.MkdirTemp("", "mpool-peer-cloud-")
	if err != nil {
		stop()
		return nil, err
	}
	teardowns = append(teardowns, func() { _ = os.RemoveAll(dataDir) })
	opts := core.Options{Seed: 23, DataDir: dataDir, DefaultSimulation: &core.Simulation{}}
	e.JoinThisAPIServer(&opts)
	// An instance joins the API server its bootstrap data names.
	opts.NodeAgent.Credentials = append(opts.NodeAgent.Credentials, mpoolEnv.Config)
	// The cloud lives as long as the package's tests, not setup's context.
	if cloud, err = cloudsim.Start(context.Background(), opts); err != nil {
		stop()
		return nil, fmt.Errorf("starting the simulated cloud: %w", err)
	}
	teardowns = append(teardowns, func() { _ = cloud.Stop() })
	if capa, err = StartCAPA(ctx, e, cloud.FaceURL(awsface.AWSFaceName), 30*time.Second); err != nil {
		stop()
		return nil, err
	}
	teardowns = append(teardowns, capa.Stop)
	if err := e.Client.Create(ctx, Identity()); err != nil {
		stop()
		return nil, fmt.Errorf("creating CAPA's default identity: %w", err)
	}
	if mpool, err = StartMpool(ctx, mpoolEnv, cloud.FaceURL(awsface.AWSFaceName), 30*time.Second); err != nil {
		stop()
		return nil, err
	}
	teardowns = append(teardowns, mpool.Stop)
	peerSys, mpoolSys = PeerSystem(e, up, capa), MpoolSystem(mpoolEnv, mpool)
	return stop, nil
}
