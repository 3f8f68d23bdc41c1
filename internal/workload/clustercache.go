package workload

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/transport"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Defaults of Options.
const (
	DefaultConnectTimeout              = 5 * time.Second
	DefaultRequestTimeout              = 10 * time.Second
	DefaultSyncTimeout                 = 30 * time.Second
	DefaultHealthCheckInterval         = 10 * time.Second
	DefaultHealthCheckFailureThreshold = 3
	DefaultQPS                         = 50
	DefaultBurst                       = 100
	DefaultUserAgent                   = "mpool-workload-client"
)

// Options configure a ClusterCache.
type Options struct {
	// SecretReader reads the kubeconfig Secrets in the management cluster.
	// Required. A manager's cached client makes Client free of API requests
	// once a cluster is connected.
	SecretReader client.Reader

	// Scheme of the workload-cluster clients; nil means client-go's scheme.
	Scheme *runtime.Scheme

	// ConnectTimeout bounds establishing a TCP connection to a workload API
	// server. Defaults to DefaultConnectTimeout.
	ConnectTimeout time.Duration

	// RequestTimeout bounds each direct (uncached) request and each health
	// check. Defaults to DefaultRequestTimeout.
	RequestTimeout time.Duration

	// SyncTimeout bounds the initial sync of a new cluster's Node cache.
	// Defaults to DefaultSyncTimeout.
	SyncTimeout time.Duration

	// HealthCheckInterval is how often a connected API server is probed; a
	// negative value disables health checks. Defaults to
	// DefaultHealthCheckInterval.
	HealthCheckInterval time.Duration

	// HealthCheckFailureThreshold is how many probes in a row may fail before
	// the cluster is disconnected. Defaults to DefaultHealthCheckFailureThreshold.
	HealthCheckFailureThreshold int

	// QPS and Burst limit each workload client. Default to DefaultQPS and
	// DefaultBurst.
	QPS   float32
	Burst int

	// UserAgent of the workload clients. Defaults to DefaultUserAgent.
	UserAgent string

	// WrapTransport, when set, wraps the HTTP transport of every workload
	// client (cached and direct), for example to count requests.
	WrapTransport transport.WrapperFunc

	// Clock drives the health checks; nil means the real clock.
	Clock clock.WithTicker

	// Logger is used by background work (health checks); requests log with
	// the logger of their context. Defaults to controller-runtime's logger.
	Logger *logr.Logger
}

