package conversion

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	"github.com/mpool-dev/mpool/internal/capi"
)

// RefVersionsAnnotation records, on the stored (v1beta2) object, the
// apiVersion each of its references had when it was last written in
// v1beta1, keyed by "<Kind>.<group>". v1beta2 references name group and kind
// only, so upstream's conversion back to v1beta1 names the version the
// referenced CRD's contract label gives; mpool names the written one
// instead, while the API server still serves it, so that a v1beta1 object
// reads back as it was written (and a reference to a kind the management
// cluster does not serve, such as a KubeadmControlPlane, still converts).
const RefVersionsAnnotation = "conversion.mpool.dev/reference-api-versions"

// recording wraps one of upstream's converters: converting to the hub it
// records the spoke's reference versions (RefVersionsAnnotation); converting
// from the hub it hands them to the apiVersion getter and leaves the
// annotation out of the spoke.
type recording struct {
	inner conversion.Converter
}

type refVersionsKey struct{}

// SpokeSpecAnnotation keeps, on the stored (v1beta2) object, the spec it was
// last written with in v1beta1 and a hash of the v1beta2 spec that write
// converted to. While the v1beta2 spec is unchanged, a v1beta1 read returns
// that spec exactly as written, including what v1beta2 has no place for
// (a KubeadmConfig's useExperimentalRetryJoin or its embedded kubeadm
// apiVersion and kind, a reference's namespace, an explicit paused: false);
// once anything changes the v1beta2 spec, upstream's conversion alone
// answers. Specs over maxSpokeSpec bytes are not kept.
const SpokeSpecAnnotation = "conversion.mpool.dev/v1beta1-spec"

// maxSpokeSpec bounds what SpokeSpecAnnotation keeps, far below the API
// server's 256 KiB limit on all of an object's annotations.
const maxSpokeSpec = 32 << 10

// spokeSpec is SpokeSpecAnnotation's value.
type spokeSpec struct {
	// HubSpec is the SHA-256 of the v1beta2 spec's JSON at the write.
	HubSpec string `json:"hubSpec"`
	// Spec is the v1beta1 spec as written.
	Spec json.RawMessage `json:"spec"`
}

// ConvertObject implements conversion.Converter.
func (r recording) ConvertObject(ctx context.Context, src, dst runtime.Object) error {
	srcObj, ok1 := src.(client.Object)
	dstObj, ok2 := dst.(client.Object)
	if !ok1 || !ok2 {
		return r.inner.ConvertObject(ctx, src, dst)
	}
	toHub := isHub(dst)
	// Read src before converting: upstream's conversion from the hub clears
	// src's metadata (MarshalDataUnsafeNoCopy).
	versions, recorded := srcObj.GetAnnotations()[RefVersionsAnnotation]
	kept, keptOK := srcObj.GetAnnotations()[SpokeSpecAnnotation]
	var restore json.RawMessage
	if keptOK && !toHub {
		var k spokeSpec
		if err := json.Unmarshal([]byte(kept), &k); err == nil {
			if h, err := specHash(src); err == nil && h == k.HubSpec {
				restore = k.Spec
			}
		}
	}
	if versions != "" {
		// From the hub: the recorded versions guide the getter.
		rec := map[string]string{}
		if err := json.Unmarshal([]byte(versions), &rec); err == nil {
			ctx = context.WithValue(ctx, refVersionsKey{}, rec)
		}
	}
	if err := r.inner.ConvertObject(ctx, src, dst); err != nil {
		return err
	}
	if recorded {
		removeAnnotation(dstObj, RefVersionsAnnotation)
	}
	if keptOK {
		removeAnnotation(dstObj, SpokeSpecAnnotation)
	}
	if !toHub {
		if restore != nil {
			return setSpec(dst, restore)
		}
		return nil
	}
	spec, specBytes, err := specJSON(src)
	if err != nil {
		return err
	}
	if refs := referenceVersions(spec); len(refs) > 0 {
		b, err := json.Marshal(refs)
		if err != nil {
			return err
		}
		setAnnotation(dstObj, RefVersionsAnnotation, string(b))
	}
	return keepSpokeSpec(specBytes, dst, dstObj)
}

// keepSpokeSpec records the spoke's spec b (specJSON's) on the hub object
// dst (see SpokeSpecAnnotation).
func keepSpokeSpec(b []byte, dst runtime.Object, dstObj client.Object) error {
	if b == nil || len(b) > maxSpokeSpec {
		return nil
	}
	h, err := specHash(dst)
	if err != nil {
		return err
	}
	v, err := json.Marshal(spokeSpec{HubSpec: h, Spec: b})
	if err != nil {
		return err
	}
	setAnnotation(dstObj, SpokeSpecAnnotation, string(v))
	return nil
}

