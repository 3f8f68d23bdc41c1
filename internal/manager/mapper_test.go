package manager

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// countingMapper counts the RESTMapping asks that reach it.
type countingMapper struct {
	*meta.DefaultRESTMapper
	asks int
}

func (c *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	c.asks++
	return c.DefaultRESTMapper.RESTMapping(gk, versions...)
}

func (c *countingMapper) Reset() {}

// TestVersionedMappingsRemembersOneVersionAnswers: a mapping asked for at
// one exact version reaches the inner mapper once; errors, asks without a
// version and asks for several go to it each time; Reset forgets.
func TestVersionedMappingsRemembersOneVersionAnswers(t *testing.T) {
	v1beta1 := schema.GroupVersion{Group: "cluster.x-k8s.io", Version: "v1beta1"}
	v1beta2 := schema.GroupVersion{Group: "cluster.x-k8s.io", Version: "v1beta2"}
	inner := &countingMapper{DefaultRESTMapper: meta.NewDefaultRESTMapper([]schema.GroupVersion{v1beta2, v1beta1})}
	inner.Add(v1beta2.WithKind("MachinePool"), meta.RESTScopeNamespace)
	inner.Add(v1beta1.WithKind("MachinePool"), meta.RESTScopeNamespace)
	m := newVersionedMappings(inner)
	gk := schema.GroupKind{Group: "cluster.x-k8s.io", Kind: "MachinePool"}

	ask := func(versions ...string) *meta.RESTMapping {
		t.Helper()
		mapping, err := m.RESTMapping(gk, versions...)
		if err != nil {
			t.Fatal(err)
		}
		return mapping
	}
	for range 3 {
		if got := ask("v1beta2"); got.Resource.Resource != "machinepools" || got.Resource.Version != "v1beta2" || got.Scope.Name() != meta.RESTScopeNameNamespace {
			t.Fatalf("mapping %+v, want machinepools v1beta2, namespaced", got)
		}
	}
	if inner.asks != 1 {
		t.Errorf("three asks at v1beta2 reached the inner mapper %d times, want once", inner.asks)
	}
	// A caller that changes its answer does not change the next one.
	ask("v1beta2").Resource.Resource = "changed"
	if got := ask("v1beta2"); got.Resource.Resource != "machinepools" {
		t.Errorf("a remembered mapping was changed through an answer: %+v", got)
	}

	inner.asks = 0
	ask()
	ask()
	ask("v1beta1", "v1beta2")
	if inner.asks != 3 {
		t.Errorf("asks without one exact version reached the inner mapper %d times, want 3", inner.asks)
	}

	inner.asks = 0
	for range 2 {
		if _, err := m.RESTMapping(gk, "v1"); !meta.IsNoMatchError(err) {
			t.Fatalf("an unserved version: error %v, want no match", err)
		}
	}
	if inner.asks != 2 {
		t.Errorf("an unserved version was asked %d times of the inner mapper, want 2 (errors are not remembered)", inner.asks)
	}

	inner.asks = 0
	m.Reset()
	ask("v1beta2")
	if inner.asks != 1 {
		t.Errorf("after Reset, the inner mapper was asked %d times, want once", inner.asks)
	}
}
