package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/config/crd"
	"github.com/mpool-dev/mpool/internal/admission/flexibleversion"
	"github.com/mpool-dev/mpool/internal/conversion"
	"github.com/mpool-dev/mpool/internal/kubeenv"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/provider"
	"github.com/mpool-dev/mpool/internal/provider/kit"
	mpoolscheme "github.com/mpool-dev/mpool/internal/scheme"
	"github.com/mpool-dev/mpool/sim/cloudsim"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/nodeagent"
	"github.com/mpool-dev/mpool/sim/server"
)

type upOptions struct {
	dataDir     string
	metricsAddr string
	verbose     bool
	empty       bool
	sample      string
}

func newUpCommand() *cobra.Command {
	o := upOptions{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start mpool on this machine: control plane, CRDs and manager",
		Long: `Start an embedded etcd, kube-apiserver and kube-controller-manager (built from source
on first use and cached), install mpool's CRDs, start the simulated cloud and run the
manager in this process. Unless --empty, it then creates a sample 3-replica pool
and shows its progress until it is Running: --sample local (the default) is the
local machinepool flavor of 'mpool generate cluster', simulated VMs joining the
Cluster default/local; --sample azure and --sample aws are the azure and aws
machinepool flavors for a Cluster default/azure or default/aws, a VM Scale Set
in the simulated Azure or an Auto Scaling Group in the simulated AWS; --sample
gcp the gcp machinepool flavor for a Cluster default/gcp, a managed instance
group in the simulated Compute Engine; --sample
eks is the aws eks-managedmachinepool flavor for a Cluster default/eks, a
managed node group of the simulated EKS cluster mpool-eks; --sample aks is the
azure aks flavor for a Cluster default/aks, agent pools of the simulated AKS
cluster aks. It runs in the foreground
until interrupted (Ctrl-C or SIGTERM), then stops everything cleanly.
Objects are kept in --data-dir, so the next 'mpool up' finds them again.`,
		Args:        cobra.NoArgs,
		Annotations: map[string]string{ownLogsAnnotation: "true"},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.dataDir, "data-dir", defaultDataDir(), "Directory for etcd data, certificates, kubeconfig and logs")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", "0", `Address of the manager's Prometheus metrics endpoint; "0" disables it`)
	fs.BoolVarP(&o.verbose, "verbose", "v", false, "Write the manager's logs to the terminal instead of DATA_DIR/manager.log")
	fs.BoolVar(&o.empty, "empty", false, "Do not create the sample 3-replica pool")
	fs.StringVar(&o.sample, "sample", "local", "The sample pool: local, azure, aws, gcp (the machinepool flavor of 'mpool generate cluster' for that infrastructure), eks (aws eks-managedmachinepool) or aks (azure aks)")
	gates := addGateFlags(fs)
	logs := addLogFlags(fs)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if gates.envErr != nil {
			return gates.envErr
		}
		if !o.empty {
			if _, err := lookupSample(o.sample); err != nil {
				return err
			}
		}
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		mo := manager.DefaultOptions()
		mo.Gates = gates.gate
		mo.MetricsBindAddress = o.metricsAddr
		mo.HealthProbeBindAddress = "0"
		// The workload cluster is the embedded API server, which the manager
		// already reaches at the control plane's client limits: drains and
		// Node updates get the same, not a remote cluster's defaults.
		mo.WorkloadQPS, mo.WorkloadBurst = kubeenv.ClientQPS, kubeenv.ClientBurst
		return runUp(ctx, cmd.OutOrStdout(), o, mo, logs)
	}
	return cmd
}

// defaultDataDir is $XDG_STATE_HOME/mpool/up, else ~/.local/state/mpool/up,
// else under the user cache directory.
func defaultDataDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "mpool", "up")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "state", "mpool", "up")
	}
	if d, err := kubeenv.CacheDir(); err == nil {
		return filepath.Join(d, "up")
	}
	return filepath.Join(os.TempDir(), "mpool-up")
}

