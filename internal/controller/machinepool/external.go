package machinepool

import (
	"context"
	"fmt"
	"maps"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/internal/capi"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// refAPIVersion returns the apiVersion the object ref names is read at: the
// newest version its CRD's contract label names (capi.APIVersion).
func (r *Reconciler) refAPIVersion(ctx context.Context, ref clusterv1.ContractVersionedObjectReference) (string, error) {
	gvk, err := capi.RefGVK(ctx, r.Client, ref)
	if err != nil {
		return "", fmt.Errorf("resolving %s %s: %w", ref.Kind, ref.Name, err)
	}
	return gvk.GroupVersion().String(), nil
}

// getExternal reads the object ref points to in namespace, at apiVersion
// (refAPIVersion's, which callers also need for the watch).
func (r *Reconciler) getExternal(ctx context.Context, apiVersion string, ref clusterv1.ContractVersionedObjectReference, namespace string) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(apiVersion)
	obj.SetKind(ref.Kind)
	key := client.ObjectKey{Namespace: namespace, Name: ref.Name}
	if err := r.reader().Get(ctx, key, obj); err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", ref.Kind, key, err)
	}
	return obj, nil
}

// reader is where unstructured objects are read from: the manager's cache,
// or the client when not set up with a manager.
func (r *Reconciler) reader() client.Reader {
	if r.externalReader != nil {
		return r.externalReader
	}
	return r.Client
}

// reconcileExternalMetadata makes pool the controller owner of obj and
// labels obj with the cluster name, patching obj when that changes anything.
// A paused object is left alone.
func (r *Reconciler) reconcileExternalMetadata(ctx context.Context, pool *clusterv1.MachinePool, obj *unstructured.Unstructured) error {
	if _, paused := obj.GetAnnotations()[clusterv1.PausedAnnotation]; paused {
		return nil
	}
	refs, err := withControllerRef(obj.GetOwnerReferences(), pool)
	if err != nil {
		return fmt.Errorf("%s %s: %w", obj.GetKind(), klog.KObj(obj), err)
	}
	labels := obj.GetLabels()
	if ownerRefsEqual(refs, obj.GetOwnerReferences()) && labels[clusterv1.ClusterNameLabel] == pool.Spec.ClusterName {
		return nil
	}
	orig := obj.DeepCopy()
	newLabels := maps.Clone(labels)
	if newLabels == nil {
		newLabels = map[string]string{}
	}
	newLabels[clusterv1.ClusterNameLabel] = pool.Spec.ClusterName
	obj.SetLabels(newLabels)
	obj.SetOwnerReferences(refs)
	if owners, moved, err := r.FieldOwners.Upgrade(ctx, obj); err == nil && moved {
		// The config's own controller writes nothing before it has an
		// owner: its managed fields of v1beta1 move to v1beta2 with this
		// write, not one of their own (package fieldowners).
		obj.SetManagedFields(owners)
	}
	if err := r.Client.Patch(ctx, obj, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("setting the owner and cluster label of %s %s: %w", obj.GetKind(), klog.KObj(obj), err)
	}
	return nil
}

// withControllerRef returns refs with pool as the controller. A stale
// controller reference to a pool of the same name (recreated pool) is
// replaced; any other controller is an error.
func withControllerRef(refs []metav1.OwnerReference, pool *clusterv1.MachinePool) ([]metav1.OwnerReference, error) {
	want := *metav1.NewControllerRef(pool, clusterv1.GroupVersion.WithKind("MachinePool"))
	out := make([]metav1.OwnerReference, 0, len(refs)+1)
	found := false
	for _, ref := range refs {
		samePool := ref.Kind == want.Kind && ref.Name == want.Name && groupOf(ref.APIVersion) == clusterv1.GroupVersion.Group
		if ptr.Deref(ref.Controller, false) && !samePool {
			return nil, fmt.Errorf("already controlled by %s %s", ref.Kind, ref.Name)
		}
		if samePool {
			if !found {
				out = append(out, want)
				found = true
			}
			continue
		}
		out = append(out, ref)
	}
	if !found {
		out = append(out, want)
	}
	return out, nil
}

func ownerRefsEqual(a, b []metav1.OwnerReference) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].APIVersion != b[i].APIVersion || a[i].Kind != b[i].Kind || a[i].Name != b[i].Name ||
			a[i].UID != b[i].UID || ptr.Deref(a[i].Controller, false) != ptr.Deref(b[i].Controller, false) ||
			ptr.Deref(a[i].BlockOwnerDeletion, false) != ptr.Deref(b[i].BlockOwnerDeletion, false) {
			return false
		}
	}
	return true
}

// The helpers below read the provider contract's fields without trusting
// their types: a missing field is "not set", a field of the wrong type is
// reported, nothing panics.

// nestedBool reads a bool field.
func nestedBool(obj *unstructured.Unstructured, fields ...string) (val, found bool, err error) {
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, fields...)
	if err != nil || !found || v == nil {
		return false, false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, true, fmt.Errorf("%s is a %T, not a bool", fieldPath(fields), v)
	}
	return b, true, nil
}

// nestedString reads a string field.
func nestedString(obj *unstructured.Unstructured, fields ...string) (val string, found bool, err error) {
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, fields...)
	if err != nil || !found || v == nil {
		return "", false, err
	}
	s, ok := v.(string)
	if !ok {
		return "", true, fmt.Errorf("%s is a %T, not a string", fieldPath(fields), v)
	}
	return s, true, nil
}

// nestedInt32 reads an integer field (JSON numbers decode as int64 or
// float64).
func nestedInt32(obj *unstructured.Unstructured, fields ...string) (*int32, error) {
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, fields...)
	if err != nil || !found || v == nil {
		return nil, err
	}
	switch n := v.(type) {
	case int64:
		return ptr.To(int32(n)), nil
	case int32:
		return ptr.To(n), nil
	case int:
		return ptr.To(int32(n)), nil
	case float64:
		if n != float64(int32(n)) {
			return nil, fmt.Errorf("%s is %v, not an integer", fieldPath(fields), n)
		}
		return ptr.To(int32(n)), nil
	default:
		return nil, fmt.Errorf("%s is a %T, not an integer", fieldPath(fields), v)
	}
}

// nestedStringSlice reads a list of strings.
func nestedStringSlice(obj *unstructured.Unstructured, fields ...string) ([]string, error) {
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, fields...)
	if err != nil || !found || v == nil {
		return nil, err
	}
	items, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s is a %T, not a list", fieldPath(fields), v)
	}
	out := make([]string, 0, len(items))
	for i, item := range items {
		s, ok := item.(string)
		if !ok {
			return nil, fmt.Errorf("%s[%d] is a %T, not a string", fieldPath(fields), i, item)
		}
		out = append(out, s)
	}
	return out, nil
}

// failureOf returns the status.failureReason and status.failureMessage of
// obj; fields of the wrong type count as unset.
func failureOf(obj *unstructured.Unstructured) (reason, message string) {
	reason, _, _ = nestedString(obj, "status", "failureReason")
	message, _, _ = nestedString(obj, "status", "failureMessage")
	return reason, message
}

func fieldPath(fields []string) string {
	p := ""
	for _, f := range fields {
		p += "." + f
	}
	return p
}

// isNotFound reports whether err means the object does not exist.
func isNotFound(err error) bool { return apierrors.IsNotFound(err) }
