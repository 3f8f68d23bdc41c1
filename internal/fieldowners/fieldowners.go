// Package fieldowners moves managed fields entries that clients wrote in an
// older served version of a kind to the version mpool's controllers write.
//
// The API server records, for each client that wrote an object, the fields
// it owns in the apiVersion it wrote them in. On every later write, for each
// entry of a version other than the writer's, it converts the old and the new
// object to that version to see which of that client's fields the write
// changed (structured-merge-diff's Updater): for a CRD with a conversion
// webhook, two webhook calls per write. A MachinePool or KubeadmConfig
// created from a v1beta1 manifest (the documented API; every seed manifest
// is one) carries such an entry for its whole life, so each of the
// controllers' status and metadata writes, a dozen per pool on creation, made
// two conversion round trips through the webhook (kubernetes/kubernetes#129979
// is upstream's issue; Cluster API's CRD migrator only drops entries of
// versions no longer served).
//
// An Upgrader rewrites such an entry once, in the hub version, with the same
// manager, operation and time: it converts the object to the old version
// with the converters the conversion webhook serves (as that version's
// clients see it), extracts the entry's fields from it, converts that
// partial object back to the hub, and keeps the fields of the result, under
// the entry's own top-level fields, that the object has. Ownership keeps its
// meaning (a later server-side apply still conflicts with, or takes over,
// the same fields) and the field manager converts nothing any more: at most
// one write, once per object, against two conversions on each of its later
// writes; none of its own when the entries travel with a write the
// controller makes anyway (its finalizer, an owner reference). Only Update
// entries are moved: an Apply entry's set is what its applier last sent, and
// its next apply would move it back to its own version anyway.
package fieldowners

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// Upgrader moves the managed fields entries of older versions of its kinds
// to each kind's hub version. It is safe for concurrent use.
type Upgrader struct {
	scheme *runtime.Scheme
	kinds  map[schema.GroupKind]*kind
	// byType finds the kind of a typed object of the hub version without
	// the scheme's lookup: the cache's transform asks of every object.
	byType map[reflect.Type]*kind
}

// kind is what an Upgrader knows of one kind.
type kind struct {
	hub       schema.GroupVersionKind
	converter conversion.Converter
	// old holds the apiVersion ("group/version") of each other version
	// the CRD serves, with the version's name.
	old map[string]string
	// types converts objects of each version (by name) to typed values.
	types map[string]managedfields.TypeConverter
}

// New returns an Upgrader for the kinds of hubs, each the version the
// controllers write (the CRD's storage version), converting through the
// converters of reg and typing objects with the schemas of crds. s must
// hold every served version of each kind.
func New(s *runtime.Scheme, reg conversion.Registry, crds []*apiextensionsv1.CustomResourceDefinition, hubs ...schema.GroupVersionKind) (*Upgrader, error) {
	u := &Upgrader{scheme: s, kinds: map[schema.GroupKind]*kind{}, byType: map[reflect.Type]*kind{}}
	for _, hub := range hubs {
		c, ok := reg.GetConverter(hub.GroupKind())
		if !ok {
			return nil, fmt.Errorf("no converter for %s", hub.GroupKind())
		}
		k := &kind{hub: hub, converter: c, old: map[string]string{}, types: map[string]managedfields.TypeConverter{}}
		crd := findCRD(crds, hub.GroupKind())
		if crd == nil {
			return nil, fmt.Errorf("no CustomResourceDefinition for %s", hub.GroupKind())
		}
		for _, v := range crd.Spec.Versions {
			if !v.Served || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			gvk := schema.GroupVersionKind{Group: hub.Group, Version: v.Name, Kind: hub.Kind}
			if !s.Recognizes(gvk) {
				continue
			}
			tc, err := typeConverter(v.Schema.OpenAPIV3Schema, gvk)
			if err != nil {
				return nil, fmt.Errorf("the schema of %s: %w", gvk, err)
			}
			k.types[v.Name] = tc
			if v.Name != hub.Version {
				k.old[gvk.GroupVersion().String()] = v.Name
			}
		}
		if k.types[hub.Version] == nil {
			return nil, fmt.Errorf("the CustomResourceDefinition of %s does not serve %s", hub.GroupKind(), hub.Version)
		}
		u.kinds[hub.GroupKind()] = k
		obj, err := s.New(hub)
		if err != nil {
			return nil, err
		}
		u.byType[reflect.TypeOf(obj)] = k
	}
	return u, nil
}