func runUp(ctx context.Context, out io.Writer, o upOptions, mo manager.Options, logs *logFlags) error {
	start := time.Now()
	dir, err := filepath.Abs(o.dataDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating data directory %s: %w", dir, err)
	}
	// The logger comes first: the control plane's start already runs
	// controller-runtime (the conversion webhook's client).
	logPath := filepath.Join(dir, "manager.log")
	if o.verbose {
		logs.setup(os.Stderr)
	} else {
		lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("opening %s: %w", logPath, err)
		}
		defer lf.Close()
		logs.setup(lf)
	}
	fmt.Fprintf(out, "mpool: starting etcd and kube-apiserver %s (data in %s)\n", kubeenv.KubernetesVersion, dir)
	crds, err := crd.CRDs()
	if err != nil {
		return err
	}
	cp, err := kubeenv.Start(ctx, kubeenv.Options{DataDir: dir, Durable: true, Progress: out, CRDs: crds, Conversion: conversion.ForConfig, Validation: flexibleversion.Embedded})
	if err != nil {
		return fmt.Errorf("starting the control plane: %w", err)
	}
	defer func() {
		fmt.Fprintln(out, "mpool: stopping kube-apiserver and etcd")
		if err := cp.Stop(); err != nil {
			fmt.Fprintf(out, "mpool: %v\n", err)
		}
	}()

	cfg := cp.RESTConfig()
	mgrScheme, err := mpoolscheme.New()
	if err != nil {
		return err
	}
	kubeconfigPath := filepath.Join(dir, "kubeconfig")
	kc, err := cp.Kubeconfig()
	if err != nil {
		return err
	}
	if err := os.WriteFile(kubeconfigPath, kc, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", kubeconfigPath, err)
	}

	mgmt, err := client.New(cfg, client.Options{Scheme: mgrScheme})
	if err != nil {
		return err
	}
	if err := registerLocalCluster(ctx, mgmt, cp); err != nil {
		return err
	}

	// The simulated cloud: its VMs join this same API server as Nodes.
	cloud, err := cloudsim.Start(ctrl.LoggerInto(ctx, ctrl.Log.WithName("cloud")), core.Options{
		DataDir:   filepath.Join(dir, "cloud"),
		NodeAgent: nodeagent.Options{Credentials: []*rest.Config{cfg}},
	})
	if err != nil {
		return fmt.Errorf("starting the simulated cloud: %w", err)
	}
	defer func() {
		if err := cloud.Stop(); err != nil {
			fmt.Fprintf(out, "mpool: stopping the simulated cloud: %v\n", err)
		}
	}()
	// Every provider points at its face of the simulated cloud, with the
	// face's default account (the examples' clusters' identities' Secrets
	// are in namespace default here).
	mo.Providers = provider.NewConfigs().ForSimulatedCloud(simulatedCloud(cloud, "default"))
	// What the examples name in the clouds (the simulated EKS cluster of
	// examples/eks/cluster.yaml, whose API server is this one).
	if err := cloud.PrepareSandbox(""); err != nil {
		return fmt.Errorf("preparing the simulated cloud for the examples: %w", err)
	}

	mgr, err := manager.New(ctx, cfg, mo)
	if err != nil {
		return err
	}
	if err := setupSandboxClusters(mgr, cp); err != nil {
		return err
	}
	mgrCtx, cancelMgr := context.WithCancel(ctx)
	defer cancelMgr()
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(mgrCtx) }()
	if !mgr.GetCache().WaitForCacheSync(mgrCtx) {
		select {
		case err := <-mgrDone:
			return fmt.Errorf("the manager stopped while starting: %w", err)
		default:
			return errors.New("interrupted while the manager was starting")
		}
	}
	ctrl.Log.WithName("up").Info("Manager started")

	for _, line := range cloud.FaceLines() {
		fmt.Fprintf(out, "mpool: %s\n", line)
	}
	fmt.Fprintf(out, "mpool: Cluster default/%s is this API server\n", localClusterName)
	fmt.Fprintf(out, "mpool is ready in %s: export KUBECONFIG=%s\n", time.Since(start).Round(100*time.Millisecond), kubeconfigPath)
	if !o.verbose {
		fmt.Fprintf(out, "mpool: manager logs in %s; press Ctrl-C to stop\n", logPath)
	}

	if !o.empty {
		smp, err := lookupSample(o.sample)
		if err != nil {
			return err
		}
		go func() {
			if err := applySample(ctx, mgmt, smp); err != nil {
				fmt.Fprintf(out, "mpool: %v\n", err)
				return
			}
			if err := watchSample(ctx, out, mgmt, smp.pool()); err != nil {
				fmt.Fprintf(out, "mpool: %v\n", err)
				return
			}
			if ctx.Err() == nil {
				mpool, haveKubectl := runningCommand()
				nextSteps(out, smp, kubeconfigPath, mpool, haveKubectl)
			}
		}()
	}

	select {
	case <-ctx.Done():
		fmt.Fprintln(out, "mpool: stopping the manager")
		cancelMgr()
		if err := <-mgrDone; err != nil {
			return fmt.Errorf("stopping the manager: %w", err)
		}
		return nil
	case err := <-mgrDone:
		if err == nil {
			err = errors.New("exited unexpectedly")
		}
		return fmt.Errorf("the manager stopped: %w", err)
	}
}

// simulatedCloud describes cloud to the providers' configurations: its
// faces, its CA and its faces' default accounts (server.AccountFace), with
// the Secrets of cluster identities in identityNamespace.
func simulatedCloud(cloud *server.Server, identityNamespace string) kit.Simulated {
	accounts := map[string]kit.Account{}
	for face, a := range cloud.DefaultAccounts() {
		accounts[face] = kit.Account(a)
	}
	return kit.Simulated{
		FaceURL:           cloud.FaceURL,
		CAFile:            cloud.CAFile(),
		IdentityNamespace: identityNamespace,
		Accounts:          accounts,
	}
}
