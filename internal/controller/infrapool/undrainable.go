package infrapool

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/log"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/drain"
	"github.com/mpool-dev/mpool/internal/events"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/rollout"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// readDisruptionPolicy reads what bounds the rollout's voluntary
// disruption: the maintenance window (held stale instances wait for it,
// and the pool is reconciled again when it opens or closes) and what to do
// with a Node that cannot be drained.
func (e *Engine) readDisruptionPolicy(s *pass) {
	owner := s.ownerObject()
	hold, w, err := preview.WindowHold(s.now, owner, s.pool)
	s.windowErr = err
	// A cloud that runs its own rollouts replaces no stale instance here;
	// its own update is outside mpool's windows (documented).
	if !e.cloudRollouts() {
		s.windowHold = hold
		if w != nil {
			if _, until := w.At(s.now); until.After(s.now) {
				s.requeueAfter(until.Sub(s.now))
			}
		}
	}
	s.undrainable, s.undrainableErr = preview.ReadUndrainableNodeBehavior(owner, s.pool)
}

// voluntary reports whether the removal of instance id is a rollout's
// replacement — a voluntary disruption — rather than a removal the user
// asked for (delete-machine, a Machine or per-instance object being
// deleted, a lower replica count) or a remediation: it runs an older model
// and nothing else asks for its removal. Only those are bound by the
// pool's undrainable-node behavior.
func (e *Engine) voluntary(s *pass, id string, reason rollout.DeleteReason) bool {
	switch reason {
	case rollout.ReasonStale:
		return true
	case rollout.ReasonDeleting:
	default:
		return false
	}
	for _, in := range s.input.Instances {
		if in.ID != id {
			continue
		}
		if in.ModelHash == s.modelHash || in.MarkedForDeletion || in.Remediate {
			return false
		}
		obj := s.objects[id]
		if obj == nil || !obj.GetDeletionTimestamp().IsZero() {
			return false
		}
		m := s.machines[obj.GetName()]
		return m == nil || m.DeletionTimestamp.IsZero()
	}
	return false
}

// keepUndrainable keeps an instance whose Node a rollout could not drain
// within nodeDrainTimeout, as the pool's undrainable-node behavior says:
// Schedule makes the Node schedulable again and pauses the rollout,
// Cordon leaves the Node cordoned and labelled and the instance out of the
// plan. Either way the removal ends: the drain-started annotation goes, so
// that the instance is live again (Schedule) or quarantined (Cordon).
func (e *Engine) keepUndrainable(ctx context.Context, s *pass, inst scalegroup.Instance, node *corev1.Node, why string, res drain.Result, mu *sync.Mutex) error {
	obj := s.objects[inst.ID]
	cs, err := e.clientsets.get(ctx, s.cluster)
	if err != nil {
		return err
	}
	budgets := res.Budgets
	blockers := "no PodDisruptionBudget named in the refusals"
	switch {
	case len(budgets) > 0:
		blockers = "PodDisruptionBudget " + strings.Join(budgets, ", ")
	case len(res.Terminating) > 0 && len(res.Terminating) == len(res.Remaining):
		blockers = "no PodDisruptionBudget: the evicted pods' termination grace period outlasts nodeDrainTimeout"
	}
	logger := log.FromContext(ctx).WithValues("instance", inst.ID, "node", node.Name, "budgets", budgets, "behavior", s.undrainable)
	timeout := drainTimeout(s)
	switch s.undrainable {
	case preview.UndrainableSchedule:
		if err := drain.Uncordon(ctx, cs, node.Name); err != nil {
			return err
		}
		if err := e.endRemoval(ctx, s, obj, ""); err != nil {
			return err
		}
		msg := fmt.Sprintf("Node %s of instance %s was not drained within nodeDrainTimeout %s (%s; blocked by %s): the instance is kept and its Node schedulable again",
			node.Name, inst.ID, timeout, why, blockers)
		mu.Lock()
		e.pauseForDrain(s, msg)
		mu.Unlock()
		logger.Info("Drain blocked: keeping the instance and pausing the rollout")
		e.event(s, obj, corev1.EventTypeWarning, events.DrainBlocked, events.ActionDrain,
			"Rollout paused: %s. Resume with 'mpool rollout resume %s' once the PodDisruptionBudget allows the eviction", msg, ownerName(s))
	case preview.UndrainableCordon:
		if err := quarantineNode(ctx, cs, node.Name); err != nil {
			return err
		}
		if err := e.endRemoval(ctx, s, obj, s.now.UTC().Format(time.RFC3339)); err != nil {
			return err
		}
		logger.Info("Drain blocked: the instance is quarantined, its Node left cordoned; the rollout goes on")
		e.event(s, obj, corev1.EventTypeWarning, events.NodeQuarantined, events.ActionDrain,
			"Node %s of instance %s was not drained within nodeDrainTimeout %s (%s; blocked by %s): the instance is kept, its Node cordoned and labelled %s=%s, and the rollout goes on without it. "+
				"Mark its Machine with %s to delete it",
			node.Name, inst.ID, timeout, why, blockers, preview.UpgradeStatusLabel, preview.QuarantinedStatus, "cluster.x-k8s.io/delete-machine")
	}
	e.tracker.drop(s.pool.GetUID(), inst.ID)
	mu.Lock()
	delete(s.removing, inst.ID)
	s.kept[inst.ID] = true
	mu.Unlock()
	return nil
}