func findCRD(crds []*apiextensionsv1.CustomResourceDefinition, gk schema.GroupKind) *apiextensionsv1.CustomResourceDefinition {
	for _, crd := range crds {
		if crd.Spec.Group == gk.Group && crd.Spec.Names.Kind == gk.Kind {
			return crd
		}
	}
	return nil
}

// typeConverter types objects of gvk by its CRD schema, the way the API
// server's field manager does (a structural schema as OpenAPI). The
// schema's metadata is a bare object: objects are typed without metadata.
func typeConverter(props *apiextensionsv1.JSONSchemaProps, gvk schema.GroupVersionKind) (managedfields.TypeConverter, error) {
	internal := &apiextensionsinternal.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(props, internal, nil); err != nil {
		return nil, err
	}
	structural, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, err
	}
	openapi := structural.ToKubeOpenAPI()
	openapi.AddExtension("x-kubernetes-group-version-kind", []any{
		map[string]any{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind},
	})
	return managedfields.NewTypeConverter(map[string]*spec.Schema{gvk.String(): openapi}, false)
}

// Outdated reports whether obj has a managed fields entry Upgrade would move.
func (u *Upgrader) Outdated(obj runtime.Object) bool {
	k := u.kindOf(obj)
	if k == nil {
		return false
	}
	m, ok := obj.(metav1.Object)
	return ok && k.outdated(m.GetManagedFields())
}

func (k *kind) outdated(entries []metav1.ManagedFieldsEntry) bool {
	for _, e := range entries {
		if k.moves(e) {
			return true
		}
	}
	return false
}

// moves reports whether Upgrade moves e.
func (k *kind) moves(e metav1.ManagedFieldsEntry) bool {
	_, old := k.old[e.APIVersion]
	return old && e.Operation == metav1.ManagedFieldsOperationUpdate && e.FieldsType == "FieldsV1" && e.FieldsV1 != nil
}

func (u *Upgrader) kindOf(obj runtime.Object) *kind {
	if u == nil {
		return nil
	}
	if _, ok := obj.(runtime.Unstructured); !ok {
		// A typed object: of a hub kind, or of a kind not moved.
		return u.byType[reflect.TypeOf(obj)]
	}
	gvk, err := apiutil.GVKForObject(obj, u.scheme)
	if err != nil {
		return nil
	}
	if k := u.kinds[gvk.GroupKind()]; k != nil && gvk.Version == k.hub.Version {
		return k
	}
	// Another version's content is not the hub's: nothing to move from it.
	return nil
}

// Upgrade returns the managed fields of obj (of a hub version, as read from
// a cache or the API server: it must hold its managed fields) with every
// Update entry of an older version moved to the hub version, and whether it
// moved any. It sees obj in each older version as that version's clients see
// it: converted by the converters the conversion webhook serves the API
// server with, in process (an uncached read in the older version made the
// API server read etcd and call the webhook for the same answer). An entry
// whose fields cannot be converted is an error, and then nothing is moved. A write of the result
// must be conditional on obj's resourceVersion: obj may be behind the API
// server.
func (u *Upgrader) Upgrade(ctx context.Context, obj client.Object) ([]metav1.ManagedFieldsEntry, bool, error) {
	k := u.kindOf(obj)
	if k == nil || !k.outdated(obj.GetManagedFields()) {
		return nil, false, nil
	}
	live, err := k.typed(obj, k.hub.Version)
	if err != nil {
		return nil, false, err
	}
	liveSet, err := live.ToFieldSet()
	if err != nil {
		return nil, false, err
	}
	olds := map[string]*typed.TypedValue{}
	read := func(version string) (*typed.TypedValue, error) {
		if old, ok := olds[version]; ok {
			return old, nil
		}
		spoke, err := u.convert(ctx, k, obj, version)
		if err != nil {
			return nil, fmt.Errorf("converting %s %s to %s: %w", k.hub.Kind, client.ObjectKeyFromObject(obj), version, err)
		}
		old, err := k.typed(spoke, version)
		if err != nil {
			return nil, err
		}
		olds[version] = old
		return old, nil
	}
	var out []metav1.ManagedFieldsEntry
	index := map[string]int{} // manager identifier in the hub -> index in out
	for _, e := range obj.GetManagedFields() {
		if k.moves(e) {
			version := k.old[e.APIVersion]
			old, err := read(version)
			if err != nil {
				return nil, false, err
			}
			set, err := u.upgradeSet(ctx, k, obj, old, version, e.FieldsV1.Raw)
			if err != nil {
				return nil, false, fmt.Errorf("moving the fields of %s (%s) to %s: %w", e.Manager, e.APIVersion, k.hub.GroupVersion(), err)
			}
			// liveSet has no metadata (typed without it): the entry's is
			// kept as it was.
			raw, err := set.Intersection(liveSet).Union(metadataOf(set)).ToJSON()
			if err != nil {
				return nil, false, err
			}
			e.APIVersion = k.hub.GroupVersion().String()
			e.FieldsV1 = &metav1.FieldsV1{Raw: raw}
		}
		id, err := identifier(e)
		if err != nil {
			return nil, false, err
		}
		if i, ok := index[id]; ok {
			// The same client also wrote in the hub version: one entry.
			merged, err := unionFields(out[i].FieldsV1, e.FieldsV1)
			if err != nil {
				return nil, false, err
			}
			out[i].FieldsV1 = merged
			if e.Time != nil && (out[i].Time == nil || out[i].Time.Before(e.Time)) {
				out[i].Time = e.Time
			}
			continue
		}
		index[id] = len(out)
		out = append(out, e)
	}
	return out, true, nil
}