func (o *Options) defaults() {
	if o.Scheme == nil {
		o.Scheme = clientgoscheme.Scheme
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.SyncTimeout <= 0 {
		o.SyncTimeout = DefaultSyncTimeout
	}
	if o.HealthCheckInterval == 0 {
		o.HealthCheckInterval = DefaultHealthCheckInterval
	}
	if o.HealthCheckFailureThreshold <= 0 {
		o.HealthCheckFailureThreshold = DefaultHealthCheckFailureThreshold
	}
	if o.QPS <= 0 {
		o.QPS = DefaultQPS
	}
	if o.Burst <= 0 {
		o.Burst = DefaultBurst
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Logger == nil {
		l := log.Log.WithName("workload-cluster-cache")
		o.Logger = &l
	}
}

// ClusterCache hands out clients for workload clusters, one per Cluster,
// built from the Cluster's kubeconfig Secret and reused until the Cluster is
// disconnected or the Secret's content changes. Clusters whose kubeconfig
// Secrets hold the same kubeconfig (the same API server reached with the
// same credentials: the same view) share one connection and one Node cache;
// each keeps a client of its own, with its own request rate limits. It is
// safe for concurrent use. Add it to a manager (it is a manager.Runnable) or
// call Stop when done.
type ClusterCache struct {
	opts Options

	mu        sync.Mutex
	accessors map[types.NamespacedName]*accessor
	// conns are the live connections by the hash of their kubeconfig.
	conns   map[[sha256.Size]byte]*conn
	locks   map[string]*sync.Mutex
	sources map[*nodeSource]struct{}
	// clusterSources hear about connects and disconnects.
	clusterSources map[*clusterSource]struct{}
	stopped        bool
	// nodeDeletes is shared by the controllers that delete Nodes.
	nodeDeletes *NodeDeletes
}

// accessor is one connected Cluster: its own client over a connection it may
// share with other Clusters.
type accessor struct {
	cluster types.NamespacedName
	*conn
	client client.Client
}

// conn is one connection to a workload API server: its Node cache, its
// discovery and the HTTP client of its direct requests.
type conn struct {
	hash [sha256.Size]byte

	direct     *rest.Config // direct requests: bounded by RequestTimeout
	directHTTP *http.Client
	mapper     meta.RESTMapper
	cache      cache.Cache
	informer   cache.Informer
	indexer    toolscache.Indexer // nil if the informer does not expose it
	discovery  discovery.DiscoveryInterface

	// clusters are the Clusters using the connection, replaced (never
	// changed in place) under ClusterCache.mu; the Node event handlers read
	// it without a lock.
	clusters atomic.Pointer[[]types.NamespacedName]

	ctx    context.Context
	cancel context.CancelFunc
}

// users returns the Clusters using cn.
func (cn *conn) users() []types.NamespacedName {
	if p := cn.clusters.Load(); p != nil {
		return *p
	}
	return nil
}

// addUser records that cluster uses cn. Call it with ClusterCache.mu held.
func (cn *conn) addUser(cluster types.NamespacedName) {
	next := append(slices.Clone(cn.users()), cluster)
	cn.clusters.Store(&next)
}

// removeUser records that cluster no longer uses cn, and returns how many
// Clusters still do. Call it with ClusterCache.mu held.
func (cn *conn) removeUser(cluster types.NamespacedName) int {
	next := slices.DeleteFunc(slices.Clone(cn.users()), func(cl types.NamespacedName) bool { return cl == cluster })
	cn.clusters.Store(&next)
	return len(next)
}

// New returns a ClusterCache.
func New(opts Options) (*ClusterCache, error) {
	if opts.SecretReader == nil {
		return nil, errors.New("workload.New: Options.SecretReader is required")
	}
	opts.defaults()
	return &ClusterCache{
		opts:      opts,
		accessors: map[types.NamespacedName]*accessor{},
		conns:     map[[sha256.Size]byte]*conn{},
		locks:     map[string]*sync.Mutex{},
		sources:   map[*nodeSource]struct{}{},

		clusterSources: map[*clusterSource]struct{}{},
		nodeDeletes:    NewNodeDeletes(time.Minute),
	}, nil
}

// Start implements manager.Runnable: it blocks until ctx is done, then
// disconnects every cluster.
func (c *ClusterCache) Start(ctx context.Context) error {
	<-ctx.Done()
	c.Stop()
	return nil
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: the cache
// serves whichever controllers run, leader or not.
func (c *ClusterCache) NeedLeaderElection() bool { return false }

// Stop disconnects every cluster; later calls to Client fail.
func (c *ClusterCache) Stop() {
	c.mu.Lock()
	c.stopped = true
	conns := c.conns
	c.accessors = map[types.NamespacedName]*accessor{}
	c.conns = map[[sha256.Size]byte]*conn{}
	c.mu.Unlock()
	for _, cn := range conns {
		cn.cancel()
	}
}

// Client returns a client for the workload cluster of cluster. Node reads
// (Get and List) are served from the cluster's cache, every other request
// goes to the API server. The returned error matches ErrClusterNotConnected
// when the kubeconfig Secret is missing or unusable or the API server cannot
// be reached.
func (c *ClusterCache) Client(ctx context.Context, cluster types.NamespacedName) (client.Client, error) {
	a, err := c.accessor(ctx, cluster)
	if err != nil {
		return nil, err
	}
	return a.client, nil
}

// RESTConfig returns a copy of the configuration of the workload cluster of
// cluster, for clients that controller-runtime does not cover (for example
// k8s.io/kubectl/pkg/drain). Requests made with it time out after
// Options.RequestTimeout.
func (c *ClusterCache) RESTConfig(ctx context.Context, cluster types.NamespacedName) (*rest.Config, error) {
	a, err := c.accessor(ctx, cluster)
	if err != nil {
		return nil, err
	}
	return rest.CopyConfig(a.direct), nil
}

// Connected reports whether the workload cluster of cluster has a live
// client, without connecting.
func (c *ClusterCache) Connected(cluster types.NamespacedName) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.accessors[cluster]
	return ok
}

// Disconnect drops the client of the workload cluster of cluster, and stops
// its connection and Node cache unless other Clusters share them. The next
// Client call connects again. Call it when the Cluster is deleted.
func (c *ClusterCache) Disconnect(cluster types.NamespacedName) {
	c.mu.Lock()
	a := c.accessors[cluster]
	c.mu.Unlock()
	if a != nil {
		c.release(a)
	}
}

// release drops a, when it is still its Cluster's accessor, and stops its
// connection when no Cluster uses it any more.
func (c *ClusterCache) release(a *accessor) {
	c.mu.Lock()
	current := c.accessors[a.cluster] == a
	last := false
	if current {
		delete(c.accessors, a.cluster)
		last = a.removeUser(a.cluster) == 0
		if last && c.conns[a.hash] == a.conn {
			delete(c.conns, a.hash)
		}
	}
	c.mu.Unlock()
	if last {
		a.cancel()
	}
	if current {
		c.notifyClusterSources(a.cluster)
	}
}

// drop stops cn and disconnects every Cluster that uses it.
func (c *ClusterCache) drop(cn *conn) {
	c.mu.Lock()
	var gone []types.NamespacedName
	for _, cl := range cn.users() {
		if a := c.accessors[cl]; a != nil && a.conn == cn {
			delete(c.accessors, cl)
			gone = append(gone, cl)
		}
	}
	cn.clusters.Store(nil)
	if c.conns[cn.hash] == cn {
		delete(c.conns, cn.hash)
	}
	c.mu.Unlock()
	cn.cancel()
	for _, cl := range gone {
		c.notifyClusterSources(cl)
	}
}

// keyLock returns the mutex that serialises connecting to key (a Cluster, or
// a kubeconfig's hash).
func (c *ClusterCache) keyLock(key string) *sync.Mutex {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.locks[key]
	if !ok {
		l = &sync.Mutex{}
		c.locks[key] = l
	}
	return l
}

// accessor returns the live accessor of cluster, connecting (or
// reconnecting, when the kubeconfig changed) as needed: to the live
// connection of the same kubeconfig if there is one, else to a new one.
func (c *ClusterCache) accessor(ctx context.Context, cluster types.NamespacedName) (*accessor, error) {
	kubeconfig, err := c.readKubeconfig(ctx, cluster)
	if err != nil {
		if IsConnectionError(err) {
			c.Disconnect(cluster)
		}
		return nil, err
	}
	hash := sha256.Sum256(kubeconfig)

	l := c.keyLock("cluster/" + cluster.String())
	l.Lock()
	defer l.Unlock()

	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return nil, errStopped
	}
	existing := c.accessors[cluster]
	c.mu.Unlock()
	if existing != nil {
		if existing.hash == hash && existing.ctx.Err() == nil {
			return existing, nil
		}
		log.FromContext(ctx).Info("Kubeconfig changed, reconnecting to the workload cluster", "cluster", klog.KRef(cluster.Namespace, cluster.Name))
		c.release(existing)
	}

	// Clusters are locked before kubeconfigs, never the other way round.
	hl := c.keyLock(fmt.Sprintf("kubeconfig/%x", hash))
	hl.Lock()
	defer hl.Unlock()
	c.mu.Lock()
	cn := c.conns[hash]
	c.mu.Unlock()
	fresh := cn == nil || cn.ctx.Err() != nil
	if fresh {
		if cn, err = c.connect(ctx, cluster, kubeconfig); err != nil {
			return nil, err
		}
		cn.hash = hash
	}
	a, err := c.clientOf(cluster, cn)
	if err != nil {
		if fresh {
			cn.cancel()
		}
		return nil, err
	}

	c.mu.Lock()
	if c.stopped || cn.ctx.Err() != nil {
		c.mu.Unlock()
		if fresh {
			cn.cancel()
		}
		if c.stopped {
			return nil, errStopped
		}
		return nil, &ConnectionError{Cluster: cluster, Reason: ReasonUnreachable, Err: errors.New("the shared connection to the workload cluster was just dropped")}
	}
	c.accessors[cluster] = a
	cn.addUser(cluster)
	var replay []*nodeSource
	if fresh {
		// Sources are registered under c.mu so that a source starting now
		// sees this connection exactly once; each new handler is handed
		// every existing Node.
		c.conns[hash] = cn
		for s := range c.sources {
			if err := s.register(cn); err != nil {
				delete(c.accessors, cluster)
				delete(c.conns, hash)
				c.mu.Unlock()
				cn.cancel()
				return nil, fmt.Errorf("watching Nodes of the workload cluster of Cluster %s: %w", cluster, err)
			}
		}
	} else {
		for s := range c.sources {
			replay = append(replay, s)
		}
	}
	c.mu.Unlock()
	// A Cluster joining a live connection is handed its existing Nodes,
	// as a new connection's handlers are.
	for _, s := range replay {
		s.replay(cn, cluster)
	}
	c.notifyClusterSources(cluster)

	if fresh && c.opts.HealthCheckInterval > 0 {
		go c.healthCheck(cn)
	}
	log.FromContext(ctx).V(1).Info("Connected to the workload cluster", "cluster", klog.KRef(cluster.Namespace, cluster.Name), "sharedConnection", !fresh)
	return a, nil
}

// errStopped is returned once the cache is stopped.
var errStopped = errors.New("workload cluster cache is stopped")

// clientOf returns cluster's accessor over cn: a client of its own (each of
// controller-runtime's clients limits its request rate itself) over cn's
// HTTP client, mapper and Node cache.
func (c *ClusterCache) clientOf(cluster types.NamespacedName, cn *conn) (*accessor, error) {
	directClient, err := client.New(cn.direct, client.Options{HTTPClient: cn.directHTTP, Scheme: c.opts.Scheme, Mapper: cn.mapper})
	if err != nil {
		return nil, fmt.Errorf("creating the client of the workload cluster of Cluster %s: %w", cluster, err)
	}
	return &accessor{cluster: cluster, conn: cn, client: &workloadClient{Client: directClient, nodes: cn.cache}}, nil
}

// readKubeconfig returns the kubeconfig of cluster from its Secret. Never log
// the result: it holds credentials.
func (c *ClusterCache) readKubeconfig(ctx context.Context, cluster types.NamespacedName) ([]byte, error) {
	secret := &corev1.Secret{}
	key := types.NamespacedName{Namespace: cluster.Namespace, Name: KubeconfigSecretName(cluster.Name)}
	if err := c.opts.SecretReader.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, &ConnectionError{Cluster: cluster, Reason: ReasonSecretNotFound,
				Err: fmt.Errorf("secret %s not found", key)}
		}
		return nil, fmt.Errorf("reading kubeconfig secret %s: %w", key, err)
	}
	data, ok := secret.Data[KubeconfigDataKey]
	if !ok || len(data) == 0 {
		return nil, &ConnectionError{Cluster: cluster, Reason: ReasonInvalidKubeconfig,
			Err: fmt.Errorf("secret %s has no %q key", key, KubeconfigDataKey)}
	}
	return data, nil
}

