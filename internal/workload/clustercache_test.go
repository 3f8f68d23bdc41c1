package workload

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mpool-dev/mpool/internal/testenv"
)

// newCache returns a ClusterCache reading Secrets directly (no manager here).
func newCache(t *testing.T, opts Options) *ClusterCache {
	t.Helper()
	opts.SecretReader = env.Client
	if opts.Scheme == nil {
		opts.Scheme = env.Scheme
	}
	cc, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cc.Stop)
	return cc
}

// putKubeconfig creates or updates the kubeconfig Secret of cluster.
func putKubeconfig(t *testing.T, cluster types.NamespacedName, kubeconfig []byte) {
	t.Helper()
	ctx := context.Background()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace, Name: KubeconfigSecretName(cluster.Name)}}
	err := env.Client.Get(ctx, client.ObjectKeyFromObject(s), s)
	s.Data = map[string][]byte{KubeconfigDataKey: kubeconfig}
	if err == nil {
		err = env.Client.Update(ctx, s)
	} else {
		err = env.Client.Create(ctx, s)
	}
	if err != nil {
		t.Fatalf("writing kubeconfig secret: %v", err)
	}
}

// kubeconfigFor rewrites env.Kubeconfig to reach the API server at server.
func kubeconfigFor(t *testing.T, server string) []byte {
	t.Helper()
	cfg, err := clientcmd.Load(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		c.Server = server
	}
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func createNode(t *testing.T, name, providerID string) *corev1.Node {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: providerID}}
	if err := env.Client.Create(context.Background(), n); err != nil {
		t.Fatalf("creating node %s: %v", name, err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), n) })
	return n
}

func TestClientServesNodesFromTheProviderIDIndex(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cluster := types.NamespacedName{Namespace: ns, Name: "c1"}
	putKubeconfig(t, cluster, env.Kubeconfig)
	cc := newCache(t, Options{})

	c1, err := cc.Client(ctx, cluster)
	if err != nil {
		t.Fatalf("Client: %v", err)
	}
	c2, err := cc.Client(ctx, cluster)
	if err != nil {
		t.Fatalf("Client: %v", err)
	}
	if c1 != c2 {
		t.Fatal("the client must be built once and reused")
	}

	pidA, pidB := "test:///"+ns+"/a", "test:///"+ns+"/b"
	createNode(t, ns+"-a", pidA)
	createNode(t, ns+"-b", pidB)
	testenv.Eventually(t, 10*time.Second, func() error {
		n, err := cc.NodeByProviderID(ctx, cluster, pidA)
		if err != nil {
			return err
		}
		if n == nil || n.Name != ns+"-a" {
			return fmt.Errorf("NodeByProviderID(%s) = %v", pidA, n)
		}
		got, err := cc.NodesByProviderIDs(ctx, cluster, []string{pidA, pidB, "test:///missing"})
		if err != nil {
			return err
		}
		if len(got) != 2 || got[pidA].Name != ns+"-a" || got[pidB].Name != ns+"-b" {
			return fmt.Errorf("NodesByProviderIDs = %v", got)
		}
		return nil
	})
	n, err := cc.NodeByProviderID(ctx, cluster, "test:///missing")
	if err != nil || n != nil {
		t.Fatalf("NodeByProviderID(missing) = %v, %v; want nil, nil", n, err)
	}

	// Other kinds are read directly: a Secret created a moment ago is visible.
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "direct"}}
	if err := c1.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := c1.Get(ctx, client.ObjectKeyFromObject(s), &corev1.Secret{}); err != nil {
		t.Fatalf("direct read: %v", err)
	}
}

func TestNodesOwnedBy(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cluster := types.NamespacedName{Namespace: ns, Name: "c1"}
	putKubeconfig(t, cluster, env.Kubeconfig)
	cc := newCache(t, Options{})
	owner := Owner{ClusterName: "c1", Namespace: ns, Kind: "MachinePool", Name: "mp"}

	n := createNode(t, ns+"-owned", "test:///"+ns+"/owned")
	n.Annotations = owner.Annotations()
	if err := env.Client.Update(ctx, n); err != nil {
		t.Fatal(err)
	}
	createNode(t, ns+"-other", "test:///"+ns+"/other")
	testenv.Eventually(t, 10*time.Second, func() error {
		got, err := cc.NodesOwnedBy(ctx, cluster, owner)
		if err != nil {
			return err
		}
		if len(got) != 1 || got[0].Name != ns+"-owned" {
			return fmt.Errorf("NodesOwnedBy = %d nodes", len(got))
		}
		return nil
	})
}

