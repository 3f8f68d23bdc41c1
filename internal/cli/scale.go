package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/internal/capi"
)

// newScaleCommand returns `mpool scale`.
func newScaleCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "scale",
		Short: "Set the number of replicas of a MachinePool",
		Args:  cobra.NoArgs,
	}
	cf := addClientFlags(cmd.PersistentFlags())
	var replicas int32
	mp := &cobra.Command{
		Use:     "machinepool NAME --replicas N",
		Aliases: []string{"mp", "machinepools"},
		Short:   "Set a MachinePool's replicas through its scale subresource",
		Long: `Set a MachinePool's spec.replicas through its scale subresource, as the cluster
autoscaler and 'kubectl scale' do. On scale-in the rollout engine chooses the
instances to remove (marked, not ready and stale ones first), drains their Nodes,
then deletes them.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if replicas < 0 {
				return fmt.Errorf("--replicas must be 0 or more, got %d", replicas)
			}
			mc, err := cf.connect()
			if err != nil {
				return err
			}
			return scaleMachinePool(cmd.Context(), mc, mc.namespace, args[0], replicas, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	mp.Flags().Int32Var(&replicas, "replicas", 0, "The number of replicas (required, 0 or more)")
	_ = mp.MarkFlagRequired("replicas")
	cmd.AddCommand(mp)
	return cmd
}

// scaleMachinePool sets the replicas of the MachinePool ns/name through its
// /scale subresource and says what changed; a warning goes to errOut when an
// external actor manages the replicas.
func scaleMachinePool(ctx context.Context, c client.Client, ns, name string, replicas int32, out, errOut io.Writer) error {
	mp := &clusterv1.MachinePool{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, mp); err != nil {
		return notFound(err, "machinepool", ns, name)
	}
	id := fmt.Sprintf("machinepool %s/%s", ns, name)
	scale := &autoscalingv1.Scale{}
	if err := c.SubResource("scale").Get(ctx, mp, scale); err != nil {
		return fmt.Errorf("reading the scale of %s: %w", id, err)
	}
	from := scale.Spec.Replicas
	if from == replicas {
		_, err := fmt.Fprintf(out, "%s: already has %d replicas; nothing to do\n", id, replicas)
		return err
	}
	scale.Spec.Replicas = replicas
	if err := c.SubResource("scale").Update(ctx, mp, client.WithSubResourceBody(scale)); err != nil {
		return fmt.Errorf("scaling %s to %d replicas: %w", id, replicas, err)
	}
	if capi.ReplicasManagedExternally(mp) {
		fmt.Fprintf(errOut, "warning: %s has %s=%q: that actor owns the replica count and may change it back\n",
			id, clusterv1.ReplicasManagedByAnnotation, mp.Annotations[clusterv1.ReplicasManagedByAnnotation])
	}
	_, err := fmt.Fprintf(out, "%s: scaled from %d to %d replicas\n", id, from, replicas)
	return err
}
