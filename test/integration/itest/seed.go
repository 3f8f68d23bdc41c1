package itest

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// OnKind is a seed mutation (Fixture.ApplySeed's) that changes the objects
// of kind only.
func OnKind(kind string, mutate func(*unstructured.Unstructured)) func(*unstructured.Unstructured) {
	return func(obj *unstructured.Unstructured) {
		if obj.GetKind() == kind {
			mutate(obj)
		}
	}
}

// SetField is a seed mutation that sets the field at path of the objects
// of kind to value (a JSON value: bool, int64, string, []any,
// map[string]any). A path through a field that is not an object is a
// mistake of the test: it panics.
func SetField(kind string, value any, path ...string) func(*unstructured.Unstructured) {
	return OnKind(kind, func(obj *unstructured.Unstructured) {
		if err := unstructured.SetNestedField(obj.Object, value, path...); err != nil {
			panic(fmt.Sprintf("setting %v of %s %s: %v", path, kind, obj.GetName(), err))
		}
	})
}

// Replicas is a seed mutation that sets the MachinePool's spec.replicas.
func Replicas(n int) func(*unstructured.Unstructured) {
	return SetField("MachinePool", int64(n), "spec", "replicas")
}

// Rename is a seed mutation that replaces every string value of an object
// (its name, references, clusterName, labels) that is exactly one of the
// keys of names by that key's value, so that a provider's example can be
// created many times in one namespace under other names. Strings that only
// contain a name ("capz-vnet", a file's content) are left as they are.
func Rename(names map[string]string) func(*unstructured.Unstructured) {
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case string:
			if to, ok := names[v]; ok {
				return to
			}
		case map[string]any:
			for k, e := range v {
				v[k] = walk(e)
			}
		case []any:
			for i, e := range v {
				v[i] = walk(e)
			}
		}
		return v
	}
	return func(obj *unstructured.Unstructured) { walk(obj.Object) }
}
