package conversion

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
)

// CAPAKinds are the kinds mpool serves in its own v1beta1 (stored, what its
// controllers use) and in Cluster API Provider AWS's v1beta2 (the version
// CAPA v2 stores and its templates and users write; the CRD's v1beta2 schema
// is CAPA's own, see hack/capaversions). They convert through this webhook
// field by field (fieldwise).
var CAPAKinds = []schema.GroupKind{
	{Group: infrav1.GroupVersion.Group, Kind: "AWSCluster"},
	{Group: infrav1.GroupVersion.Group, Kind: "AWSMachinePool"},
	{Group: infrav1.GroupVersion.Group, Kind: "AWSManagedMachinePool"},
}

// UnconvertedAnnotation keeps, on an object converted between mpool's
// v1beta1 and CAPA's v1beta2 of a CAPAKinds kind, the parts of its spec the
// version it was converted to has no field for, with the apiVersion they
// belong to: a v1beta2 AWSMachinePool's spec.ignition in mpool's stored
// v1beta1, or a v1beta1 additionalSecurityGroups[].arn in a v1beta2 read.
// Converting back to that apiVersion puts them back where the converted
// spec has nothing, so an object written in either version reads back in
// it as written. Status is not kept: mpool's controllers write it in
// v1beta1, and a v1beta2 reader sees the fields CAPA's status shares.
const UnconvertedAnnotation = "conversion.mpool.dev/unconverted"

// unconverted is UnconvertedAnnotation's value.
type unconverted struct {
	// APIVersion is the version the fields are from.
	APIVersion string `json:"apiVersion"`
	// Spec holds the fields, in the shape of the spec they were in: for a
	// field inside list items, a list of the same length whose items hold
	// only that item's fields.
	Spec map[string]any `json:"spec"`
}

// fieldwise converts one of CAPAKinds between mpool's v1beta1 type and
// CAPA's v1beta2 type. The two are the same API at different ages and
// mostly share their JSON (mpool's v1beta1 was written to CAPA's v1beta2
// fields), so a field converts to the field of the same JSON path; what the
// destination has no field for is kept in UnconvertedAnnotation.
type fieldwise struct{}

// ConvertObject implements conversion.Converter.
func (fieldwise) ConvertObject(_ context.Context, src, dst runtime.Object) error {
	srcGVK := src.GetObjectKind().GroupVersionKind()
	dstGVK := dst.GetObjectKind().GroupVersionKind()
	in, err := toMap(src)
	if err != nil {
		return err
	}
	var kept *unconverted
	annotations, _ := nestedMap(in, "metadata", "annotations")
	if v, ok := annotations[UnconvertedAnnotation].(string); ok {
		kept = &unconverted{}
		d := json.NewDecoder(strings.NewReader(v))
		d.UseNumber()
		if err := d.Decode(kept); err != nil {
			return fmt.Errorf("%s %s: annotation %s: %w", srcGVK.Kind, name(in), UnconvertedAnnotation, err)
		}
		delete(annotations, UnconvertedAnnotation)
	}
	in["apiVersion"] = dstGVK.GroupVersion().String()
	if spec, ok := nestedMap(in, "spec"); ok {
		unsetDurations(spec, reflect.TypeOf(src).Elem(), "Spec")
	}
	if err := fromMap(in, dst); err != nil {
		return fmt.Errorf("converting %s %s to %s: %w", srcGVK.Kind, name(in), dstGVK.GroupVersion(), err)
	}
	out, err := toMap(dst)
	if err != nil {
		return err
	}
	inSpec, _ := nestedMap(in, "spec")
	outSpec, _ := nestedMap(out, "spec")
	lost, _ := missing(inSpec, outSpec).(map[string]any)
	restored := kept != nil && kept.APIVersion == dstGVK.GroupVersion().String() && outSpec != nil
	if restored {
		restore(outSpec, kept.Spec)
	}
	if len(lost) > 0 {
		b, err := json.Marshal(unconverted{APIVersion: srcGVK.GroupVersion().String(), Spec: lost})
		if err != nil {
			return err
		}
		meta, _ := nestedMap(out, "metadata")
		ann, _ := meta["annotations"].(map[string]any)
		if ann == nil {
			ann = map[string]any{}
			meta["annotations"] = ann
		}
		ann[UnconvertedAnnotation] = string(b)
	}
	if restored || len(lost) > 0 { // else dst already holds out
		if err := fromMap(out, dst); err != nil {
			return fmt.Errorf("converting %s %s to %s: %w", srcGVK.Kind, name(in), dstGVK.GroupVersion(), err)
		}
	}
	dst.GetObjectKind().SetGroupVersionKind(dstGVK)
	return nil
}