// endRemoval removes the drain-started annotation of obj and, when
// quarantined is not empty, records the quarantine.
func (e *Engine) endRemoval(ctx context.Context, s *pass, obj contract.InstanceObject, quarantined string) error {
	return e.patchInstanceMeta(ctx, obj, "keeping undrainable instance", func(after contract.InstanceObject) {
		a := withoutEntry(after.GetAnnotations(), preview.DrainStartedAnnotation)
		if quarantined != "" {
			a = withEntry(a, preview.QuarantinedAnnotation, quarantined)
		}
		after.SetAnnotations(a)
	})
}

// pauseForDrain pauses the rollout on the pool's progress record, with
// reason DrainBlocked (several blocked drains in one reconcile say each).
// The record lives on the pool, so a restarted manager keeps the pause;
// 'mpool rollout resume' or a new model lifts it, as the engine's other
// pauses.
func (e *Engine) pauseForDrain(s *pass, msg string) {
	a := s.pool.GetAnnotations()
	rec, ok := preview.ParseRolloutProgress(a[preview.RolloutProgressAnnotation])
	if !ok || rec.Model != s.modelHash {
		rec = preview.RolloutProgress{Model: s.modelHash, ProgressAt: s.now}
	}
	switch {
	case rec.Paused == infrav1.DrainBlockedReason && !strings.Contains(rec.Message, msg):
		rec.Message += "; " + msg
	case rec.Paused == "":
		rec.Paused, rec.Message = infrav1.DrainBlockedReason, msg
	}
	s.pool.SetAnnotations(withEntry(a, preview.RolloutProgressAnnotation, rec.String()))
	s.selfPaused = &rec
}

// quarantineNode labels a workload Node left cordoned by the Cordon
// behavior, as AKS labels its own (kubernetes.azure.com/upgrade-status).
func quarantineNode(ctx context.Context, cs kubernetes.Interface, name string) error {
	if err := markNode(ctx, cs, name, preview.UpgradeStatusLabel, preview.QuarantinedStatus); err != nil {
		return fmt.Errorf("labelling Node %s quarantined: %w", name, err)
	}
	return nil
}

// markNode cordons the Node name and sets its label to value, or, with an
// empty value, makes it schedulable again and removes the label: the
// rollout's marks on the Nodes it keeps out of service (quarantined,
// blue). One merge patch, sent whatever a cache says of the Node.
func markNode(ctx context.Context, cs kubernetes.Interface, name, label, value string) error {
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}},"spec":{"unschedulable":true}}`, label, value)
	if value == "" {
		patch = fmt.Sprintf(`{"metadata":{"labels":{%q:null}},"spec":{"unschedulable":false}}`, label)
	}
	_, err := cs.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}
