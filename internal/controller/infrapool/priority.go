package infrapool

import (
	"maps"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// An update of a pool that changed only annotations the engine does not act
// on is reconciled at low priority (package priority), behind the pools
// with work.

// workAnnotation reports whether key is of a domain whose annotations the
// engine, Cluster API or a user's rollout settings act on: mpool.dev
// (exactly: not a subdomain such as conversion.mpool.dev) and
// cluster.x-k8s.io with its subdomains.
func workAnnotation(key string) bool {
	domain, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	return domain == "mpool.dev" || domain == "cluster.x-k8s.io" || strings.HasSuffix(domain, ".cluster.x-k8s.io")
}

// workAnnotationsChanged reports whether an annotation the engine may act
// on changed between a and b, ignoring the keys in ignore (its own).
func workAnnotationsChanged(a, b client.Object, ignore ...string) bool {
	work := func(o client.Object) map[string]string {
		out := map[string]string{}
		for k, v := range o.GetAnnotations() {
			if workAnnotation(k) {
				out[k] = v
			}
		}
		for _, k := range ignore {
			delete(out, k)
		}
		return out
	}
	return !maps.Equal(work(a), work(b))
}
