package manager

import (
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// newMapper is the manager's REST mapper: controller-runtime's dynamic one,
// with its answers for one exact version remembered (versionedMappings).
func newMapper(cfg *rest.Config, httpClient *http.Client) (meta.RESTMapper, error) {
	m, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return newVersionedMappings(m), nil
}

// versionedMappings remembers the RESTMapping its inner mapper gives for a
// kind at one exact version: the resource and scope a served version maps
// to do not change while it is served. A cache limited to some namespaces
// asks for the mapping of the kind it reads on every Get and List (is it
// namespaced?), and the dynamic mapper answers by walking the mapper of
// every API group the manager knows: at 300 pools, 4% of the benchmark's
// test process went there (its manager watches one namespace). Errors are
// not remembered (a kind not served yet may be served later), and an ask
// for no version or several versions (the preferred one, which a CRD
// upgrade changes) goes to the inner mapper each time. Every other method
// is the inner mapper's.
type versionedMappings struct {
	meta.RESTMapper
	known sync.Map // schema.GroupVersionKind → meta.RESTMapping
}

// newVersionedMappings returns inner with its one-version mappings
// remembered.
func newVersionedMappings(inner meta.RESTMapper) *versionedMappings {
	return &versionedMappings{RESTMapper: inner}
}

// RESTMapping implements meta.RESTMapper.
func (v *versionedMappings) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if len(versions) != 1 || versions[0] == "" {
		return v.RESTMapper.RESTMapping(gk, versions...)
	}
	key := gk.WithVersion(versions[0])
	if m, ok := v.known.Load(key); ok {
		mapping := m.(meta.RESTMapping)
		return &mapping, nil
	}
	mapping, err := v.RESTMapper.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	v.known.Store(key, *mapping)
	return mapping, nil
}

// Reset forgets what was remembered and resets the inner mapper when it
// can be reset (meta.ResettableRESTMapper).
func (v *versionedMappings) Reset() {
	v.known.Clear()
	if r, ok := v.RESTMapper.(meta.ResettableRESTMapper); ok {
		r.Reset()
	}
}