// convert returns obj, of k's hub version, converted to version with the
// webhook's converters. obj is not changed.
func (u *Upgrader) convert(ctx context.Context, k *kind, obj client.Object, version string) (runtime.Object, error) {
	var hub runtime.Object
	if un, ok := obj.(*unstructured.Unstructured); ok {
		var err error
		if hub, err = u.scheme.New(k.hub); err != nil {
			return nil, err
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(un.Object, hub); err != nil {
			return nil, err
		}
	} else {
		hub = obj.DeepCopyObject()
	}
	hub.GetObjectKind().SetGroupVersionKind(k.hub)
	gvk := k.hub.GroupKind().WithVersion(version)
	spoke, err := u.scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	spoke.GetObjectKind().SetGroupVersionKind(gvk)
	if err := k.converter.ConvertObject(ctx, hub, spoke); err != nil {
		return nil, err
	}
	return spoke, nil
}

// upgradeSet returns the fields, in the hub version, of the fields raw
// names in old (obj in version), metadata included as it is.
func (u *Upgrader) upgradeSet(ctx context.Context, k *kind, obj client.Object, old *typed.TypedValue, version string, raw []byte) (*fieldpath.Set, error) {
	set := &fieldpath.Set{}
	if err := set.FromJSON(bytes.NewReader(raw)); err != nil {
		return nil, err
	}
	// Leaves only: ExtractItems takes a member with children for a whole
	// item, and would look its children up from the top.
	part := old.ExtractItems(set.Difference(metadataOf(set)).Leaves(), typed.WithAppendKeyFields())
	content, ok := part.AsValue().Unstructured().(map[string]any)
	if !ok {
		content = map[string]any{}
	}
	gvk := k.hub.GroupKind().WithVersion(version)
	spoke, err := u.scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(content, spoke); err != nil {
		return nil, err
	}
	spoke.GetObjectKind().SetGroupVersionKind(gvk)
	if m, ok := spoke.(metav1.Object); ok {
		m.SetName(obj.GetName())
		m.SetNamespace(obj.GetNamespace())
	}
	hub, err := u.scheme.New(k.hub)
	if err != nil {
		return nil, err
	}
	hub.GetObjectKind().SetGroupVersionKind(k.hub)
	if err := k.converter.ConvertObject(ctx, spoke, hub); err != nil {
		return nil, err
	}
	tv, err := k.typed(hub, k.hub.Version)
	if err != nil {
		return nil, err
	}
	out, err := tv.ToFieldSet()
	if err != nil {
		return nil, err
	}
	// Conversion fills in fields of its own (a status of zero values): of
	// the result, only what lies under the entry's own top-level fields.
	tops := map[string]fieldpath.PathElement{}
	set.Iterate(func(p fieldpath.Path) {
		if pe := p[0]; pe.FieldName != nil {
			tops[*pe.FieldName] = pe
		}
	})
	kept := metadataOf(set)
	for name, pe := range tops {
		if name == "metadata" || name == "apiVersion" || name == "kind" {
			// Metadata is kept as it was; the field manager never records
			// apiVersion and kind (stripMetaManager).
			continue
		}
		kept = kept.Union(prefixed(pe, out.WithPrefix(pe)))
		if out.Members.Has(pe) {
			kept.Insert(fieldpath.Path{pe})
		}
	}
	return kept, nil
}

// typed returns obj, without its metadata, as a typed value of version.
func (k *kind) typed(obj runtime.Object, version string) (*typed.TypedValue, error) {
	var content map[string]any
	if u, ok := obj.(*unstructured.Unstructured); ok {
		content = runtime.DeepCopyJSON(u.Object)
	} else {
		var err error
		if content, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return nil, err
		}
	}
	delete(content, "metadata")
	gvk := k.hub.GroupKind().WithVersion(version)
	content["apiVersion"], content["kind"] = gvk.GroupVersion().String(), gvk.Kind
	return k.types[version].ObjectToTyped(&unstructured.Unstructured{Object: content}, typed.AllowDuplicates)
}

