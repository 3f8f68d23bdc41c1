package infrapool

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/mpool-dev/mpool/internal/workload"
)

// Workload is what the engine needs from the workload clusters. Package
// internal/workload's ClusterCache implements it. Errors matching
// workload.ErrClusterNotConnected mean the cluster cannot be reached.
type Workload interface {
	// NodesByProviderIDs returns, for each of ids that has a Node in the
	// workload cluster of cluster, that Node (read-only, shared with a cache).
	NodesByProviderIDs(ctx context.Context, cluster types.NamespacedName, ids []string) (map[string]*corev1.Node, error)
	// RESTConfig returns a configuration for the workload cluster of
	// cluster, for the drain's clientset.
	RESTConfig(ctx context.Context, cluster types.NamespacedName) (*rest.Config, error)
}

// NodeWatcher is implemented by a Workload that can turn Node events of the
// workload clusters into reconcile requests. When the Workload does not
// implement it, the engine polls while a pool converges.
type NodeWatcher interface {
	NodeSource(fn workload.NodeMapFunc) source.Source
}

// nodeDeletesOf returns w's memo of deleted Nodes, or one of the engine's
// own when w keeps none.
func nodeDeletesOf(w Workload) *workload.NodeDeletes {
	if m, ok := w.(interface{ NodeDeletes() *workload.NodeDeletes }); ok && m.NodeDeletes() != nil {
		return m.NodeDeletes()
	}
	return workload.NewNodeDeletes(time.Minute)
}

// clientsets keeps one clientset per workload cluster for draining, rebuilt
// when the cluster's configuration changes (rotated credentials).
type clientsets struct {
	w  Workload
	mu sync.Mutex
	m  map[types.NamespacedName]clientsetEntry
}

type clientsetEntry struct {
	fingerprint [sha256.Size]byte
	cs          kubernetes.Interface
}

func newClientsets(w Workload) *clientsets {
	return &clientsets{w: w, m: map[types.NamespacedName]clientsetEntry{}}
}

// get returns the clientset of the workload cluster of cluster.
func (c *clientsets) get(ctx context.Context, cluster types.NamespacedName) (kubernetes.Interface, error) {
	cfg, err := c.w.RESTConfig(ctx, cluster)
	if err != nil {
		return nil, err
	}
	fp := fingerprint(cfg)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[cluster]; ok && e.fingerprint == fp {
		return e.cs, nil
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating a clientset for the workload cluster of Cluster %s: %w", cluster, err)
	}
	c.m[cluster] = clientsetEntry{fingerprint: fp, cs: cs}
	return cs, nil
}

// fingerprint identifies a configuration's server and credentials without
// keeping them.
func fingerprint(cfg *rest.Config) [sha256.Size]byte {
	h := sha256.New()
	for _, b := range [][]byte{
		[]byte(cfg.Host), cfg.CAData, cfg.CertData, cfg.KeyData, []byte(cfg.BearerToken),
		[]byte(cfg.Username), []byte(cfg.Password), []byte(cfg.ServerName),
		[]byte(cfg.CAFile), []byte(cfg.CertFile), []byte(cfg.KeyFile), []byte(cfg.BearerTokenFile),
	} {
		fmt.Fprintf(h, "%d:", len(b))
		h.Write(b)
	}
	var out [sha256.Size]byte
	copy(out[:], h.Sum(nil))
	return out
}
