package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/api/conditions"
	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/rollout"
)

// defaultWatchTimeout bounds `rollout status --watch`.
const defaultWatchTimeout = 15 * time.Minute

type rolloutStatusOptions struct {
	watch   bool
	timeout time.Duration
	output  *outputFormat
}

func newRolloutStatusCommand(cf *clientFlags) *cobra.Command {
	o := rolloutStatusOptions{}
	cmd := &cobra.Command{
		Use:   "status NAME",
		Short: "Show the progress of a MachinePool's rollout",
		Long: `Show the progress of a MachinePool's rollout: how many instances run the current
model out of the desired replicas, how much of the surge budget is in use, how many
replicas are unavailable, and what the rollout is waiting for.

With --watch, print again on every change (the objects are watched, not polled)
until the rollout is complete — every desired replica up to date and available —
or --timeout passes (non-zero exit) or it is interrupted. It also ends, with a
non-zero exit, when the engine stops the rollout itself: the cloud cannot create
the new model (RolloutBlocked), or the rollout stopped making progress and was
paused (ProgressDeadlineExceeded, ReplacementsFailing).`,
		Args: cobra.ExactArgs(1),
	}
	fs := cmd.Flags()
	fs.BoolVarP(&o.watch, "watch", "w", false, "Print again on every change until the rollout is complete")
	fs.DurationVar(&o.timeout, "timeout", defaultWatchTimeout, "With --watch, give up (non-zero exit) after this long")
	o.output = addOutputFlag(fs)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if o.timeout <= 0 {
			return fmt.Errorf("--timeout must be positive, got %s", o.timeout)
		}
		mc, err := cf.connect()
		if err != nil {
			return err
		}
		ns, name, w := mc.namespace, args[0], cmd.OutOrStdout()
		if !o.watch {
			s, err := collectPool(cmd.Context(), mc, ns, name, collectOptions{})
			if err != nil {
				return err
			}
			_, err = io.WriteString(w, formatRolloutStatus(rolloutStatus(s), *o.output))
			return err
		}
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		ctx, cancel := context.WithTimeout(ctx, o.timeout)
		defer cancel()
		err = watchRollout(ctx, mc, ns, name, func(v RolloutStatusView) error {
			text := formatRolloutStatus(v, *o.output)
			if *o.output == "yaml" {
				text = "---\n" + text // a stream of documents
			}
			_, err := io.WriteString(w, text)
			return err
		})
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			return fmt.Errorf("timed out after %s waiting for the rollout of machinepool %s/%s to complete", o.timeout, ns, name)
		case errors.Is(err, context.Canceled):
			return fmt.Errorf("interrupted before the rollout of machinepool %s/%s completed", ns, name)
		}
		return err
	}
	return cmd
}

// rolloutStatus computes the rollout status of a collected pool.
func rolloutStatus(s *poolState) RolloutStatusView {
	mp := s.pool
	v := RolloutStatusView{
		Namespace: mp.Namespace,
		Name:      mp.Name,
		Paused:    rolloutPaused(mp),
		Desired:   desiredReplicas(mp),
		Available: ptr.Deref(mp.Status.AvailableReplicas, 0),
	}
	for _, c := range s.infra.conditions {
		if c.Type == rolloutProgressingCondition && rollout.IsBlueGreenPhase(c.Reason) {
			v.BlueGreen = c.Reason
		}
		if c.Type == rolloutProgressingCondition && c.Status == metav1.ConditionFalse {
			switch c.Reason {
			case infrav1.RolloutBlockedReason, infrav1.ProgressDeadlineExceededReason, infrav1.ReplacementsFailingReason, infrav1.DrainBlockedReason:
				v.Stopped = c.Reason
			}
		}
	}
	for _, in := range s.instances {
		switch {
		case in.Deleting:
			v.Deleting++
		case in.State == string(contract.InstanceFailed):
			v.Failed++
		case in.Quarantined && !in.MarkedForDeletion:
			v.Quarantined++
		default:
			v.Replicas++
			if in.UpToDate != nil {
				if *in.UpToDate {
					v.UpToDate++
				} else {
					v.Stale++
				}
			}
			if in.Ready {
				v.Ready++
			}
		}
	}
	v.Unavailable = max(0, v.Desired-v.Available)
	v.SurgeInUse = max(0, v.Replicas-v.Desired)
	if r := s.infra.rollout; r != nil {
		v.MaxSurge = resolveBudget(r.Strategy.MaxSurge, v.Desired, true)
		v.MaxUnavailable = resolveBudget(r.Strategy.MaxUnavailable, v.Desired, false)
	}
	observed := mp.Status.ObservedGeneration >= mp.Generation && s.infra.observedGeneration >= s.infra.generation
	v.Complete = s.infra.view.Found && observed &&
		v.Replicas == v.Desired && v.UpToDate == v.Desired && v.Available >= v.Desired &&
		v.Deleting == 0 && v.Failed == 0
	if !v.Complete {
		v.Waiting = waitingFor(s, &v)
	}
	return v
}

