package manager

import (
	"context"
	"fmt"
	"slices"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/config/crd"
	"github.com/mpool-dev/mpool/internal/admission"
	"github.com/mpool-dev/mpool/internal/conversion"
	"github.com/mpool-dev/mpool/internal/provider/contract"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	crmanager "sigs.k8s.io/controller-runtime/pkg/manager"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	gatepolicy "github.com/mpool-dev/mpool/internal/admission/featuregate"
	"github.com/mpool-dev/mpool/internal/controller/cluster"
	"github.com/mpool-dev/mpool/internal/controller/infrapool"
	"github.com/mpool-dev/mpool/internal/controller/kubeadmconfig"
	"github.com/mpool-dev/mpool/internal/controller/machinehealthcheck"
	"github.com/mpool-dev/mpool/internal/controller/machinepool"
	"github.com/mpool-dev/mpool/internal/controller/managedcluster"
	"github.com/mpool-dev/mpool/internal/controller/priority"
	"github.com/mpool-dev/mpool/internal/features"
	"github.com/mpool-dev/mpool/internal/fieldowners"
	poolmetrics "github.com/mpool-dev/mpool/internal/metrics"
	"github.com/mpool-dev/mpool/internal/provider"
	"github.com/mpool-dev/mpool/internal/workload"
)