func TestConnectionErrors(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cc := newCache(t, Options{ConnectTimeout: time.Second, RequestTimeout: 2 * time.Second, SyncTimeout: 2 * time.Second})

	t.Run("no secret", func(t *testing.T) {
		_, err := cc.Client(ctx, types.NamespacedName{Namespace: ns, Name: "nosecret"})
		if !IsConnectionError(err) || ConnectionErrorReason(err) != ReasonSecretNotFound {
			t.Fatalf("err = %v, want a %s connection error", err, ReasonSecretNotFound)
		}
	})
	t.Run("garbage kubeconfig", func(t *testing.T) {
		cluster := types.NamespacedName{Namespace: ns, Name: "garbage"}
		putKubeconfig(t, cluster, []byte("not: [a kubeconfig"))
		_, err := cc.Client(ctx, cluster)
		if !IsConnectionError(err) || ConnectionErrorReason(err) != ReasonInvalidKubeconfig {
			t.Fatalf("err = %v, want a %s connection error", err, ReasonInvalidKubeconfig)
		}
	})
	t.Run("unreachable API server, within the timeouts", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		_ = l.Close() // nothing listens there any more
		cluster := types.NamespacedName{Namespace: ns, Name: "unreachable"}
		putKubeconfig(t, cluster, kubeconfigFor(t, "https://"+addr))
		start := time.Now()
		_, err = cc.Client(ctx, cluster)
		if !IsConnectionError(err) || ConnectionErrorReason(err) != ReasonUnreachable {
			t.Fatalf("err = %v, want a %s connection error", err, ReasonUnreachable)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("failing took %s: connecting must be bounded", d)
		}
		if cc.Connected(cluster) {
			t.Fatal("a failed connect must not leave a client behind")
		}
	})
}

func TestReconnectsWhenTheKubeconfigChanges(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cluster := types.NamespacedName{Namespace: ns, Name: "c1"}
	putKubeconfig(t, cluster, env.Kubeconfig)
	cc := newCache(t, Options{})

	c1, err := cc.Client(ctx, cluster)
	if err != nil {
		t.Fatal(err)
	}
	old := cc.accessors[cluster]
	putKubeconfig(t, cluster, append(append([]byte{}, env.Kubeconfig...), []byte("\n# rotated\n")...))
	c2, err := cc.Client(ctx, cluster)
	if err != nil {
		t.Fatal(err)
	}
	if c1 == c2 {
		t.Fatal("a changed kubeconfig must give a new client")
	}
	if old.ctx.Err() == nil {
		t.Fatal("the old cache must be stopped")
	}

	// Deleting the Secret disconnects.
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: KubeconfigSecretName("c1")}}
	if err := env.Client.Delete(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.Client(ctx, cluster); !IsConnectionError(err) {
		t.Fatalf("err = %v, want a connection error", err)
	}
	if cc.Connected(cluster) {
		t.Fatal("the client must be dropped with its Secret")
	}
}

