package cli

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	corev1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/examples"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/provider"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/cloudsim"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/sim/face/azureface"
	"github.com/mpool-dev/mpool/sim/face/eksface"
	"github.com/mpool-dev/mpool/sim/nodeagent"
	"github.com/mpool-dev/mpool/templates"
)

// managerStarted: TestGeneratedPoolsRun ran in this process.
var managerStarted bool

// TestGeneratedPoolsRun is the promise of the flavors: with no variables
// set, `mpool generate cluster demo -i INFRA -f FLAVOR | kubectl apply -f -`
// under `mpool up` gives a Running pool, for the local flavor and for every
// azure and aws flavor (EKS's included). It sets up what `mpool up` does
// around the test API server (Cluster default/local, the simulated cloud
// with its Azure, AWS and EKS faces and the EKS cluster mpool-eks, the
// manager pointed at them, the sandboxClusters controller) and applies the
// generated objects as they are.
func TestGeneratedPoolsRun(t *testing.T) {
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
	cloud, err := cloudsim.Start(ctx, core.Options{
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
	// As runUp points the providers at the simulated cloud.
	for _, face := range []string{azureface.AzureFaceName, awsface.AWSFaceName, eksface.EKSFaceName} {
		if cloud.FaceURL(face) == "" {
			t.Fatalf("the simulated cloud has no %s face", face)
		}
	}
	mo.Providers = provider.NewConfigs().ForSimulatedCloud(simulatedCloud(cloud, "default"))
	// As runUp prepares what the examples name (its EKS cluster, which the
	// eks flavor's defaults name).
	if err := cloud.PrepareSandbox(""); err != nil {
		t.Fatalf("preparing the simulated cloud: %v", err)
	}
	mgr, err := manager.New(ctx, env.Config, mo)
	if err != nil {
		t.Fatal(err)
	}
	if err := setupSandboxClusters(mgr, env.ControlPlane); err != nil {
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

	// The local pool needs a name of its own: it must be in namespace
	// default, beside the Cluster local, which every run of this test
	// shares. The cloud flavors bring their own Cluster: each goes to a
	// fresh namespace.
	type run struct {
		infrastructure, flavor, namespace, name string
		replicas                                int32
	}
	runs := []run{{infrastructure: "local", flavor: "machinepool", namespace: "default",
		name: fmt.Sprintf("demo-%d", time.Now().UnixNano()%1_000_000), replicas: 3}}
	for _, f := range templates.Flavors() {
		if f.Infrastructure == "local" || f.Name == "aks" {
			// The aks flavor runs as the sample below: its agent pools
			// are named pool0 and pool1 in the one AKS cluster `up`
			// registers for it.
			continue
		}
		runs = append(runs, run{infrastructure: f.Infrastructure, flavor: f.Name, namespace: env.NewNamespace(t), name: "demo", replicas: 2})
	}
	// The flavors' MachinePool: CAPA's EKS flavor names it <cluster>-pool-0.
	poolName := func(r run) string {
		switch r.flavor {
		case "eks-managedmachinepool":
			return r.name + "-pool-0"
		case "aks":
			return r.name + "-pool0"
		}
		return r.name + "-mp-0"
	}
	for _, r := range runs {
		g := runGenerate(t, nil, "", "generate", "cluster", r.name, "-i", r.infrastructure, "--flavor", r.flavor, "--target-namespace", r.namespace)
		if g.err != nil {
			t.Fatalf("generate %s %s: %v", r.infrastructure, r.flavor, g.err)
		}
		objs, err := examples.Objects([]byte(g.stdout), "")
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range objs {
			if err := env.Client.Create(ctx, u); err != nil {
				t.Fatalf("%s %s: creating %s %s: %v", r.infrastructure, r.flavor, u.GetKind(), u.GetName(), err)
			}
		}
	}
	// `mpool up --sample eks`: the eks flavor with the sample's own
	// version, one minor behind the EKS cluster's.
	if err := applySample(ctx, env.Client, samples["eks"]); err != nil {
		t.Fatal(err)
	}
	runs = append(runs, run{infrastructure: "aws", flavor: "eks-managedmachinepool", namespace: "default", name: samples["eks"].cluster, replicas: 3})
	// `mpool up --sample aks`: CAPZ's aks flavor in the AKS cluster `up`
	// registers for it.
	if err := applySample(ctx, env.Client, samples["aks"]); err != nil {
		t.Fatal(err)
	}
	runs = append(runs, run{infrastructure: "azure", flavor: "aks", namespace: "default", name: samples["aks"].cluster, replicas: 3})
	for _, r := range runs {
		testenv.Eventually(t, 2*time.Minute, func() error {
			mp := &corev1beta1.MachinePool{}
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: r.namespace, Name: poolName(r)}, mp); err != nil {
				return err
			}
			if mp.Status.Phase != string(corev1beta1.MachinePoolPhaseRunning) || ptr.Deref(mp.Status.ReadyReplicas, 0) != r.replicas {
				return fmt.Errorf("%s %s: pool %s/%s: phase %q, %d ready replicas; want Running with %d (conditions %v)",
					r.infrastructure, r.flavor, r.namespace, poolName(r), mp.Status.Phase, ptr.Deref(mp.Status.ReadyReplicas, 0), r.replicas, mp.Status.Conditions)
			}
			return nil
		})
	}
}
