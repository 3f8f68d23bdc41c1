// Package cli implements the mpool command line: `mpool up`, `mpool manager`
// and the commands operators use every day.
package cli

import (
	"flag"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.uber.org/zap/zapcore"
	"k8s.io/component-base/featuregate"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/mpool-dev/mpool/internal/cloudsim"
	"github.com/mpool-dev/mpool/internal/features"
)

// NewRootCommand returns the `mpool` command with every subcommand.
func NewRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "mpool",
		Short: "mpool manages groups of machines as one Cluster API MachinePool",
		Long: `mpool is a Cluster API compatible MachinePool system: the MachinePool API and
controller, kubeadm bootstrap for pools, and infrastructure providers that delegate a
pool to a cloud scale group or to a local simulated cloud.

Start everything on this machine, with no cloud and no Docker:

  mpool up`,
		SilenceUsage: true,
		// controller-runtime wants a logger before its first use: without one
		// it prints "log.SetLogger(...) was never called" and a goroutine
		// stack once 30 s have passed since the process started, which the
		// first `mpool up` on a fresh machine (minutes building the control
		// plane) always reached. Every command sets one before it runs:
		// those that own their logs (up, manager) first thing in their run,
		// the others here, to stderr.
		PersistentPreRun: func(cmd *cobra.Command, _ []string) {
			if cmd.Annotations[ownLogsAnnotation] == "" {
				ctrl.SetLogger(zap.New(zap.WriteTo(cmd.ErrOrStderr()), zap.ConsoleEncoder()))
			}
		},
	}
	root.AddCommand(newUpCommand(), newManagerCommand(), cloudsim.NewCommand(), newPrepareCommand(), newVersionCommand(), newDescribeCommand(), newRolloutCommand(), newScaleCommand(), newGenerateCommand())
	return root
}

// gateFlags binds --feature-gates to a fresh gate whose defaults were first
// set from the EXP_* environment variables, so the flag wins over the env.
type gateFlags struct {
	gate   featuregate.MutableFeatureGate
	envErr error
}

func addGateFlags(fs *pflag.FlagSet) *gateFlags {
	g := &gateFlags{gate: features.NewGate()}
	g.envErr = features.ApplyEnv(g.gate, os.Getenv)
	g.gate.AddFlag(fs)
	return g
}

// ownLogsAnnotation marks a command that sets controller-runtime's logger
// itself, from its logFlags, before anything of controller-runtime runs.
const ownLogsAnnotation = "mpool.dev/own-logs"

// logFlags binds the zap logging flags (--zap-log-level, --zap-devel, ...).
type logFlags struct{ opts zap.Options }

func addLogFlags(fs *pflag.FlagSet) *logFlags {
	l := &logFlags{opts: zap.Options{TimeEncoder: zapcore.RFC3339NanoTimeEncoder}}
	gfs := flag.NewFlagSet("zap", flag.ContinueOnError)
	l.opts.BindFlags(gfs)
	fs.AddGoFlagSet(gfs)
	return l
}

// setup installs the global logger writing to w. controller-runtime takes
// only the first logger it is given, so a command calls this once, before
// anything of controller-runtime runs.
func (l *logFlags) setup(w io.Writer) {
	o := l.opts
	o.DestWriter = w
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o)))
}