// resolveBudget resolves an integer or percentage budget against desired:
// surge rounds up, unavailable down, as the rollout engine does.
func resolveBudget(b *intstr.IntOrString, desired int32, roundUp bool) *int32 {
	if b == nil {
		return nil
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(b, int(desired), roundUp)
	if err != nil {
		return nil
	}
	return ptr.To(int32(n))
}

// conditionsImpliedByCounts are conditions whose news the counts already
// tell; waitingFor leaves them out.
var conditionsImpliedByCounts = map[string]bool{
	clusterv1.ReadyCondition:                   true,
	conditions.ReplicasReadyCondition:          true,
	conditions.AvailableCondition:              true,
	conditions.UpToDateCondition:               true,
	conditions.ScalingUpCondition:              true,
	conditions.ScalingDownCondition:            true,
	infrav1.ScaleGroupModelUpdatedCondition:    true,
	infrav1.ScaleGroupDesiredReplicasCondition: true,
	clusterv1.PausedCondition:                  true,
	rolloutProgressingCondition:                true,
}

// waitingFor says what an incomplete rollout waits for, from the objects'
// generations, the pause annotation, the conditions and the counts.
func waitingFor(s *poolState, v *RolloutStatusView) []string {
	mp, infra := s.pool, s.infra
	kind := infra.view.Kind
	var out []string
	if !infra.view.Found {
		return append(out, fmt.Sprintf("%s %s to be created", kind, infra.view.Name))
	}
	if v.Paused {
		out = append(out, fmt.Sprintf("the rollout to be resumed (annotation %s=\"true\"): run 'mpool rollout resume %s'", rolloutPausedAnnotation, mp.Name))
	}
	if g, o := mp.Generation, mp.Status.ObservedGeneration; o < g {
		out = append(out, fmt.Sprintf("the MachinePool controller to observe generation %d (observed %d)", g, o))
	}
	if g, o := infra.generation, infra.observedGeneration; o < g {
		out = append(out, fmt.Sprintf("the %s controller to observe generation %d (observed %d)", kind, g, o))
	}
	for _, c := range mp.Status.Conditions {
		if needsAttention(c) && !conditionsImpliedByCounts[c.Type] {
			out = append(out, conditionLine("MachinePool", c))
		}
	}
	engine := false
	for _, c := range infra.conditions {
		switch {
		case c.Type == rolloutProgressingCondition && needsAttention(c) && !(v.Paused && c.Reason == clusterv1.PausedReason):
			// The engine's own account; when paused by the MachinePool's
			// annotation the line above says it (the engine also honours
			// the annotation on the infrastructure pool).
			engine = true
			out = append(out, conditionLine(kind, c))
		case needsAttention(c) && !conditionsImpliedByCounts[c.Type]:
			out = append(out, conditionLine(kind, c))
		}
	}
	if engine {
		return out
	}
	// The engine does not say: tell it from the counts.
	if v.Stale > 0 {
		out = append(out, fmt.Sprintf("%d stale instances to be replaced", v.Stale))
	}
	if n := v.Desired - v.Replicas; n > 0 {
		out = append(out, fmt.Sprintf("%d more instances to be created", n))
	}
	if v.Deleting > 0 {
		out = append(out, fmt.Sprintf("%d instances to finish deleting", v.Deleting))
	}
	if v.Failed > 0 {
		out = append(out, fmt.Sprintf("%d failed instances to be replaced", v.Failed))
	}
	if n := v.Replicas - v.Ready; n > 0 {
		out = append(out, fmt.Sprintf("%d instances to become Ready", n))
	}
	if v.SurgeInUse > 0 && v.Stale == 0 {
		out = append(out, fmt.Sprintf("%d surplus instances to be removed", v.SurgeInUse))
	}
	if n := v.Desired - v.Available; n > 0 {
		out = append(out, fmt.Sprintf("%d replicas to become available", n))
	}
	return out
}

func conditionLine(kind string, c metav1.Condition) string {
	return fmt.Sprintf("%s %s=%s %s", kind, c.Type, c.Status, joinNonEmpty(": ", c.Reason, c.Message))
}

// formatRolloutStatus renders a rollout status as text, JSON or YAML.
func formatRolloutStatus(v RolloutStatusView, format outputFormat) string {
	if format != "" {
		var b strings.Builder
		if err := writeStructured(&b, format, v); err != nil {
			return err.Error() + "\n"
		}
		return b.String()
	}
	var b strings.Builder
	state := "rollout in progress"
	switch {
	case v.Complete:
		state = "rollout complete"
	case v.Stopped == infrav1.RolloutBlockedReason:
		state = "rollout blocked"
	case v.Stopped != "":
		state = "rollout paused by the engine (" + v.Stopped + ")"
	case v.Paused:
		state = "rollout paused"
	}
	if v.BlueGreen != "" && !v.Complete {
		state += ", blue-green: " + v.BlueGreen
	}
	fmt.Fprintf(&b, "machinepool %s/%s: %s\n", v.Namespace, v.Name, state)
	line := func(label, format string, args ...any) {
		fmt.Fprintf(&b, "  %-12s %s\n", label, fmt.Sprintf(format, args...))
	}
	upToDate := fmt.Sprintf("%d of %d", v.UpToDate, v.Desired)
	if v.Stale > 0 {
		upToDate += fmt.Sprintf(" (%d stale)", v.Stale)
	}
	line("up to date", "%s", upToDate)
	surge := fmt.Sprintf("surge in use %d", v.SurgeInUse)
	if v.MaxSurge != nil {
		surge += fmt.Sprintf(" of %d", *v.MaxSurge)
	}
	line("replicas", "%d of %d, %s", v.Replicas, v.Desired, surge)
	line("ready", "%d of %d", v.Ready, v.Desired)
	unavailable := fmt.Sprintf("unavailable %d", v.Unavailable)
	if v.MaxUnavailable != nil {
		unavailable += fmt.Sprintf(" (at most %d while rolling)", *v.MaxUnavailable)
	}
	line("available", "%d of %d, %s", v.Available, v.Desired, unavailable)
	if v.Deleting > 0 || v.Failed > 0 {
		line("removing", "%d deleting, %d failed", v.Deleting, v.Failed)
	}
	if v.Quarantined > 0 {
		line("quarantined", "%d (Nodes not drained, left cordoned: mark their Machines with cluster.x-k8s.io/delete-machine to delete them)", v.Quarantined)
	}
	if len(v.Waiting) > 0 {
		b.WriteString("  waiting for:\n")
		for _, w := range v.Waiting {
			fmt.Fprintf(&b, "  - %s\n", w)
		}
	}
	return b.String()
}
