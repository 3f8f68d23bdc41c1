package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mpool-dev/mpool/internal/kubeenv"
)

func newPrepareCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "prepare",
		Short: "Build and cache kube-apiserver and etcd (done by `mpool up` on first use)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bins, err := kubeenv.EnsureBinaries(cmd.Context(), cmd.OutOrStdout())
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "kube-apiserver: %s\nkube-controller-manager: %s\netcd: %s\n", bins.APIServer, bins.ControllerManager, bins.Etcd)
			return nil
		},
	}
}
