package kit

import (
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TagPool names the pool ("namespace/name") that owns a group: every
// provider tags its groups (and, where the cloud propagates them, their
// instances) with it.
const TagPool = "mpool.dev/pool"

// PoolTags are the tags of a pool's group that every provider writes: the
// additional tags in order (the Cluster infrastructure object's, then the
// pool's, which win) and TagPool. The provider adds its own (its cluster
// and role tags).
func PoolTags(pool metav1.Object, additional ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, tags := range additional {
		maps.Copy(out, tags)
	}
	out[TagPool] = pool.GetNamespace() + "/" + pool.GetName()
	return out
}