// specJSON returns obj's spec as the API server keeps it, decoded and as
// JSON: the spec's own JSON encoding (which honours omitzero, unlike the
// unstructured converter), normalised and re-encoded with sorted keys; nil
// and nil when obj has no spec. Only the spec is encoded: a read of every
// object written in v1beta1 hashes it (specHash), and the object's
// metadata (its managed fields) and status are most of its bytes.
func specJSON(obj runtime.Object) (any, []byte, error) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, nil, fmt.Errorf("%T is not a pointer to a struct", obj)
	}
	f, ok := v.Elem().Type().FieldByName("Spec")
	name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
	if !ok || name != "spec" {
		return nil, nil, nil
	}
	fv := v.Elem().FieldByIndex(f.Index)
	if fv.IsZero() && (slices.Contains(strings.Split(opts, ","), "omitzero") || fv.Kind() == reflect.Pointer) {
		// Left out of the object's encoding, as json.Marshal leaves it.
		return nil, nil, nil
	}
	b, err := json.Marshal(fv.Interface())
	if err != nil {
		return nil, nil, err
	}
	// Decode and encode once more: the API server hands back what it
	// stored, and a typed decode of that can encode differently (an empty
	// but non-nil list inside an omitzero struct is written as {} the first
	// time and left out the next); the second encoding is a fixed point.
	fresh := reflect.New(f.Type).Interface()
	if err := json.Unmarshal(b, fresh); err != nil {
		return nil, nil, err
	}
	if b, err = json.Marshal(fresh); err != nil {
		return nil, nil, err
	}
	var spec any
	if err := json.Unmarshal(b, &spec); err != nil {
		return nil, nil, err
	}
	if spec == nil {
		return nil, nil, nil
	}
	b, err = json.Marshal(spec)
	return spec, b, err
}

// specHash is the SHA-256 of specJSON.
func specHash(obj runtime.Object) (string, error) {
	_, b, err := specJSON(obj)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// setSpec replaces obj's spec with spec (JSON).
func setSpec(obj runtime.Object, spec json.RawMessage) error {
	v := reflect.ValueOf(obj).Elem().FieldByName("Spec")
	if !v.IsValid() || !v.CanAddr() {
		return fmt.Errorf("%T has no spec", obj)
	}
	fresh := reflect.New(v.Type())
	if err := json.Unmarshal(spec, fresh.Interface()); err != nil {
		return err
	}
	v.Set(fresh.Elem())
	return nil
}

func setAnnotation(obj client.Object, key, value string) {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[key] = value
	obj.SetAnnotations(a)
}

// isHub reports whether obj is of the hub version (v1beta2).
func isHub(obj runtime.Object) bool {
	return obj.GetObjectKind().GroupVersionKind().Version == "v1beta2"
}

func removeAnnotation(obj client.Object, key string) {
	a := obj.GetAnnotations()
	if _, ok := a[key]; !ok {
		return
	}
	delete(a, key)
	if len(a) == 0 {
		a = nil
	}
	obj.SetAnnotations(a)
}

// referenceVersions returns "<Kind>.<group>" -> apiVersion for every object
// reference (a map with apiVersion, kind and name) in spec (specJSON's
// decoded spec); a v1beta2 spec has none.
func referenceVersions(spec any) map[string]string {
	out := map[string]string{}
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			av, _ := t["apiVersion"].(string)
			kind, _ := t["kind"].(string)
			if _, named := t["name"]; av != "" && kind != "" && named {
				if gv, err := schema.ParseGroupVersion(av); err == nil {
					out[schema.GroupKind{Group: gv.Group, Kind: kind}.String()] = av
				}
			}
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(t[k])
			}
		case []any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	walk(spec)
	return out
}

// apiVersion is the getter upstream's conversions call for a v1beta2
// reference's apiVersion (see SetReader).
func apiVersion(ctx context.Context, c client.Client, memo *versionMemo, gk schema.GroupKind) (string, error) {
	rec, _ := ctx.Value(refVersionsKey{}).(map[string]string)
	written := rec[gk.String()]
	if written != "" {
		if gv, err := schema.ParseGroupVersion(written); err == nil {
			if _, err := c.RESTMapper().RESTMapping(gk, gv.Version); err == nil {
				return written, nil
			}
		}
	}
	v, err := memo.get(ctx, gk, func(ctx context.Context, gk schema.GroupKind) (string, error) {
		return capi.APIVersion(ctx, c, gk)
	})
	if err != nil && written != "" {
		return written, nil
	}
	return v, err
}
