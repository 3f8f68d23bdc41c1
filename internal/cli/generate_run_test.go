package cli

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1beta1 "github.com/mpool-dev/mpool/api/core/v1beta1"
	"github.com/mpool-dev/mpool/examples"
	"github.com/mpool-dev/mpool/internal/cloudsim"
	"github.com/mpool-dev/mpool/internal/cloudsim/nodeagent"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/testenv"
)

// managerStarted: TestGenerateLocalPoolRuns ran in this process.
var managerStarted bool

// TestGenerateLocalPoolRuns is the promise of the local flavor: with no
// variables set, `mpool generate cluster demo | kubectl apply -f -` under
// `mpool up` gives a Running pool. It sets up what `mpool up` does around the
// test API server (Cluster default/local, the simulated cloud, the manager)
// and applies the generated objects as they are.
func TestGenerateLocalPoolRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the simulated cloud and the manager")
	}
	if managerStarted {
		t.Skip("the manager's controllers start once per process (controller-runtime wants unique controller names); -count=1 runs this")
	}
	managerStarted = true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := registerLocalCluster(ctx, env.Client, env.ControlPlane); err != nil {
		t.Fatal(err)
	}
	cloud, err := cloudsim.Start(ctx, cloudsim.Options{
		DataDir:   t.TempDir(),
		NodeAgent: nodeagent.Options{Credentials: []*rest.Config{env.Config}},
	})
	if err != nil {
		t.Fatalf("starting the simulated cloud: %v", err)
	}
	defer func() {
		if err := cloud.Stop(); err != nil {
			t.Errorf("stopping the simulated cloud: %v", err)
		}
	}()
	mo := manager.DefaultOptions()
	mo.MetricsBindAddress, mo.HealthProbeBindAddress = "0", "0"
	mo.LocalCloudURL = cloud.URL()
	mgr, err := manager.New(ctx, env.Config, mo)
	if err != nil {
		t.Fatal(err)
	}
	mgrCtx, stopMgr := context.WithCancel(ctx)
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(mgrCtx) }()
	defer func() {
		stopMgr()
		if err := <-mgrDone; err != nil {
			t.Errorf("the manager: %v", err)
		}
	}()

	// A name of its own: the pool must be in namespace default, beside the
	// Cluster local, which every run of this test shares.
	name := fmt.Sprintf("demo-%d", time.Now().UnixNano()%1_000_000)
	r := runGenerate(t, nil, "", "generate", "cluster", name, "--flavor", "machinepool")
	if r.err != nil {
		t.Fatalf("generate: %v", r.err)
	}
	objs, err := examples.Objects([]byte(r.stdout), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range objs {
		if err := env.Client.Create(ctx, u); err != nil {
			t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	testenv.Eventually(t, 2*time.Minute, func() error {
		mp := &corev1beta1.MachinePool{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: name + "-mp-0"}, mp); err != nil {
			return err
		}
		if mp.Status.Phase != string(corev1beta1.MachinePoolPhaseRunning) || mp.Status.ReadyReplicas != 3 {
			return fmt.Errorf("pool %s-mp-0: phase %q, %d ready replicas; want Running with 3", name, mp.Status.Phase, mp.Status.ReadyReplicas)
		}
		return nil
	})
}
