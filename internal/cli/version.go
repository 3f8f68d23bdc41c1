package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/mpool-dev/mpool/internal/kubeenv"
)

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print mpool's version and the pinned Kubernetes and etcd versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := "(devel)"
			if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
				v = bi.Main.Version
			}
			fmt.Fprintf(cmd.OutOrStdout(), "mpool %s (kube-apiserver %s, etcd %s)\n", v, kubeenv.KubernetesVersion, kubeenv.EtcdVersion)
			return nil
		},
	}
}