func TestDisconnect(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cluster := types.NamespacedName{Namespace: ns, Name: "c1"}
	putKubeconfig(t, cluster, env.Kubeconfig)
	cc := newCache(t, Options{})
	if _, err := cc.Client(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	a := cc.accessors[cluster]
	cc.Disconnect(cluster)
	if cc.Connected(cluster) || a.ctx.Err() == nil {
		t.Fatal("Disconnect must drop the client and stop its cache")
	}
	if _, err := cc.Client(ctx, cluster); err != nil {
		t.Fatalf("reconnecting: %v", err)
	}
}

func TestNodeSourceEnqueuesMappedRequests(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := env.NewNamespace(t)
	cluster := types.NamespacedName{Namespace: ns, Name: "c1"}
	putKubeconfig(t, cluster, env.Kubeconfig)
	cc := newCache(t, Options{})

	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	prefix := ns + "-"
	src := cc.NodeSource(func(_ context.Context, c []types.NamespacedName, n *corev1.Node) []reconcile.Request {
		if len(c) != 1 || c[0] != cluster || len(n.Name) < len(prefix) || n.Name[:len(prefix)] != prefix {
			return nil // Nodes of other tests
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: "pool-of-" + n.Name}}}
	})
	if err := src.Start(ctx, q); err != nil {
		t.Fatal(err)
	}
	if _, err := cc.Client(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	createNode(t, prefix+"x", "test:///"+ns+"/x")

	got := make(chan reconcile.Request, 1)
	go func() {
		item, shutdown := q.Get()
		if !shutdown {
			got <- item
			q.Done(item)
		}
	}()
	select {
	case req := <-got:
		if req.Name != "pool-of-"+prefix+"x" {
			t.Fatalf("request = %v", req)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no request for the new Node")
	}
}

// TestClustersOfOneKubeconfigShareOneConnection: Clusters whose kubeconfig
// Secrets hold the same kubeconfig share one connection and Node cache, each
// with a client of its own; every Node event reaches each of them, a Cluster
// joining later is handed the Nodes already there, and the connection
// stops with the last Cluster using it.
func TestClustersOfOneKubeconfigShareOneConnection(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := env.NewNamespace(t)
	c1 := types.NamespacedName{Namespace: ns, Name: "c1"}
	c2 := types.NamespacedName{Namespace: ns, Name: "c2"}
	c3 := types.NamespacedName{Namespace: ns, Name: "c3"}
	putKubeconfig(t, c1, env.Kubeconfig)
	putKubeconfig(t, c2, env.Kubeconfig)
	putKubeconfig(t, c3, append(append([]byte{}, env.Kubeconfig...), []byte("\n# another user's copy\n")...))
	cc := newCache(t, Options{})

	// Requests name the Cluster (as the namespace) and the Node.
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	prefix := ns + "-"
	src := cc.NodeSource(func(_ context.Context, clusters []types.NamespacedName, n *corev1.Node) []reconcile.Request {
		if len(n.Name) < len(prefix) || n.Name[:len(prefix)] != prefix {
			return nil // Nodes of other tests
		}
		var out []reconcile.Request
		for _, c := range clusters {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: c.Name, Name: n.Name}})
		}
		return out
	})
	if err := src.Start(ctx, q); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[types.NamespacedName]bool{}
	go func() {
		for {
			item, shutdown := q.Get()
			if shutdown {
				return
			}
			mu.Lock()
			seen[item.NamespacedName] = true
			mu.Unlock()
			q.Done(item)
		}
	}()
	heard := func(cluster types.NamespacedName, node string) bool {
		mu.Lock()
		defer mu.Unlock()
		return seen[types.NamespacedName{Namespace: cluster.Name, Name: node}]
	}
	waitHeard := func(node string, clusters ...types.NamespacedName) {
		t.Helper()
		for _, c := range clusters {
			testenv.Eventually(t, 10*time.Second, func() error {
				if !heard(c, node) {
					return fmt.Errorf("%s has not heard of Node %s", c.Name, node)
				}
				return nil
			})
		}
	}
	connect := func(c types.NamespacedName) client.Client {
		t.Helper()
		cl, err := cc.Client(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}

	cl1 := connect(c1)
	x := prefix + "x"
	createNode(t, x, "test:///"+ns+"/x")
	waitHeard(x, c1)
	cl2 := connect(c2) // joins c1's connection: handed Node x
	waitHeard(x, c2)
	connect(c3)
	waitHeard(x, c3)
	cc.mu.Lock()
	a1, a2, a3, conns := cc.accessors[c1], cc.accessors[c2], cc.accessors[c3], len(cc.conns)
	cc.mu.Unlock()
	if a1.conn != a2.conn || a1.conn == a3.conn || conns != 2 {
		t.Fatalf("c1 and c2 must share one connection, c3 (another kubeconfig) have its own: %d connections", conns)
	}
	if cl1 == cl2 {
		t.Fatal("each Cluster must have a client of its own (its own rate limits)")
	}

	y := prefix + "y"
	createNode(t, y, "test:///"+ns+"/y")
	waitHeard(y, c1, c2, c3)

	cc.Disconnect(c1)
	if a1.ctx.Err() != nil {
		t.Fatal("the connection must live on while c2 uses it")
	}
	n := &corev1.Node{}
	if err := cl2.Get(ctx, client.ObjectKey{Name: y}, n); err != nil {
		t.Fatalf("c2 reading a Node from the shared cache after c1 left: %v", err)
	}
	z := prefix + "z"
	createNode(t, z, "test:///"+ns+"/z")
	waitHeard(z, c2, c3) // c1's and c2's requests come from one mapping
	if heard(c1, z) {
		t.Fatal("a disconnected Cluster must hear no more Node events")
	}

	cc.Disconnect(c2)
	if a2.ctx.Err() == nil {
		t.Fatal("the connection must stop with the last Cluster using it")
	}
	if a3.ctx.Err() != nil || !cc.Connected(c3) {
		t.Fatal("c3's own connection must be untouched")
	}
	cc.mu.Lock()
	conns = len(cc.conns)
	cc.mu.Unlock()
	if conns != 1 {
		t.Fatalf("%d connections left, want c3's only", conns)
	}
}

