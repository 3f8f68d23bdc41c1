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
