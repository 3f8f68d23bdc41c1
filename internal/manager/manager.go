// Package manager assembles mpool's controllers into one controller-runtime
// manager, shared by `mpool manager` (a real management cluster) and
// `mpool up` (the embedded control plane).
package manager

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"sigs.k8s.io/cluster-api/util/apiwarnings"

	"github.com/mpool-dev/mpool/internal/controller/infrapool"
	"github.com/mpool-dev/mpool/internal/features"
	"github.com/mpool-dev/mpool/internal/provider"
	mpoolscheme "github.com/mpool-dev/mpool/internal/scheme"
)

// Options configure the manager.
type Options struct {
	// Mode is how much of Cluster API the manager runs (ModeStandalone when
	// empty): everything, or the part upstream Cluster API beside it leaves
	// to mpool.
	Mode Mode
	// MetricsBindAddress serves Prometheus metrics; "0" disables them.
	MetricsBindAddress string
	// PoolMetricsRegistry is where the MachinePool metrics
	// (mpool_machinepool_*) are registered; nil: controller-runtime's
	// metrics.Registry, which MetricsBindAddress serves. Their collector
	// reads every pool and per-instance object at each gather (about half
	// a second at 1,000 pools of 10), so a process that gathers the
	// controllers' metrics often, as the benchmarks do, keeps them apart.
	PoolMetricsRegistry prometheus.Registerer
	// HealthProbeBindAddress serves /healthz and /readyz; "0" disables them.
	HealthProbeBindAddress string
	// LeaderElection makes only one replica reconcile at a time.
	LeaderElection bool
	// LeaderElectionID names the election Lease.
	LeaderElectionID string
	// LeaderElectionNamespace holds the Lease; empty means the manager's own
	// namespace when in a cluster.
	LeaderElectionNamespace string
	// LeaseDuration is how long a replica waits, after the leader last
	// renewed the Lease, before it takes the lead; RenewDeadline how long
	// the leader tries to renew before it gives up (and exits);
	// RetryPeriod how often replicas try. Zero takes controller-runtime's
	// defaults: 15s, 10s and 2s, as Cluster API's managers have them.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Gates are the feature gates in force.
	Gates featuregate.FeatureGate
	// Concurrency is how many objects of each kind reconcile at once.
	Concurrency int
	// SyncPeriod is how often every object is reconciled even without events.
	SyncPeriod time.Duration
	// Providers are the providers' own configurations (how each reaches
	// its cloud; provider.NewConfigs); a provider without one, or whose
	// configuration turns it off, is not started.
	Providers provider.Configs
	// Registry is the providers the manager may start, nil for every
	// provider mpool has (provider.All); a test adds a provider with one
	// entry of its own.
	Registry []provider.Provider
	// CloudHTTPClient, when set, carries the providers' cloud requests
	// (tests count and fault them with it).
	CloudHTTPClient *http.Client
	// EngineTiming tunes the rollout engine's requeues (zero fields take
	// the engine's defaults).
	EngineTiming infrapool.Timing
	// CacheNamespaces, when set, limits what the manager watches to these
	// namespaces (tests run one manager per namespace).
	CacheNamespaces []string
	// SkipNameValidation lets several managers with the same controllers
	// run in one process (tests).
	SkipNameValidation bool
	// NodeStartupTimeout is how long an instance may run without a Node
	// before the engine replaces it (0: preview.DefaultJoinTimeout;
	// negative: never), like a MachineHealthCheck's nodeStartupTimeout.
	NodeStartupTimeout time.Duration
	// BootstrapTokenTTL is the lifetime of the bootstrap tokens the
	// KubeadmConfig controller creates (0: its default, 15 minutes); they
	// are rotated at half of it while a pool is at rest.
	BootstrapTokenTTL time.Duration
	// WorkloadQPS and WorkloadBurst limit each workload cluster client
	// (Node reads and writes, drains); 0 takes the workload package's
	// defaults, sized for a remote cluster shared with other clients.
	WorkloadQPS   float32
	WorkloadBurst int
	// WorkloadWrapTransport, when set, wraps the HTTP transport of every
	// workload cluster client (the benchmarks count the manager's requests
	// with it; its management cluster requests go through the rest.Config
	// the manager is built with).
	WorkloadWrapTransport transport.WrapperFunc
	// Clock is the time source; nil means the real clock.
	Clock clock.WithTicker

	// ConversionWebhook serves the CRD conversion webhook
	// (internal/conversion) on the manager's webhook server, on every
	// replica: what the deployed manager does. Off for `mpool up`, whose
	// embedded control plane serves conversion itself.
	ConversionWebhook bool
	// WebhookPort is the webhook server's port.
	WebhookPort int
	// WebhookCertDir holds the serving tls.crt and tls.key (e.g. a mounted
	// cert-manager Secret, whose CA the CRDs' caBundle must then name).
	// Empty: the certificates are self-managed (internal/webhookcert), in
	// Secret WebhookSecretName for Service WebhookServiceName, both in
	// WebhookNamespace.
	WebhookCertDir     string
	WebhookServiceName string
	WebhookSecretName  string
	WebhookNamespace   string
}