// proxy forwards TCP connections to target until closed.
type proxy struct {
	l      net.Listener
	mu     sync.Mutex
	conns  []net.Conn
	closed atomic.Bool
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{l: l}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(u, c); _ = u.Close() }()
			go func() { _, _ = io.Copy(c, u); _ = c.Close() }()
		}
	}()
	t.Cleanup(p.Close)
	return p
}

func (p *proxy) Close() {
	if p.closed.Swap(true) {
		return
	}
	_ = p.l.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
}

func TestHealthCheckDisconnectsAnUnreachableCluster(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t)
	cluster := types.NamespacedName{Namespace: ns, Name: "c1"}
	u, err := url.Parse(env.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, u.Host)
	putKubeconfig(t, cluster, kubeconfigFor(t, "https://"+p.l.Addr().String()))
	clk := clocktesting.NewFakeClock(time.Now())
	var requests atomic.Int64
	cc := newCache(t, Options{
		Clock: clk, HealthCheckInterval: time.Minute, HealthCheckFailureThreshold: 2,
		ConnectTimeout: time.Second, RequestTimeout: time.Second,
		WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(r *http.Request) (*http.Response, error) {
				requests.Add(1)
				return rt.RoundTrip(r)
			})
		},
	})
	if _, err := cc.Client(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	if requests.Load() == 0 {
		t.Fatal("WrapTransport was not applied")
	}

	// Healthy: probes succeed and the cluster stays connected.
	testenv.Eventually(t, 5*time.Second, func() error {
		if !clk.HasWaiters() {
			return fmt.Errorf("health check not waiting yet")
		}
		return nil
	})
	p.Close()
	testenv.Eventually(t, 20*time.Second, func() error {
		if !cc.Connected(cluster) {
			return nil
		}
		if clk.HasWaiters() {
			clk.Step(time.Minute)
		}
		return fmt.Errorf("still connected")
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestClusterSourceHearsConnectsAndDisconnects(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := env.NewNamespace(t)
	cluster := types.NamespacedName{Namespace: ns, Name: "c1"}
	putKubeconfig(t, cluster, env.Kubeconfig)
	cc := newCache(t, Options{})

	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	src := cc.ClusterSource(func(_ context.Context, c types.NamespacedName) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: c}}
	})
	if err := src.Start(ctx, q); err != nil {
		t.Fatal(err)
	}
	next := func(what string) {
		t.Helper()
		got := make(chan reconcile.Request, 1)
		go func() {
			item, shutdown := q.Get()
			if !shutdown {
				q.Done(item)
				got <- item
			}
		}()
		select {
		case req := <-got:
			if req.NamespacedName != cluster {
				t.Fatalf("%s: request %v", what, req)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no request", what)
		}
	}
	if _, err := cc.Client(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	next("connect")
	cc.Disconnect(cluster)
	next("disconnect")
}