// connect builds and starts a new connection; cluster names it in errors.
func (c *ClusterCache) connect(ctx context.Context, cluster types.NamespacedName, kubeconfig []byte) (*conn, error) {
	base, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		// The parse error may quote the kubeconfig: do not wrap it.
		return nil, &ConnectionError{Cluster: cluster, Reason: ReasonInvalidKubeconfig,
			Err: errors.New("the kubeconfig secret does not hold a valid kubeconfig")}
	}
	base.UserAgent = c.opts.UserAgent
	base.QPS = c.opts.QPS
	base.Burst = c.opts.Burst
	dialer := &net.Dialer{Timeout: c.opts.ConnectTimeout, KeepAlive: 30 * time.Second}
	base.Dial = dialer.DialContext
	if c.opts.WrapTransport != nil {
		base.Wrap(c.opts.WrapTransport)
	}
	unreachable := func(err error) error {
		return &ConnectionError{Cluster: cluster, Reason: ReasonUnreachable, Err: err}
	}

	// Direct requests are bounded as a whole; the cache's watches are not.
	direct := rest.CopyConfig(base)
	direct.Timeout = c.opts.RequestTimeout
	directHTTP, err := rest.HTTPClientFor(direct)
	if err != nil {
		return nil, fmt.Errorf("creating the HTTP client of the workload cluster of Cluster %s: %w", cluster, err)
	}
	disc, err := discovery.NewDiscoveryClientForConfigAndClient(direct, directHTTP)
	if err != nil {
		return nil, fmt.Errorf("creating the discovery client of the workload cluster of Cluster %s: %w", cluster, err)
	}
	if err := probe(ctx, disc, c.opts.RequestTimeout); err != nil {
		return nil, unreachable(err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(direct, directHTTP)
	if err != nil {
		return nil, fmt.Errorf("creating the REST mapper of the workload cluster of Cluster %s: %w", cluster, err)
	}
	cacheHTTP, err := rest.HTTPClientFor(base)
	if err != nil {
		return nil, fmt.Errorf("creating the HTTP client of the workload cluster of Cluster %s: %w", cluster, err)
	}
	nodeCache, err := cache.New(base, cache.Options{
		HTTPClient:                  cacheHTTP,
		Scheme:                      c.opts.Scheme,
		Mapper:                      mapper,
		ReaderFailOnMissingInformer: true,
		DefaultTransform:            trimNode,
	})
	if err != nil {
		return nil, fmt.Errorf("creating the Node cache of the workload cluster of Cluster %s: %w", cluster, err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	a := &conn{direct: direct, directHTTP: directHTTP, mapper: mapper, cache: nodeCache, discovery: disc, ctx: runCtx, cancel: cancel}
	ok := false
	defer func() {
		if !ok {
			cancel()
		}
	}()
	if err := nodeCache.IndexField(ctx, &corev1.Node{}, NodeProviderIDIndex, providerIDIndexFunc); err != nil {
		return nil, fmt.Errorf("indexing Nodes by providerID: %w", err)
	}
	a.informer, err = nodeCache.GetInformer(ctx, &corev1.Node{})
	if err != nil {
		return nil, fmt.Errorf("creating the Node informer: %w", err)
	}
	// Our own indexes on the informer's store, read without copying by the
	// hot paths (NodesByProviderIDs, NodesOwnedBy).
	if err := a.informer.AddIndexers(rawIndexers); err != nil {
		return nil, fmt.Errorf("indexing Nodes: %w", err)
	}
	if withIndexer, ok := a.informer.(interface{ GetIndexer() toolscache.Indexer }); ok {
		a.indexer = withIndexer.GetIndexer()
	}
	go func() {
		if err := nodeCache.Start(runCtx); err != nil {
			c.opts.Logger.Error(err, "Node cache of a workload cluster stopped", "cluster", klog.KRef(cluster.Namespace, cluster.Name))
		}
	}()
	syncCtx, syncCancel := context.WithTimeout(ctx, c.opts.SyncTimeout)
	defer syncCancel()
	if !nodeCache.WaitForCacheSync(syncCtx) {
		return nil, unreachable(fmt.Errorf("the Node cache did not sync within %s", c.opts.SyncTimeout))
	}
	ok = true
	return a, nil
}

// probe asks the API server for its version.
func probe(ctx context.Context, disc discovery.DiscoveryInterface, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := disc.RESTClient().Get().AbsPath("/version").Do(ctx).Raw(); err != nil {
		return fmt.Errorf("probing the API server: %w", err)
	}
	return nil
}

// healthCheck probes cn's API server every HealthCheckInterval and
// disconnects every Cluster using it after HealthCheckFailureThreshold
// failures in a row.
func (c *ClusterCache) healthCheck(cn *conn) {
	t := c.opts.Clock.NewTicker(c.opts.HealthCheckInterval)
	defer t.Stop()
	failures := 0
	for {
		select {
		case <-cn.ctx.Done():
			return
		case <-t.C():
		}
		if err := probe(cn.ctx, cn.discovery, c.opts.RequestTimeout); err != nil {
			if cn.ctx.Err() != nil {
				return
			}
			failures++
			logger := c.opts.Logger.WithValues("clusters", clusterRefs(cn.users()))
			logger.V(1).Info("Workload cluster health check failed", "failures", failures, "error", err.Error())
			if failures >= c.opts.HealthCheckFailureThreshold {
				logger.Info("Disconnecting from an unhealthy workload cluster", "failures", failures)
				c.drop(cn)
				return
			}
			continue
		}
		failures = 0
	}
}

// clusterRefs names clusters for a log line.
func clusterRefs(clusters []types.NamespacedName) []klog.ObjectRef {
	out := make([]klog.ObjectRef, len(clusters))
	for i, cl := range clusters {
		out[i] = klog.KRef(cl.Namespace, cl.Name)
	}
	return out
}
