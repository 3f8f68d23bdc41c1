package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/internal/preview"
)

// newRolloutCommand returns `mpool rollout`.
func newRolloutCommand() *cobra.Command { return newRolloutCommandWith(clock.RealClock{}) }

// newRolloutCommandWith returns `mpool rollout` planning at clk's time.
func newRolloutCommandWith(clk clock.PassiveClock) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout",
		Short: "Follow, plan, pause, resume and undo the rollout of a MachinePool",
		Long: `A MachinePool rolls when its instance model changes (version, image, instance
size, ...): the rollout engine replaces stale instances within the pool's maxSurge
and maxUnavailable budgets, draining each Node before its instance is deleted.`,
		Args: cobra.NoArgs,
	}
	cf := addClientFlags(cmd.PersistentFlags())
	cmd.AddCommand(
		newRolloutStatusCommand(cf),
		newRolloutPlanCommand(cf, clk),
		newRolloutPauseCommand(cf, true),
		newRolloutPauseCommand(cf, false),
		newRolloutHistoryCommand(cf),
		newRolloutUndoCommand(cf),
	)
	return cmd
}

func newRolloutPauseCommand(cf *clientFlags, pause bool) *cobra.Command {
	use, short := "resume NAME", "Resume a paused rollout"
	if pause {
		use, short = "pause NAME", "Pause the rollout of a MachinePool: nothing is created or deleted until resumed"
	}
	return &cobra.Command{
		Use:   use,
		Short: short,
		Long: short + `.

It sets (pause) or removes (resume) the annotation ` + rolloutPausedAnnotation + `: "true" on the
MachinePool. While paused the engine still reports status but creates and deletes
no instance, whatever the model, the replicas or the budgets say.

Resume also lifts a pause the engine set itself on a rollout that stopped making
progress (RolloutProgressing False, reason ProgressDeadlineExceeded or
ReplacementsFailing): it removes the annotation ` + preview.RolloutProgressAnnotation + ` from the
infrastructure pool, and the progress deadline and the count of failed
replacements start again.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			mc, err := cf.connect()
			if err != nil {
				return err
			}
			return setRolloutPaused(cmd.Context(), mc, mc.namespace, args[0], pause, cmd.OutOrStdout())
		},
	}
}

// ResumeRollout resumes, as `mpool rollout resume` does, the rollout of
// MachinePool ns/name: it removes the pause annotation, and the progress
// record of a rollout the engine paused itself.
func ResumeRollout(ctx context.Context, c client.Client, ns, name string, w io.Writer) error {
	return setRolloutPaused(ctx, c, ns, name, false, w)
}

// setRolloutPaused sets or removes the pause annotation on the MachinePool
// ns/name with a merge patch and says what it did. Resuming also lifts a
// pause the engine set itself (a rollout that stopped making progress): it
// removes the engine's progress record from the infrastructure pool, which
// restarts the progress deadline and the count of failed replacements.
func setRolloutPaused(ctx context.Context, c client.Client, ns, name string, pause bool, w io.Writer) error {
	mp := &clusterv1.MachinePool{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, mp); err != nil {
		return notFound(err, "machinepool", ns, name)
	}
	id := fmt.Sprintf("machinepool %s/%s", ns, name)
	var selfPaused string
	var pool client.Object
	if !pause {
		ref := mp.Spec.Template.Spec.InfrastructureRef
		if a := adapterOf(ref); a != nil {
			pool = a.NewPool()
			switch err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, pool); {
			case apierrors.IsNotFound(err):
				pool = nil
			case err != nil:
				return fmt.Errorf("reading %s %s/%s: %w", ref.Kind, ns, ref.Name, err)
			default:
				selfPaused, _ = preview.SelfPaused(pool.GetAnnotations())
			}
		}
	}
	if rolloutPaused(mp) == pause && selfPaused == "" {
		msg := "rollout is not paused; nothing to do"
		if pause {
			msg = "rollout is already paused; nothing to do"
		}
		_, err := fmt.Fprintf(w, "%s: %s\n", id, msg)
		return err
	}
	if selfPaused != "" {
		if err := c.Patch(ctx, pool, client.RawPatch(types.MergePatchType, annotationPatch(preview.RolloutProgressAnnotation, nil))); err != nil {
			return fmt.Errorf("patching %s %s: %w", mp.Spec.Template.Spec.InfrastructureRef.Kind, pool.GetName(), err)
		}
		if _, err := fmt.Fprintf(w, "%s: the rollout the engine had paused (%s) resumed (annotation %s removed from %s); the progress deadline starts again\n",
			id, selfPaused, preview.RolloutProgressAnnotation, mp.Spec.Template.Spec.InfrastructureRef.Kind+"/"+pool.GetName()); err != nil {
			return err
		}
		if !rolloutPaused(mp) {
			return nil
		}
	}
	var value any // nil removes the annotation
	if pause {
		value = "true"
	}
	if err := c.Patch(ctx, mp, client.RawPatch(types.MergePatchType, annotationPatch(rolloutPausedAnnotation, value))); err != nil {
		return fmt.Errorf("patching %s: %w", id, err)
	}
	var err error
	if pause {
		_, err = fmt.Fprintf(w, "%s: rollout paused (annotation %s=\"true\" set); resume with 'mpool rollout resume %s'\n", id, rolloutPausedAnnotation, name)
	} else {
		_, err = fmt.Fprintf(w, "%s: rollout resumed (annotation %s removed)\n", id, rolloutPausedAnnotation)
	}
	return err
}

// annotationPatch is a merge patch that sets annotation key to value, or
// removes it when value is nil.
func annotationPatch(key string, value any) []byte {
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{key: value}}})
	return b
}