var durationType = reflect.TypeOf(metav1.Duration{})

// unsetDurations drops from m, the JSON of field name of struct type t,
// every "0s" of a metav1.Duration field that is not a pointer: JSON cannot
// tell it from an unset one, and converted as written it would hide the
// destination version's default (mpool's v1beta1 defaults an
// AWSMachinePool's defaultCoolDown and defaultInstanceWarmup to 300s, as
// CAPA's defaulting webhook does for a zero one).
func unsetDurations(m map[string]any, t reflect.Type, name string) {
	f, ok := t.FieldByName(name)
	if !ok {
		return
	}
	ft := f.Type
	for ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	if ft.Kind() != reflect.Struct {
		return
	}
	for i := range ft.NumField() {
		sf := ft.Field(i)
		tag := strings.Split(sf.Tag.Get("json"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		if sf.Type == durationType {
			if m[tag] == "0s" {
				delete(m, tag)
			}
			continue
		}
		if sub, ok := m[tag].(map[string]any); ok {
			unsetDurations(sub, ft, sf.Name)
		}
	}
}

func toMap(obj runtime.Object) (map[string]any, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // an int64 keeps its every digit
	return m, d.Decode(&m)
}

// fromMap sets obj to m, as JSON: fields obj's type has no place for are
// dropped (missing finds them).
func fromMap(m map[string]any, obj runtime.Object) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	v := reflect.ValueOf(obj).Elem()
	v.Set(reflect.Zero(v.Type()))
	return json.Unmarshal(b, obj)
}

func nestedMap(m map[string]any, path ...string) (map[string]any, bool) {
	for _, p := range path {
		next, ok := m[p].(map[string]any)
		if !ok {
			return nil, false
		}
		m = next
	}
	return m, true
}

func name(m map[string]any) string {
	meta, _ := nestedMap(m, "metadata")
	ns, _ := meta["namespace"].(string)
	n, _ := meta["name"].(string)
	if ns == "" {
		return n
	}
	return ns + "/" + n
}

// missing returns what of in is not in out: a map of the keys out lacks
// (recursively), a list of the same length when items lost fields, nil
// when nothing was lost. A zero value (0, "", false, null, {} or [])
// counts as kept: JSON cannot tell it from an omitted field.
func missing(in, out any) any {
	switch in := in.(type) {
	case map[string]any:
		o, ok := out.(map[string]any)
		if !ok {
			if isZero(in) {
				return nil
			}
			return in
		}
		lost := map[string]any{}
		for k, v := range in {
			ov, present := o[k]
			if !present {
				if !isZero(v) {
					lost[k] = v
				}
				continue
			}
			if m := missing(v, ov); m != nil {
				lost[k] = m
			}
		}
		if len(lost) == 0 {
			return nil
		}
		return lost
	case []any:
		o, ok := out.([]any)
		if !ok || len(o) != len(in) {
			if ok || isZero(in) {
				return nil
			}
			return in
		}
		lost := make([]any, len(in))
		some := false
		for i := range in {
			if m := missing(in[i], o[i]); m != nil {
				lost[i], some = m, true
			} else {
				lost[i] = map[string]any{}
			}
		}
		if !some {
			return nil
		}
		return lost
	}
	return nil
}

// restore puts the fields of kept (missing's shape) into out where out has
// nothing; a list is restored item by item only when its length is
// unchanged.
func restore(out, kept map[string]any) {
	for k, v := range kept {
		ov, present := out[k]
		if !present || isZero(ov) {
			out[k] = v
			continue
		}
		switch v := v.(type) {
		case map[string]any:
			if o, ok := ov.(map[string]any); ok {
				restore(o, v)
			}
		case []any:
			o, ok := ov.([]any)
			if !ok || len(o) != len(v) {
				continue
			}
			for i := range v {
				km, ok1 := v[i].(map[string]any)
				om, ok2 := o[i].(map[string]any)
				if ok1 && ok2 {
					restore(om, km)
				}
			}
		}
	}
}

func isZero(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case bool:
		return !v
	case json.Number:
		f, err := v.Float64()
		return err == nil && f == 0
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}