var metadataPE = fieldpath.PathElement{FieldName: ptrTo("metadata")}

func ptrTo(s string) *string { return &s }

// metadataOf returns the fields of set under metadata, which every version
// of a kind shares.
func metadataOf(set *fieldpath.Set) *fieldpath.Set {
	out := prefixed(metadataPE, set.WithPrefix(metadataPE))
	if set.Members.Has(metadataPE) {
		out.Insert(fieldpath.Path{metadataPE})
	}
	return out
}

// prefixed returns set with pe before each of its paths.
func prefixed(pe fieldpath.PathElement, set *fieldpath.Set) *fieldpath.Set {
	out := &fieldpath.Set{}
	set.Iterate(func(p fieldpath.Path) {
		out.Insert(append(fieldpath.Path{pe}, p...))
	})
	return out
}

// identifier is the API server's key for a managed fields entry
// (BuildManagerIdentifier): entries with the same one are one.
func identifier(e metav1.ManagedFieldsEntry) (string, error) {
	e.FieldsType, e.FieldsV1, e.Time = "", nil, nil
	if e.Operation == metav1.ManagedFieldsOperationApply {
		e.APIVersion = ""
	}
	b, err := json.Marshal(e)
	return string(b), err
}

func unionFields(a, b *metav1.FieldsV1) (*metav1.FieldsV1, error) {
	sa, sb := &fieldpath.Set{}, &fieldpath.Set{}
	if a != nil {
		if err := sa.FromJSON(bytes.NewReader(a.Raw)); err != nil {
			return nil, err
		}
	}
	if b != nil {
		if err := sb.FromJSON(bytes.NewReader(b.Raw)); err != nil {
			return nil, err
		}
	}
	raw, err := sa.Union(sb).ToJSON()
	if err != nil {
		return nil, err
	}
	return &metav1.FieldsV1{Raw: raw}, nil
}

// Ensure writes Upgrade's managed fields to obj through c, on the condition
// that the object is unchanged since obj's resourceVersion, and reports
// whether it wrote; with nothing to move (no Upgrader, a kind it does not
// move, no older entry) it does nothing. On
// success obj is what the API server returned. A conflict is not an error:
// the next read has the object's new state.
func (u *Upgrader) Ensure(ctx context.Context, c client.Client, obj client.Object) (bool, error) {
	entries, moved, err := u.Upgrade(ctx, obj)
	if err != nil || !moved {
		return false, err
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": obj.GetResourceVersion(),
		"managedFields":   entries,
	}})
	if err != nil {
		return false, err
	}
	if err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		if apierrors.IsConflict(err) {
			return false, nil
		}
		hub := u.kindOf(obj).hub
		return false, fmt.Errorf("moving the managed fields of %s %s to %s: %w", hub.Kind, client.ObjectKeyFromObject(obj), hub.GroupVersion(), err)
	}
	return true, nil
}

// Transform is a cache transform that drops objects' managed fields, as
// cache.TransformStripManagedFields does, except on objects with an entry
// Upgrade would move: the controller that reads them from the cache moves
// it, and the object comes back without one.
func (u *Upgrader) Transform() func(any) (any, error) {
	return func(in any) (any, error) {
		obj, ok := in.(client.Object)
		if !ok || u.Outdated(obj) {
			return in, nil
		}
		obj.SetManagedFields(nil)
		return obj, nil
	}
}
