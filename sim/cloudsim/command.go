package cloudsim

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/sim/face/azureface"
	"github.com/mpool-dev/mpool/sim/face/eksface"
	"github.com/mpool-dev/mpool/sim/nodeagent"
)

// NewCommand returns `mpool cloud`: the simulated cloud as its own process,
// so a manager can be killed and restarted while the cloud (and its booting
// instances) keeps running. It serves until SIGINT or SIGTERM.
func NewCommand() *cobra.Command {
	var (
		addr, dataDir    string
		kubeconfigs      []string
		seed             uint64
		sim              = core.DefaultSimulation()
		maxInstances     int
		faults           core.Faults
		heartbeat        time.Duration
		nodeMonitorGrace time.Duration
		nodeAgentWorkers int
		faceAddrs        map[string]string
		azureThrottle    bool
		azureQuota       map[string]int
		awsThrottle      bool
		awsQuota         int
		eksThrottle      bool
	)
	cmd := &cobra.Command{
		Use:   "cloud",
		Short: "Run the simulated cloud (scale groups whose instances join clusters as Nodes)",
		Long: `Run the simulated cloud on loopback until interrupted.

Scale groups and their instances are kept in --data-dir and survive restarts.
Booted instances read their bootstrap data (cloud-init with a kubeadm
JoinConfiguration), check the API server's CA against caCertHashes,
authenticate with the bootstrap token and register a Node with a heartbeat.
No CSR signer runs, so the Node is registered with the credentials of a
--kubeconfig whose server matches the join configuration's apiServerEndpoint
(repeat the flag for several clusters).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var creds []*rest.Config
			for _, path := range kubeconfigs {
				b, err := os.ReadFile(path)
				if err != nil {
					return fmt.Errorf("reading kubeconfig: %w", err)
				}
				cfg, err := clientcmd.RESTConfigFromKubeConfig(b)
				if err != nil {
					return fmt.Errorf("loading kubeconfig %s: %w", path, err)
				}
				creds = append(creds, cfg)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			ctx = ctrllog.IntoContext(ctx, ctrllog.FromContext(ctx))
			if _, ok := faceAddrs[azureface.AzureFaceName]; !ok {
				// A stable address, so a manager's endpoint survives a
				// restart of the cloud.
				faceAddrs = mergeAddr(faceAddrs, azureface.AzureFaceName, nextPort(addr))
			}
			if _, ok := faceAddrs[awsface.AWSFaceName]; !ok {
				faceAddrs = mergeAddr(faceAddrs, awsface.AWSFaceName, nextPort(nextPort(addr)))
			}
			if _, ok := faceAddrs[eksface.EKSFaceName]; !ok {
				faceAddrs = mergeAddr(faceAddrs, eksface.EKSFaceName, nextPort(nextPort(nextPort(addr))))
			}
			opts := core.Options{
				Addr:              addr,
				DataDir:           dataDir,
				Seed:              seed,
				DefaultSimulation: &sim,
				MaxInstances:      maxInstances,
				Faults:            faults,
				FaceAddrs:         faceAddrs,
			}
			if azureThrottle || len(azureQuota) > 0 {
				az := &azureface.AzureFace{VCPUQuota: azureQuota}
				if azureThrottle {
					az.SubscriptionReads, az.SubscriptionWrites, az.ScaleSetWrites = azureface.AzureSubscriptionReads, azureface.AzureSubscriptionWrites, azureface.AzureScaleSetWrites
				}
				opts.Faces = append(opts.Faces, az)
			}
			if awsThrottle || awsQuota > 0 {
				aws := &awsface.AWSFace{VCPUQuota: awsQuota}
				if awsThrottle {
					aws.Budgets = awsface.AWSDefaultBudgets
				}
				opts.Faces = append(opts.Faces, aws)
			}
			if eksThrottle {
				opts.Faces = append(opts.Faces, &eksface.EKSFace{Budget: eksface.EKSDefaultBudget})
			}
			opts.NodeAgent.Credentials = creds
			opts.NodeAgent.HeartbeatInterval = heartbeat
			opts.NodeAgent.NodeMonitorGracePeriod = nodeMonitorGrace
			opts.NodeAgent.Workers = nodeAgentWorkers
			srv, err := Start(ctx, opts)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Simulated cloud listening on %s (data in %s)\n", srv.URL(), dataDir)
			for _, line := range srv.FaceLines() {
				fmt.Fprintln(cmd.OutOrStdout(), line)
			}
			<-ctx.Done()
			return srv.Stop()
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:8790", "listen address")
	f.StringVar(&dataDir, "data-dir", defaultDataDir(), "directory holding the cloud's state")
	f.StringArrayVar(&kubeconfigs, "kubeconfig", nil, "node-agent credentials for a workload cluster (repeatable)")
	f.Uint64Var(&seed, "seed", 0, "random seed for boot jitter, failures and faults (0: random)")
	f.DurationVar(&sim.BootDelay, "boot-delay", sim.BootDelay, "default instance boot time")
	f.DurationVar(&sim.BootJitter, "boot-jitter", sim.BootJitter, "default maximum deviation (±) from --boot-delay")
	f.DurationVar(&sim.ProvisionDelay, "provision-delay", sim.ProvisionDelay, "default time an instance stays Creating")
	f.DurationVar(&sim.DeleteDelay, "delete-delay", sim.DeleteDelay, "default time an instance stays Deleting")
	f.Float64Var(&sim.FailureRate, "failure-rate", sim.FailureRate, "default probability that an instance fails to boot")
	f.IntVar(&maxInstances, "max-instances", 0, "instance quota across all groups (0: unlimited)")
	f.Float64Var(&faults.ThrottleRate, "throttle-rate", 0, "share of API requests answered 429 with Retry-After")
	f.DurationVar(&faults.RetryAfter, "retry-after", time.Second, "Retry-After of throttled responses")
	f.Float64Var(&faults.ErrorRate, "error-rate", 0, "share of API requests answered with a 5xx")
	f.DurationVar(&faults.Latency, "latency", 0, "latency added to every API request")
	f.DurationVar(&heartbeat, "heartbeat-interval", 10*time.Second, "node lease renewal interval")
	f.IntVar(&nodeAgentWorkers, "join-workers", 64, "concurrent node joins")
	f.DurationVar(&nodeMonitorGrace, "node-monitor-grace-period", nodeagent.DefaultNodeMonitorGracePeriod, "how long after its last heartbeat a stopped kubelet's Node goes Unknown (kube-controller-manager's flag; no node lifecycle controller runs)")
	f.StringToStringVar(&faceAddrs, "face-addr", nil, "also serve a face on a listener of its own, at its root: face=address (repeatable; every face is served under /<face>/ of --addr; the azure face always has one, HTTPS, by default the port after --addr's; the aws face, plain HTTP, the port after that; the eks face the one after that)")
	f.BoolVar(&azureThrottle, "azure-throttle", false, "apply Azure's documented request budgets to the azure face (ARM's per-subscription reads and writes, Compute's per-scale-set writes)")
	f.StringToIntVar(&azureQuota, "azure-vcpu-quota", nil, "regional vCPU quota of the azure face by SKU family, e.g. standardDSv3Family=100 (repeatable; default unlimited)")
	f.BoolVar(&awsThrottle, "aws-throttle", false, "apply AWS's request budgets to the aws face (EC2's documented token buckets; Auto Scaling's chosen figures), answered Throttling / RequestLimitExceeded")
	f.BoolVar(&eksThrottle, "eks-throttle", false, "apply a request budget to the eks face (50 requests refilled 10/s per account and region: EKS publishes no figures), answered ThrottlingException (429)")
	f.IntVar(&awsQuota, "aws-vcpu-quota", 0, "the aws face's Running On-Demand Standard instances vCPU limit per account and region; launches beyond it fail with VcpuLimitExceeded (0: unlimited)")
	cmd.AddCommand(newFaultCommand())
	return cmd
}

// nextPort is addr with the next port (127.0.0.1:8790 → 127.0.0.1:8791),
// where `mpool cloud` serves the Azure face by default; port 0 stays 0.
func nextPort(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil || n == 0 || n >= 65535 {
		return net.JoinHostPort(host, "0")
	}
	return net.JoinHostPort(host, strconv.Itoa(n+1))
}

func mergeAddr(m map[string]string, face, addr string) map[string]string {
	out := map[string]string{face: addr}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func defaultDataDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return d + "/mpool/cloud"
	}
	return ".mpool-cloud"
}
