package manager

import (
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	crmanager "sigs.k8s.io/controller-runtime/pkg/manager"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/mpool-dev/mpool/internal/controller/cluster"
	gatepolicy "github.com/mpool-dev/mpool/internal/controller/featuregate"
	"github.com/mpool-dev/mpool/internal/controller/kubeadmconfig"
	"github.com/mpool-dev/mpool/internal/controller/localpool"
	"github.com/mpool-dev/mpool/internal/controller/machinepool"
	"github.com/mpool-dev/mpool/internal/features"
	poolmetrics "github.com/mpool-dev/mpool/internal/metrics"
	"github.com/mpool-dev/mpool/internal/workload"
)

func cacheOptions(syncPeriod time.Duration) cache.Options {
	if syncPeriod <= 0 {
		return cache.Options{}
	}
	return cache.Options{SyncPeriod: &syncPeriod}
}

// setupControllers registers each controller with mgr. Controllers that the
// gates turn off are not registered at all.
func setupControllers(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	copts := controller.Options{MaxConcurrentReconciles: opts.Concurrency}
	poolsOn := opts.Gates.Enabled(features.MachinePool)

	// The gate is also enforced at admission: with MachinePool off, creating
	// one is refused by a ValidatingAdmissionPolicy that says so. Only the
	// leader writes it.
	direct, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return err
	}
	if err := mgr.Add(crmanager.RunnableFunc(func(ctx context.Context) error {
		if err := gatepolicy.Ensure(ctx, direct, poolsOn); err != nil {
			return fmt.Errorf("applying the MachinePool feature gate policy: %w", err)
		}
		<-ctx.Done()
		return nil
	})); err != nil {
		return err
	}

	workloads, err := workload.New(workload.Options{SecretReader: mgr.GetClient(), Scheme: mgr.GetScheme(),
		QPS: opts.WorkloadQPS, Burst: opts.WorkloadBurst})
	if err != nil {
		return err
	}
	if err := mgr.Add(workloads); err != nil {
		return err
	}
	if err := (&cluster.Reconciler{Client: mgr.GetClient(), ClusterCache: workloads, Clock: opts.Clock}).SetupWithManager(ctx, mgr, copts); err != nil {
		return fmt.Errorf("setting up the Cluster controller: %w", err)
	}
	if !poolsOn {
		ctrl.Log.WithName("setup").Info("MachinePool feature gate is off: pool controllers not started")
		return nil
	}
	if err := (&kubeadmconfig.Reconciler{Workload: workloads, Clock: opts.Clock}).SetupWithManager(ctx, mgr, copts); err != nil {
		return fmt.Errorf("setting up the KubeadmConfig controller: %w", err)
	}
	if err := (&machinepool.Reconciler{Client: mgr.GetClient(), ClusterCache: workloads, Clock: opts.Clock}).SetupWithManager(ctx, mgr, copts); err != nil {
		return fmt.Errorf("setting up the MachinePool controller: %w", err)
	}
	// Pool metrics read what the MachinePool controller caches.
	if err := poolmetrics.AddToManager(mgr, crmetrics.Registry); err != nil {
		return err
	}
	if opts.LocalCloudURL == "" {
		return nil
	}
	pool, err := localpool.NewLocalMachinePoolReconciler(localpool.Options{
		CloudURL:                opts.LocalCloudURL,
		Workload:                workloads,
		SkipModelReconciliation: opts.Gates.Enabled(features.SkipMachinePoolModelReconciliation),
		JoinTimeout:             opts.NodeStartupTimeout,
		Clock:                   opts.Clock,
	})
	if err != nil {
		return err
	}
	if err := pool.SetupWithManager(ctx, mgr, copts); err != nil {
		return fmt.Errorf("setting up the LocalMachinePool controller: %w", err)
	}
	if err := (&localpool.LocalMachinePoolMachineReconciler{}).SetupWithManager(ctx, mgr, copts); err != nil {
		return fmt.Errorf("setting up the LocalMachinePoolMachine controller: %w", err)
	}
	return nil
}
