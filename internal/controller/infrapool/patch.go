package infrapool

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/internal/condition"
	"github.com/mpool-dev/mpool/internal/provider/contract"
)

// patch writes the pool once at the end of a reconcile: a patch of metadata
// and spec when they changed, and a status patch when the status changed.
// Nothing is sent when nothing changed. The metadata (the engine's records:
// the rollout's progress, a pause, a blue-green phase) goes first, so that
// whoever sees a condition that speaks of a record finds the record too
// ('mpool rollout plan' reads both); for a pool being deleted the status
// goes first, so that dropping the finalizer comes last.
//
// The status is diffed against what this engine last wrote, not against
// the cache, when the two differ. The engine is the status's only writer,
// and its pool watch ignores status-only changes, so a cache that has not
// caught up with its last write is the likely reason: a reconcile that ran
// right after a failed one (whose status said "not observed") would
// otherwise compute the status the stale cache still holds, send nothing,
// and leave the failed reconcile's status on the server with no event to
// correct it.
func (e *Engine) patch(ctx context.Context, s *pass) error {
	var errs []error
	base := s.before
	if last, ok := e.status.get(s.pool.GetUID()); ok && !equalField(base, last, "Status") {
		base = s.before.DeepCopyObject().(contract.Pool)
		copyField(base, last, "Status")
	}
	patchMeta := func() {
		if !equalMeta(s.before, s.pool) || !equalField(s.before, s.pool, "Spec") {
			// The status goes in a patch of its own: the API server
			// ignores it here, and would still parse and merge it.
			obj := s.pool.DeepCopyObject().(client.Object)
			copyField(obj, s.before.DeepCopyObject().(client.Object), "Status")
			switch sent, err := mergePatch(ctx, e.c, obj, s.before, false); {
			case err == nil && sent && obj.GetGeneration() > s.pool.GetGeneration() && equalField(obj, s.pool, "Spec"):
				// The engine's own spec write (the providerIDList) moved
				// the generation, and the spec the server holds is the
				// one this pass acted on: the status about to be written
				// observed the new generation. Stamped with the old one,
				// the next pass would write the status again for it alone.
				restamp(s.pool, s.pool.GetGeneration(), obj.GetGeneration())
			case client.IgnoreNotFound(err) != nil:
				errs = append(errs, fmt.Errorf("patching %s %s: %w", e.a.Kinds().Pool, s.pool.GetName(), err))
			}
		}
	}
	patchStatus := func() {
		if !s.quiet && !equalField(base, s.pool, "Status") {
			// Only the status: the metadata and spec went in their own
			// patch, and the status subresource ignores them.
			obj := base.DeepCopyObject().(contract.Pool)
			copyField(obj, s.pool.DeepCopyObject().(client.Object), "Status")
			switch sent, err := mergePatch(ctx, e.c, obj, base, true); {
			case err == nil && sent:
				e.status.set(s.pool.GetUID(), obj)
			case client.IgnoreNotFound(err) != nil:
				errs = append(errs, fmt.Errorf("patching the status of %s %s: %w", e.a.Kinds().Pool, s.pool.GetName(), err))
			}
		}
	}
	if s.pool.GetDeletionTimestamp().IsZero() {
		patchMeta()
		patchStatus()
	} else {
		patchStatus()
		patchMeta()
	}
	return errors.Join(errs...)
}

// restamp moves pool from generation from to generation to: its
// metadata.generation, its status.observedGeneration and each condition's
// observedGeneration that was from (the MachinePool controller's
// observeOwnSpecWrite, for a pool kind the engine knows only by contract).
func restamp(pool contract.Pool, from, to int64) {
	pool.SetGeneration(to)
	if f := field(pool, "Status"); f.IsValid() && f.Kind() == reflect.Struct {
		if g := f.FieldByName("ObservedGeneration"); g.IsValid() && g.Kind() == reflect.Int64 && g.CanSet() && g.Int() == from {
			g.SetInt(to)
		}
	}
	condition.MoveGeneration(pool, from, to)
}

// mergePatch sends the merge patch that takes base to obj, to obj's status
// when status is set, and reports whether it sent one: a patch that would
// be empty (the two differ only where JSON does not show it, such as a
// time's fraction of a second or a nil and an empty list) is not sent. obj
// takes the API server's answer.
func mergePatch(ctx context.Context, c client.Client, obj, base client.Object, status bool) (bool, error) {
	data, err := client.MergeFrom(base).Data(obj)
	if err != nil {
		return false, err
	}
	if string(data) == "{}" {
		return false, nil
	}
	p := client.RawPatch(types.MergePatchType, data)
	if status {
		return true, c.Status().Patch(ctx, obj, p)
	}
	return true, c.Patch(ctx, obj, p)
}

// equalField compares the named top-level field (Spec or Status) of two
// objects of the same API type. Pool and per-instance types follow the
// Kubernetes convention of Spec and Status fields; comparing them, rather
// than whole objects with their managed fields, keeps a reconcile of a
// large pool cheap. The comparison is exact (reflect.DeepEqual): the engine
// compares what it read with what it computed from it, so equal values are
// identical, times included.
func equalField(a, b client.Object, name string) bool {
	fa, fb := field(a, name), field(b, name)
	if !fa.IsValid() || !fb.IsValid() {
		return equality.Semantic.DeepEqual(a, b)
	}
	return reflect.DeepEqual(fa.Interface(), fb.Interface())
}

// copyField sets dst's named top-level field to src's, shallowly: what the
// field points to is shared.
func copyField(dst, src client.Object, name string) {
	if fd, fs := field(dst, name), field(src, name); fd.IsValid() && fs.IsValid() && fd.CanSet() {
		fd.Set(fs)
	}
}

func field(obj client.Object, name string) reflect.Value {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return v.Elem().FieldByName(name)
}

// equalMeta compares the metadata the engine writes.
func equalMeta(a, b client.Object) bool {
	return equality.Semantic.DeepEqual(a.GetAnnotations(), b.GetAnnotations()) &&
		equality.Semantic.DeepEqual(a.GetLabels(), b.GetLabels()) &&
		equality.Semantic.DeepEqual(a.GetFinalizers(), b.GetFinalizers()) &&
		equality.Semantic.DeepEqual(a.GetOwnerReferences(), b.GetOwnerReferences())
}
