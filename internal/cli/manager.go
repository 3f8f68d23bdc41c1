package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/provider"
	"github.com/mpool-dev/mpool/internal/workload"
)

func newManagerCommand() *cobra.Command {
	opts := manager.DefaultOptions()
	var kubeconfig string
	cmd := &cobra.Command{
		Use:   "manager",
		Short: "Run the mpool controllers against a management cluster",
		Long: `Run the mpool controllers against a management cluster: in a Pod (in-cluster
configuration) or from a workstation (--kubeconfig, $KUBECONFIG or ~/.kube/config).
Run several replicas with --leader-elect for high availability. Beside upstream
Cluster API, --mode=pools or --mode=providers runs only mpool's part (README,
"Beside upstream Cluster API").`,
		Args:        cobra.NoArgs,
		Annotations: map[string]string{ownLogsAnnotation: "true"},
	}
	fs := cmd.Flags()
	opts.Mode = manager.ModeStandalone
	fs.Var(&opts.Mode, "mode", `What the manager runs: "standalone" (all of it: Clusters, KubeadmConfigs, MachinePools and the providers), "pools" (MachinePools and the providers, beside upstream Cluster API core with its MachinePool gate off and its kubeadm bootstrap provider) or "providers" (only the infrastructure providers, under upstream Cluster API's MachinePool controller)`)
	fs.StringVar(&kubeconfig, "kubeconfig", "", "Path to the management cluster's kubeconfig (default: in-cluster, $KUBECONFIG, ~/.kube/config)")
	fs.StringVar(&opts.MetricsBindAddress, "metrics-bind-address", opts.MetricsBindAddress, `Address of the Prometheus metrics endpoint; "0" disables it`)
	fs.StringVar(&opts.HealthProbeBindAddress, "health-probe-bind-address", opts.HealthProbeBindAddress, `Address of /healthz and /readyz; "0" disables them`)
	fs.BoolVar(&opts.LeaderElection, "leader-elect", false, "Elect a leader so that only one replica reconciles")
	fs.StringVar(&opts.LeaderElectionID, "leader-election-id", opts.LeaderElectionID, "Name of the leader election Lease")
	fs.StringVar(&opts.LeaderElectionNamespace, "leader-election-namespace", "", "Namespace of the leader election Lease (default: the manager's namespace)")
	fs.DurationVar(&opts.LeaseDuration, "leader-elect-lease-duration", 15*time.Second, "How long replicas wait, after the leader last renewed the Lease, before one takes the lead")
	fs.DurationVar(&opts.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second, "How long the leader tries to renew the Lease before it gives up and exits")
	fs.DurationVar(&opts.RetryPeriod, "leader-elect-retry-period", 2*time.Second, "How often replicas try to take or renew the Lease")
	fs.IntVar(&opts.Concurrency, "concurrency", opts.Concurrency, "Objects of each kind reconciled at once")
	fs.DurationVar(&opts.SyncPeriod, "sync-period", opts.SyncPeriod, "How often every object is reconciled even without changes")
	opts.Providers = provider.NewConfigs()
	opts.Providers.AddFlags(fs)
	fs.DurationVar(&opts.NodeStartupTimeout, "node-startup-timeout", preview.DefaultJoinTimeout, "How long an instance may run without joining as a Node before it is replaced (negative: never)")
	fs.DurationVar(&opts.BootstrapTokenTTL, "bootstrap-token-ttl", 15*time.Minute, "Lifetime of the bootstrap tokens in pools' bootstrap data; rotated at half of it while a pool is at rest (as Cluster API's kubeadm bootstrap provider)")
	fs.Float32Var(&opts.WorkloadQPS, "workload-qps", workload.DefaultQPS, "Requests per second of each workload cluster client (Node updates, drains)")
	fs.IntVar(&opts.WorkloadBurst, "workload-burst", workload.DefaultBurst, "Burst of each workload cluster client")
	opts.AddWebhookFlags(fs)
	gates := addGateFlags(fs)
	logs := addLogFlags(fs)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if gates.envErr != nil {
			return gates.envErr
		}
		logs.setup(os.Stderr)
		cfg, err := loadConfig(kubeconfig)
		if err != nil {
			return err
		}
		opts.Gates = gates.gate
		ctx := ctrl.SetupSignalHandler()
		mgr, err := manager.New(ctx, cfg, opts)
		if err != nil {
			return err
		}
		ctrl.Log.WithName("setup").Info("Starting manager", "mode", opts.Mode.String(), "featureGates", fs.Lookup("feature-gates").Value.String())
		return mgr.Start(ctx)
	}
	return cmd
}

// loadConfig returns the management cluster's client configuration: from
// kubeconfig when set, else as controller-runtime finds it. Either way,
// unless the kubeconfig sets a QPS, the client-side rate limiter is off
// (controller-runtime's GetConfig does so and leaves the API server's
// priority and fairness to limit the manager), so that --kubeconfig does
// not run the manager at client-go's default of 5 requests per second.
func loadConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("loading kubeconfig %s: %w", kubeconfig, err)
		}
		if cfg.QPS == 0 {
			cfg.QPS = -1
		}
		return cfg, nil
	}
	cfg, err := config.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("finding the management cluster (pass --kubeconfig): %w", err)
	}
	return cfg, nil
}
