package infrapool

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mpool-dev/mpool/internal/history"
)

// +kubebuilder:rbac:groups=apps,resources=controllerrevisions,verbs=get;list;create;update;delete

// recordRevision keeps the MachinePool's revision history (internal/history):
// when the pool's model is not the one last recorded, it records it — a new
// revision, or an older one moved to the top — and remembers its hash on the
// pool (history.RecordedAnnotation), so a pool at rest costs nothing. A
// paused rollout records nothing (`mpool rollout undo` writes three objects
// under a pause), nor does a pool without bootstrap data yet. A failure is
// logged and asked again next reconcile: history never stops a rollout.
func (e *Engine) recordRevision(ctx context.Context, s *pass) {
	if s.owner == nil || s.modelHash == "" || s.paused || !s.bootstrap ||
		s.pool.GetAnnotations()[history.RecordedAnnotation] == s.modelHash {
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
	s.pool.SetAnnotations(withEntry(s.pool.GetAnnotations(), history.RecordedAnnotation, s.modelHash))
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