// cacheOptions are the manager cache's options. The cache keeps no managed
// fields (at 10,000 instances they are a large part of the Machines and
// per-instance objects it holds), but for the objects owners would move
// (package fieldowners): their controllers read them to move them once.
func cacheOptions(syncPeriod time.Duration, namespaces []string, owners *fieldowners.Upgrader) cache.Options {
	o := cache.Options{DefaultTransform: owners.Transform()}
	if syncPeriod > 0 {
		o.SyncPeriod = &syncPeriod
	}
	if len(namespaces) > 0 {
		o.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			o.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return o
}

// setupControllers registers each controller with mgr, the providers' through
// the provider registry, and returns the providers it started. Controllers
// that the gates turn off are not registered at all.
func setupControllers(ctx context.Context, mgr ctrl.Manager, opts Options, owners *fieldowners.Upgrader) ([]Running, error) {
	copts := controller.Options{MaxConcurrentReconciles: opts.Concurrency}
	poolsOn := opts.Gates.Enabled(features.MachinePool)

	// The gate is also enforced at admission: with MachinePool off, creating
	// one is refused by a ValidatingAdmissionPolicy that says so. Only the
	// leader writes it.
	direct, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(crmanager.RunnableFunc(func(ctx context.Context) error {
		// Beside upstream core, its MachinePool gate and webhook decide.
		if opts.Mode.RunsMachinePools() {
			if err := gatepolicy.Ensure(ctx, direct, poolsOn); err != nil {
				return fmt.Errorf("applying the MachinePool feature gate policy: %w", err)
			}
		}
		if err := applyPolicies(ctx, direct, opts.Mode); err != nil {
			return err
		}
		<-ctx.Done()
		return nil
	})); err != nil {
		return nil, err
	}

	workloads, err := workload.New(workload.Options{SecretReader: mgr.GetClient(), Scheme: mgr.GetScheme(),
		QPS: opts.WorkloadQPS, Burst: opts.WorkloadBurst, WrapTransport: opts.WorkloadWrapTransport})
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(workloads); err != nil {
		return nil, err
	}
	log := ctrl.Log.WithName("setup")
	registry := opts.Registry
	if registry == nil {
		registry = provider.All()
	}
	if opts.Mode.RunsClusters() {
		var placement []schema.GroupKind
		for _, p := range registry {
			if k := p.Adapter.Kinds().InfraCluster; k != "" {
				placement = append(placement, infrav1.GroupVersion.WithKind(k).GroupKind())
			}
		}
		if err := (&cluster.Reconciler{Client: mgr.GetClient(), ClusterCache: workloads, Clock: opts.Clock, PlacementKinds: placement}).SetupWithManager(ctx, mgr, copts); err != nil {
			return nil, fmt.Errorf("setting up the Cluster controller: %w", err)
		}
		// Upstream's own MachineHealthCheck controller; beside upstream core
		// (pools, providers) upstream runs it.
		if err := machinehealthcheck.Setup(ctx, mgr, copts); err != nil {
			return nil, err
		}
	}
	// The AKS Cluster's infrastructure object in CAPZ's shape, in every
	// mode: beside upstream core too, mpool serves the kind.
	if err := (&managedcluster.Reconciler{Client: mgr.GetClient(), Clock: opts.Clock}).SetupWithManager(ctx, mgr, copts); err != nil {
		return nil, fmt.Errorf("setting up the AzureManagedCluster controller: %w", err)
	}
	if !poolsOn {
		log.Info("MachinePool feature gate is off: pool controllers not started")
		return nil, nil
	}
	if opts.Mode.RunsClusters() {
		if err := (&kubeadmconfig.Reconciler{Workload: workloads, Clock: opts.Clock, TokenTTL: opts.BootstrapTokenTTL, FieldOwners: owners}).SetupWithManager(ctx, mgr, copts); err != nil {
			return nil, fmt.Errorf("setting up the KubeadmConfig controller: %w", err)
		}
	}
	// The bookkeeping of the MachinePool controller and the engines waits
	// while pools are being created (priority.Hold); beside upstream's
	// MachinePool controller nothing tells the Hold, which stays inactive.
	hold := priority.NewHold()
	if opts.Mode.RunsMachinePools() {
		if err := (&machinepool.Reconciler{Client: mgr.GetClient(), ClusterCache: workloads, Clock: opts.Clock, FieldOwners: owners, Hold: hold}).SetupWithManager(ctx, mgr, copts); err != nil {
			return nil, fmt.Errorf("setting up the MachinePool controller: %w", err)
		}
	}
	log.Info("Controllers set up", "mode", opts.Mode.String(), "clusters", opts.Mode.RunsClusters(), "machinePools", opts.Mode.RunsMachinePools())
	var adapters []contract.Adapter
	for _, p := range registry {
		adapters = append(adapters, p.Adapter)
	}
	// Pool metrics read what the MachinePool controller caches.
	poolReg := opts.PoolMetricsRegistry
	if poolReg == nil {
		poolReg = crmetrics.Registry
	}
	if err := poolmetrics.AddToManager(mgr, poolReg, adapters); err != nil {
		return nil, err
	}
	if err := poolmetrics.RegisterScaleGroupMetrics(crmetrics.Registry); err != nil {
		return nil, err
	}
	running, err := setupProviders(ctx, mgr, registry, opts.Providers, opts.CloudHTTPClient, infrapool.Options{
		Workload:                workloads,
		APIReader:               mgr.GetAPIReader(),
		SkipModelReconciliation: opts.Gates.Enabled(features.SkipMachinePoolModelReconciliation),
		JoinTimeout:             opts.NodeStartupTimeout,
		OmitFailureFields:       opts.Mode == ModeProviders,
		Clock:                   opts.Clock,
		Timing:                  opts.EngineTiming,
		Hold:                    hold,
	}, copts)
	if err != nil {
		return nil, err
	}
	return running, nil
}

// applyPolicies applies the rules that span two objects
// (config/crd/policies) as mode wants them: beside upstream Cluster API
// (a mode that runs no Clusters) the standalone-only ones
// (crd.StandaloneOnlyPolicies) would refuse what upstream serves, so they
// are left out, and removed where a standalone manager of this management
// cluster installed them before.
func applyPolicies(ctx context.Context, c client.Client, mode Mode) error {
	pols, binds, err := crd.AdmissionPolicies()
	if err != nil {
		return err
	}
	if !mode.RunsClusters() {
		var dropPols []*admissionregistrationv1.ValidatingAdmissionPolicy
		var dropBinds []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
		pols, dropPols = split(pols, func(p *admissionregistrationv1.ValidatingAdmissionPolicy) bool {
			return slices.Contains(crd.StandaloneOnlyPolicies, p.Name)
		})
		binds, dropBinds = split(binds, func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) bool {
			return slices.Contains(crd.StandaloneOnlyPolicies, b.Spec.PolicyName)
		})
		if err := admission.RemovePolicies(ctx, c, dropPols, dropBinds); err != nil {
			return fmt.Errorf("removing the standalone-only admission policies: %w", err)
		}
	}
	var retiredPols []*admissionregistrationv1.ValidatingAdmissionPolicy
	var retiredBinds []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	for _, name := range crd.RetiredPolicies {
		retiredPols = append(retiredPols, &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}})
		retiredBinds = append(retiredBinds, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name}})
	}
	if err := admission.RemovePolicies(ctx, c, retiredPols, retiredBinds); err != nil {
		return fmt.Errorf("removing the retired admission policies: %w", err)
	}
	if err := admission.EnsurePolicies(ctx, c, pols, binds); err != nil {
		return fmt.Errorf("applying the admission policies: %w", err)
	}
	return nil
}

// split returns the items of s that drop does not choose, and those it does.
func split[T any](s []T, drop func(T) bool) (kept, dropped []T) {
	for _, x := range s {
		if drop(x) {
			dropped = append(dropped, x)
		} else {
			kept = append(kept, x)
		}
	}
	return kept, dropped
}

// fieldOwners returns the Upgrader of the kinds mpool's controllers write
// that clients create in v1beta1 (the seeds' manifests): MachinePool and
// KubeadmConfig, moved to v1beta2 with the conversion webhook's converters
// and the schemas of the CRDs mpool installs.
func fieldOwners(s *runtime.Scheme) (*fieldowners.Upgrader, error) {
	reg, err := conversion.Registry(s)
	if err != nil {
		return nil, err
	}
	crds, err := crd.CRDs()
	if err != nil {
		return nil, err
	}
	u, err := fieldowners.New(s, reg, crds, clusterv1.GroupVersion.WithKind("MachinePool"), bootstrapv1.GroupVersion.WithKind("KubeadmConfig"))
	if err != nil {
		return nil, fmt.Errorf("moving managed fields to v1beta2: %w", err)
	}
	return u, nil
}
