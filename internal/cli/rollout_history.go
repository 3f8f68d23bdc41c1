package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/internal/history"
)

func newRolloutHistoryCommand(cf *clientFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "history NAME",
		Short: "List the revisions of a MachinePool's instance model and what changed in each",
		Long: `Each model a MachinePool has rolled to is a revision, kept by the engine as an apps/v1
ControllerRevision owned by the MachinePool (label ` + history.MachinePoolLabel + `): its
spec.template, its infrastructure pool's spec and its bootstrap config's spec. The
newest revision is the current model. The history keeps ` + fmt.Sprint(history.DefaultHistoryLimit) + ` revisions unless the
MachinePool's annotation ` + history.RevisionHistoryLimitAnnotation + ` says otherwise; the
annotation ` + history.ChangeCauseAnnotation + ` on the MachinePool is copied to the revision
it makes, as for a Deployment. Go back with 'mpool rollout undo'.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			mc, err := cf.connect()
			if err != nil {
				return err
			}
			return RolloutHistory(cmd.Context(), mc, mc.namespace, args[0], cmd.OutOrStdout())
		},
	}
}

func newRolloutUndoCommand(cf *clientFlags) *cobra.Command {
	var to int64
	cmd := &cobra.Command{
		Use:   "undo NAME",
		Short: "Roll a MachinePool back to an earlier revision of its model",
		Long: `Undo restores a revision (default: the one before the current) — the MachinePool's
spec.template, its infrastructure pool's spec and its bootstrap config's spec — and the
engine rolls the pool to it within the pool's budgets, as for any change. The pool's
size, size range and budgets (` + strings.Join(history.NotRestored[1:], ", ") + `) stay as they
are now. The three objects are written under the rollout pause annotation, lifted with the
last write, so no half-restored model is rolled out; a pool you paused stays paused.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			mc, err := cf.connect()
			if err != nil {
				return err
			}
			return UndoRollout(cmd.Context(), mc, mc.namespace, args[0], to, cmd.OutOrStdout())
		},
	}
	cmd.Flags().Int64Var(&to, "to-revision", 0, "The revision to roll back to (default: the one before the current)")
	return cmd
}

// readHistory reads MachinePool ns/name and its revisions, oldest first.
func readHistory(ctx context.Context, c client.Client, ns, name string) (*clusterv1.MachinePool, []history.Revision, error) {
	mp := &clusterv1.MachinePool{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, mp); err != nil {
		return nil, nil, notFound(err, "machinepool", ns, name)
	}
	revs, err := history.List(ctx, c, mp)
	return mp, revs, err
}

// RolloutHistory prints, as `mpool rollout history` does, the revisions of MachinePool ns/name, each with what
// changed from the one before.
func RolloutHistory(ctx context.Context, c client.Client, ns, name string, w io.Writer) error {
	_, revs, err := readHistory(ctx, c, ns, name)
	if err != nil {
		return err
	}
	if len(revs) == 0 {
		_, err := fmt.Fprintf(w, "machinepool %s/%s: no revision recorded yet (the engine records one when the pool's model is known)\n", ns, name)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REVISION\tMODEL\tRECORDED\tCHANGE-CAUSE")
	for i, r := range revs {
		number := fmt.Sprint(r.Number)
		if i == len(revs)-1 {
			number += " (current)"
		}
		cause := r.ChangeCause
		if cause == "" {
			cause = "<none>"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", number, r.ModelHash, r.Created.UTC().Format(time.RFC3339), cause)
		if i > 0 {
			for _, ch := range history.Changes(revs[i-1].Snapshot, r.Snapshot) {
				fmt.Fprintf(tw, "    %s\n", ch) // the last cell of a line is not in a column
			}
		}
	}
	return tw.Flush()
}

// UndoRollout restores, as `mpool rollout undo` does, revision to (0: the one before the current) of
// MachinePool ns/name.
func UndoRollout(ctx context.Context, c client.Client, ns, name string, to int64, w io.Writer) error {
	mp, revs, err := readHistory(ctx, c, ns, name)
	if err != nil {
		return err
	}
	id := fmt.Sprintf("machinepool %s/%s", ns, name)
	if len(revs) < 2 && to == 0 {
		return fmt.Errorf("%s has %d revision(s): nothing to undo to ('mpool rollout history %s')", id, len(revs), name)
	}
	current := revs[len(revs)-1]
	target := revs[max(len(revs)-2, 0)]
	if to != 0 {
		found := false
		for _, r := range revs {
			if r.Number == to {
				target, found = r, true
			}
		}
		if !found {
			numbers := make([]string, len(revs))
			for i, r := range revs {
				numbers[i] = fmt.Sprint(r.Number)
			}
			return fmt.Errorf("%s has no revision %d (it has %s)", id, to, strings.Join(numbers, ", "))
		}
	}
	if target.Number == current.Number {
		_, err := fmt.Fprintf(w, "%s: revision %d is the current one; nothing to do\n", id, target.Number)
		return err
	}
	if err := history.Restore(ctx, c, mp, target, rolloutPausedAnnotation); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: rolled back to revision %d (model %s); the engine rolls the pool to it within its budgets ('mpool rollout status %s')\n",
		id, target.Number, target.ModelHash, name)
	for _, ch := range history.Changes(current.Snapshot, target.Snapshot) {
		fmt.Fprintf(w, "  %s\n", ch)
	}
	return nil
}
