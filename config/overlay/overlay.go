// Package overlay renders config/'s kustomizations — the deploy overlays
// config/default, config/providers and config/pools — as `kubectl
// kustomize` does, and applies what they render as `kubectl apply` would,
// for the tests that deploy mpool as its manifests say (config/deploytest,
// test/interop/deployed).
package overlay

import (
	"context"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Render renders the kustomization in the directory dir as `kubectl
// kustomize dir` would.
func Render(dir string) ([]*unstructured.Unstructured, error) {
	rm, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	var out []*unstructured.Unstructured
	for _, r := range rm.Resources() {
		j, err := r.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("rendering %s: %w", r.CurId(), err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(j); err != nil {
			return nil, fmt.Errorf("rendering %s: %w", r.CurId(), err)
		}
		out = append(out, u)
	}
	return out, nil
}

// Apply creates objs with c, Namespaces first (as `kubectl apply` needs
// them to exist), and replaces those that exist already.
func Apply(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	objs = append([]*unstructured.Unstructured(nil), objs...)
	sort.SliceStable(objs, func(i, j int) bool { return objs[i].GetKind() == "Namespace" && objs[j].GetKind() != "Namespace" })
	for _, o := range objs {
		o := o.DeepCopy()
		err := c.Create(ctx, o)
		if apierrors.IsAlreadyExists(err) {
			existing := &unstructured.Unstructured{}
			existing.SetGroupVersionKind(o.GroupVersionKind())
			if err = c.Get(ctx, client.ObjectKeyFromObject(o), existing); err == nil {
				o.SetResourceVersion(existing.GetResourceVersion())
				err = c.Update(ctx, o)
			}
		}
		if err != nil {
			return fmt.Errorf("applying %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}
