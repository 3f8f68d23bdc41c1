package machinehealthcheck

import (
	"context"
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"sigs.k8s.io/cluster-api/controllers/clustercache"
	mhc "sigs.k8s.io/cluster-api/core/reconcilers/machinehealthcheck"
	"sigs.k8s.io/cluster-api/util/index"
)

// What upstream's MachineHealthCheck controller and its cluster cache need
// (the markers of upstream's reconciler, and the Clusters and kubeconfig
// Secrets the cache reads).
//
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machinehealthchecks;machinehealthchecks/status;machinehealthchecks/finalizers,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines;machines/status,verbs=get;list;watch;patch;update
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// UserAgent is the user agent of the workload-cluster clients of upstream's
// cluster cache.
const UserAgent = "mpool-machinehealthcheck"

// Setup registers upstream's cluster cache and MachineHealthCheck controller
// with mgr, and the Machine index by Node name the controller reads.
func Setup(ctx context.Context, mgr ctrl.Manager, opts controller.Options) error {
	if err := index.ByMachineNode(ctx, mgr); err != nil {
		return fmt.Errorf("indexing Machines by Node name: %w", err)
	}
	cc, err := clustercache.SetupWithManager(ctx, mgr, clustercache.Options{
		SecretClient: mgr.GetClient(),
		Client:       clustercache.ClientOptions{UserAgent: UserAgent},
	}, opts)
	if err != nil {
		return fmt.Errorf("setting up the workload cluster cache of the MachineHealthCheck controller: %w", err)
	}
	if err := (&mhc.Reconciler{Client: mgr.GetClient(), ClusterCache: cc}).SetupWithManager(ctx, mgr, opts); err != nil {
		return fmt.Errorf("setting up the MachineHealthCheck controller: %w", err)
	}
	return nil
}
