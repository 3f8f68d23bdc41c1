package history

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Restore writes revision r back: the bootstrap config's spec, the
// infrastructure pool's spec (but the NotRestored fields, kept as they are)
// and the MachinePool's spec.template (but its data secret's name). The
// engine then rolls the pool to that model within the pool's budgets, as to
// any change. Three objects change, so the rollout is paused by the pause
// annotation (paused, the engine neither records a revision nor acts) from
// the first write until the last, which lifts it with the template; a pool
// the user had paused stays paused. If Restore fails half-way the pool is
// left paused, and the error says how to go on.
func Restore(ctx context.Context, c client.Client, mp *clusterv1.MachinePool, r Revision, pausedAnnotation string) error {
	userPaused := mp.Annotations[pausedAnnotation] == "true"
	if !userPaused {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{pausedAnnotation: "true"}}})
		if err := c.Patch(ctx, mp, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return fmt.Errorf("pausing the rollout of MachinePool %s/%s before restoring revision %d: %w", mp.Namespace, mp.Name, r.Number, err)
		}
	}
	halfway := func(err error) error {
		if userPaused {
			return err
		}
		return fmt.Errorf("%w; the rollout is left paused (annotation %s): run the undo again, or resume it", err, pausedAnnotation)
	}
	if b := r.Snapshot.Bootstrap; b != nil {
		if err := restoreSpec(ctx, c, mp.Namespace, *b); err != nil {
			return halfway(err)
		}
	}
	if err := restoreSpec(ctx, c, mp.Namespace, r.Snapshot.Infrastructure, NotRestored...); err != nil {
		return halfway(err)
	}
	var tmpl clusterv1.MachineTemplateSpec
	if err := json.Unmarshal(r.Snapshot.Template, &tmpl); err != nil {
		return halfway(fmt.Errorf("revision %d: %w", r.Number, err))
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		latest := &clusterv1.MachinePool{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(mp), latest); err != nil {
			return err
		}
		t := *tmpl.DeepCopy()
		t.Spec.Bootstrap.DataSecretName = latest.Spec.Template.Spec.Bootstrap.DataSecretName
		latest.Spec.Template = t
		if !userPaused {
			delete(latest.Annotations, pausedAnnotation)
		}
		return c.Update(ctx, latest)
	})
	if err != nil {
		return halfway(fmt.Errorf("restoring the template of MachinePool %s/%s: %w", mp.Namespace, mp.Name, err))
	}
	return nil
}

// restoreSpec replaces the spec of the object o names with o's, keeping
// the fields keep as they are now.
func restoreSpec(ctx context.Context, c client.Client, ns string, o Object, keep ...string) error {
	spec := map[string]any{}
	if err := json.Unmarshal(o.Spec, &spec); err != nil {
		return fmt.Errorf("the recorded spec of %s %s: %w", o.Kind, o.Name, err)
	}
	if spec == nil { // the recorded spec was null
		spec = map[string]any{}
	}
	// Controllers write these objects' status (a new resourceVersion): a
	// conflict is read again and retried.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(schema.FromAPIVersionAndKind(o.APIVersion, o.Kind))
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: o.Name}, u); err != nil {
			return err
		}
		restored := maps.Clone(spec)
		now, _, _ := unstructured.NestedMap(u.Object, "spec")
		for _, f := range keep {
			if v, ok := now[f]; ok {
				restored[f] = v
			}
		}
		u.Object["spec"] = restored
		return c.Update(ctx, u)
	})
	if err != nil {
		return fmt.Errorf("restoring the spec of %s %s/%s: %w", o.Kind, ns, o.Name, err)
	}
	return nil
}