// DefaultOptions returns the options `mpool manager` starts from.
func DefaultOptions() Options {
	return Options{
		MetricsBindAddress:     ":8080",
		HealthProbeBindAddress: ":8081",
		LeaderElectionID:       "mpool-manager.cluster.x-k8s.io",
		Gates:                  features.NewGate(),
		Concurrency:            10,
		SyncPeriod:             10 * time.Minute,
		WebhookPort:            DefaultWebhookPort,
		WebhookServiceName:     DefaultWebhookServiceName,
		WebhookSecretName:      DefaultWebhookSecretName,
		WebhookNamespace:       envOr("POD_NAMESPACE", DefaultWebhookNamespace),
	}
}

// Manager is a controller-runtime manager with mpool's controllers.
type Manager struct {
	ctrl.Manager
	// Providers are the providers whose controllers run: the clouds the
	// options configure.
	Providers []Running
}

// New builds a manager with every controller the gates allow and every
// provider the options configure.
func New(ctx context.Context, cfg *rest.Config, opts Options) (_ *Manager, err error) {
	if opts.Gates == nil {
		opts.Gates = features.NewGate()
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	scheme, err := mpoolscheme.New()
	if err != nil {
		return nil, err
	}
	syncPeriod := opts.SyncPeriod
	owners, err := fieldOwners(scheme)
	if err != nil {
		return nil, err
	}
	webhooks, certDir, err := webhookServer(opts)
	if err != nil {
		return nil, err
	}
	if certDir != "" {
		defer func() {
			if err != nil {
				_ = os.RemoveAll(certDir)
			}
		}()
	}
	cfg = withWarningHandler(cfg)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       metricsserver.Options{BindAddress: opts.MetricsBindAddress},
		HealthProbeBindAddress:        opts.HealthProbeBindAddress,
		LeaderElection:                opts.LeaderElection,
		LeaderElectionID:              opts.LeaderElectionID,
		LeaderElectionNamespace:       opts.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 nonZero(opts.LeaseDuration),
		RenewDeadline:                 nonZero(opts.RenewDeadline),
		RetryPeriod:                   nonZero(opts.RetryPeriod),
		Cache:                         cacheOptions(syncPeriod, opts.CacheNamespaces, owners),
		MapperProvider:                newMapper,
		Controller:                    config.Controller{SkipNameValidation: ptr.To(opts.SkipNameValidation), ReconciliationTimeout: ReconcileTimeout},
		WebhookServer:                 webhooks,
	})
	if err != nil {
		return nil, fmt.Errorf("creating the controller manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	if err := setupConversionWebhook(ctx, mgr, opts, certDir); err != nil {
		return nil, err
	}
	running, err := setupControllers(ctx, mgr, opts, owners)
	if err != nil {
		return nil, err
	}
	return &Manager{Manager: mgr, Providers: running}, nil
}

// ReconcileTimeout bounds each reconcile of every controller of the
// manager, as Cluster API v1.14 bounds its own (one minute by default): a
// reconcile blocked on something unbounded fails and is retried instead of
// holding its object forever. It is a backstop, not a pace: a pass over a
// pool of 10,000 instances may write 2,500 per-instance objects
// (infrapool's writesPerPass), seconds on a quiet API server and minutes
// behind a loaded one; and it is longer than a cloud request may take
// (kit.RequestTimeout), so that a request that timed out reports itself.
const ReconcileTimeout = 5 * time.Minute

// nonZero is d, nil when it is zero (controller-runtime's default).
func nonZero(d time.Duration) *time.Duration {
	if d == 0 {
		return nil
	}
	return &d
}

// withWarningHandler returns a copy of cfg whose clients log the API server's
// warnings as upstream Cluster API's managers do (util/apiwarnings), unless
// cfg has a handler of its own: the warnings that Cluster API's finalizer
// names are not domain-qualified ("machinepool.cluster.x-k8s.io", which the
// contract fixes) and that a served version is deprecated are dropped.
// Without it, controller-runtime logged one line for every object created
// with such a finalizer: ten thousand lines for ten thousand instances.
func withWarningHandler(cfg *rest.Config) *rest.Config {
	if cfg.WarningHandler != nil || cfg.WarningHandlerWithContext != nil {
		return cfg
	}
	cfg = rest.CopyConfig(cfg)
	cfg.WarningHandler = apiwarnings.DefaultHandler(ctrl.Log.WithName("API Server Warning"))
	return cfg
}
