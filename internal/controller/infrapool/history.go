package infrapool

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mpool-dev/mpool/internal/events"
	"github.com/mpool-dev/mpool/internal/history"
	"github.com/mpool-dev/mpool/internal/preview"
)

// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=get;list;create;update;delete

// recordRevision keeps the MachinePool's revision history (internal/history):
// when the pool's model or its settings applied in place (its spec hash) are
// not the ones last recorded, it records them — a new revision, an older one
// moved to the top, or the newest updated — and remembers the hash on the
// pool (history.RecordedAnnotation), so a pool at rest costs nothing. A
// paused rollout records nothing (`mpool rollout undo` writes three objects
// under a pause), nor does a pool without bootstrap data yet. A failure is
// logged and asked again next reconcile: history never stops a rollout.
func (e *Engine) recordRevision(ctx context.Context, s *pass) {
	if s.owner == nil || s.modelHash == "" || s.paused || !s.bootstrap ||
		s.pool.GetAnnotations()[history.RecordedAnnotation] == s.specHash {
		return
	}
	logger := log.FromContext(ctx)
	pool := s.pool.DeepCopyObject().(client.Object)
	gvk, err := e.c.GroupVersionKindFor(pool)
	if err != nil {
		logger.Error(err, "Recording the revision: the pool's kind")
		return
	}
	pool.GetObjectKind().SetGroupVersionKind(gvk)
	bootstrap, err := e.bootstrapConfig(ctx, s)
	if err != nil {
		logger.Info("Recording the revision without the bootstrap config", "error", err.Error())
	}
	snap, err := history.TakeSnapshot(s.owner, pool, bootstrap)
	if err != nil {
		logger.Error(err, "Recording the revision")
		return
	}
	limit, err := history.HistoryLimit(s.owner)
	if err != nil {
		logger.Info("Invalid revision history limit", "error", err.Error())
	}
	n, err := history.Record(ctx, e.reader, e.c, s.owner, s.modelHash, snap, limit)
	if err != nil {
		logger.Error(err, "Recording the revision")
		return
	}
	logger.V(1).Info("Recorded the revision", "revision", n, "modelHash", s.modelHash)
	s.pool.SetAnnotations(withEntry(s.pool.GetAnnotations(), history.RecordedAnnotation, s.specHash))
}

// bootstrapConfig reads the MachinePool's bootstrap config (nil when it
// names its bootstrap data directly), uncached: it is read only when the
// model changes.
func (e *Engine) bootstrapConfig(ctx context.Context, s *pass) (client.Object, error) {
	ref := s.owner.Spec.Template.Spec.Bootstrap.ConfigRef
	if !ref.IsDefined() {
		return nil, nil
	}
	m, err := e.c.RESTMapper().RESTMapping(schema.GroupKind{Group: ref.APIGroup, Kind: ref.Kind})
	if err != nil {
		return nil, fmt.Errorf("the bootstrap config's kind %s: %w", ref.Kind, err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(m.GroupVersionKind)
	if err := e.reader.Get(ctx, types.NamespacedName{Namespace: s.owner.Namespace, Name: ref.Name}, u); err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", ref.Kind, ref.Name, err)
	}
	return u, nil
}

// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machinepools,verbs=patch;update
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=kubeadmconfigs,verbs=get;update

// rollBack undoes the change whose rollout the engine just paused (rec),
// when the pool asks for it (preview.AutoRollbackAnnotation): it restores the
// newest revision of another model, as `mpool rollout undo` does, and the
// next reconcile rolls the pool back to it within the budgets. A model the
// engine rolled back to is not rolled back again (no ping-pong between two
// models that both fail): its rollout stays paused. What it did is said by an
// event, the log and the pool's preview.RolledBackAnnotation.
//
// It is tried on every reconcile of the paused rollout until it is done (a
// restore that failed, on a conflict say, is tried again); a refusal is
// said once, when the engine pauses the rollout (announce).
func (e *Engine) rollBack(ctx context.Context, s *pass, rec *preview.RolloutProgress, announce bool) {
	if s.owner == nil || !preview.AutoRollback(s.owner, s.pool) {
		return
	}
	logger := log.FromContext(ctx)
	refuse := func(why string) {
		if !announce {
			logger.V(1).Info("Not rolling back automatically", "reason", why)
			return
		}
		logger.Info("Not rolling back automatically", "reason", why)
		e.rec.Eventf(s.pool, nil, corev1.EventTypeWarning, events.RolledBack, events.ActionReconcile,
			"Automatic rollback not done: %s. The rollout stays paused", why)
	}
	last, ok := preview.ParseRollBack(s.pool.GetAnnotations()[preview.RolledBackAnnotation])
	switch {
	case ok && last.From == s.modelHash:
		// Done: the restored template reaches this pool's next reconcile.
		return
	case ok && last.To == s.modelHash:
		refuse(fmt.Sprintf("model %s is itself the result of an automatic rollback (from model %s)", s.modelHash, last.From))
		return
	}
	revs, err := history.List(ctx, e.reader, s.owner)
	if err != nil {
		refuse(err.Error())
		return
	}
	var target *history.Revision
	for i := len(revs) - 1; i >= 0 && target == nil; i-- {
		if revs[i].ModelHash != s.modelHash {
			target = &revs[i]
		}
	}
	if target == nil {
		refuse("the MachinePool has no earlier revision ('mpool rollout history " + s.owner.Name + "')")
		return
	}
	if err := history.Restore(ctx, e.c, s.owner, *target, preview.RolloutPausedAnnotation); err != nil {
		refuse(err.Error())
		return
	}
	rb := preview.RollBack{From: s.modelHash, To: target.ModelHash, Revision: target.Number, Reason: rec.Paused}
	s.pool.SetAnnotations(withEntry(s.pool.GetAnnotations(), preview.RolledBackAnnotation, rb.String()))
	logger.Info("Rolled back automatically", "from", rb.From, "to", rb.To, "revision", rb.Revision, "reason", rb.Reason)
	e.rec.Eventf(s.pool, nil, corev1.EventTypeWarning, events.RolledBack, events.ActionReconcile,
		"The rollout of model %s stopped (%s: %s); rolled back to revision %d (model %s), which the pool now rolls to within its budgets",
		rb.From, rb.Reason, rec.Message, rb.Revision, rb.To)
}
