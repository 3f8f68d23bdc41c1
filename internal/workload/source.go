package workload

import (
	"context"
	"fmt"
	"maps"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// NodeMapFunc maps a Node of a workload cluster to the requests it should
// trigger. clusters are the Clusters that reach that workload cluster: one,
// unless several Clusters' kubeconfig Secrets hold the same kubeconfig (they
// then share one connection, and a Node event is mapped once for all of
// them). It must not modify node or clusters.
type NodeMapFunc func(ctx context.Context, clusters []types.NamespacedName, node *corev1.Node) []reconcile.Request

// NodeSource returns a controller source that feeds Node events from every
// workload cluster this cache connects to through fn. A cluster's Nodes are
// watched from the moment it is connected (by any Client call) until it is
// disconnected; on connect every existing Node is delivered once. Updates
// that change nothing a MachinePool reports on (heartbeats) are dropped.
func (c *ClusterCache) NodeSource(fn NodeMapFunc) source.Source {
	return &nodeSource{cc: c, fn: fn}
}

// nodeSource is a source.Source over the Node informers of all connected
// clusters.
type nodeSource struct {
	sourceQueue
	cc *ClusterCache
	fn NodeMapFunc
}

var _ source.Source = &nodeSource{}

// String implements fmt.Stringer for controller-runtime's logs.
func (s *nodeSource) String() string { return "workload cluster Nodes" }

// Start implements source.Source.
func (s *nodeSource) Start(ctx context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	if err := s.bind(ctx, queue, s.String()); err != nil {
		return err
	}
	s.cc.mu.Lock()
	s.cc.sources[s] = struct{}{}
	for _, cn := range s.cc.conns {
		if err := s.register(cn); err != nil {
			s.cc.mu.Unlock()
			return fmt.Errorf("watching Nodes of the workload cluster of Clusters %v: %w", clusterRefs(cn.users()), err)
		}
	}
	s.cc.mu.Unlock()
	go s.cc.whenDone(ctx, func() { delete(s.cc.sources, s) })
	return nil
}

// register adds s's event handler to cn's Node informer; each event is
// mapped for the Clusters using cn at that moment. The handler goes away
// with the informer when cn is stopped.
func (s *nodeSource) register(cn *conn) error {
	_, err := cn.informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if n, ok := obj.(*corev1.Node); ok {
				s.enqueue(cn.users(), n)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*corev1.Node)
			n, ok2 := newObj.(*corev1.Node)
			if !ok1 || !ok2 || !NodeChanged(o, n) {
				return
			}
			clusters := cn.users()
			s.enqueue(clusters, n)
			if o.Spec.ProviderID != n.Spec.ProviderID || ownerKey(o) != ownerKey(n) {
				s.enqueue(clusters, o)
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if n, ok := obj.(*corev1.Node); ok {
				s.enqueue(cn.users(), n)
			}
		},
	})
	return err
}

// replay hands every Node in cn's cache to s for cluster alone: cluster
// has just joined a connection whose handlers are already running.
func (s *nodeSource) replay(cn *conn, cluster types.NamespacedName) {
	var nodes []*corev1.Node
	if cn.indexer != nil {
		for _, obj := range cn.indexer.List() {
			if n, ok := obj.(*corev1.Node); ok {
				nodes = append(nodes, n)
			}
		}
	} else {
		list := &corev1.NodeList{}
		if err := cn.cache.List(cn.ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			return // cn is stopping: the Cluster is disconnected with it
		}
		for i := range list.Items {
			nodes = append(nodes, &list.Items[i])
		}
	}
	clusters := []types.NamespacedName{cluster}
	for _, n := range nodes {
		s.enqueue(clusters, n)
	}
}

// InNamespaceOf restricts a list to the namespace of clusters when they
// share one, as a NodeMapFunc's clusters nearly always do; Clusters in
// several namespaces sharing one connection are listed across namespaces.
func InNamespaceOf(clusters []types.NamespacedName) []client.ListOption {
	if len(clusters) == 0 {
		return nil
	}
	for _, c := range clusters[1:] {
		if c.Namespace != clusters[0].Namespace {
			return nil
		}
	}
	return []client.ListOption{client.InNamespace(clusters[0].Namespace)}
}

func (s *nodeSource) enqueue(clusters []types.NamespacedName, node *corev1.Node) {
	if len(clusters) == 0 {
		return
	}
	s.add(func(ctx context.Context) []reconcile.Request { return s.fn(ctx, clusters, node) })
}

func ownerKey(n *corev1.Node) string {
	o, ok := OwnerOf(n)
	if !ok {
		return ""
	}
	return o.Key()
}

// NodeChanged reports whether a Node update changes anything a MachinePool
// reports on or acts on: identity, providerID, readiness, schedulability,
// taints, labels, annotations, deletion. Heartbeat-only updates return false.
func NodeChanged(oldNode, newNode *corev1.Node) bool {
	if oldNode.UID != newNode.UID ||
		oldNode.Spec.ProviderID != newNode.Spec.ProviderID ||
		oldNode.Spec.Unschedulable != newNode.Spec.Unschedulable ||
		!oldNode.DeletionTimestamp.Equal(newNode.DeletionTimestamp) ||
		oldNode.Status.NodeInfo.KubeletVersion != newNode.Status.NodeInfo.KubeletVersion {
		return true
	}
	if !maps.Equal(oldNode.Labels, newNode.Labels) || !maps.Equal(oldNode.Annotations, newNode.Annotations) {
		return true
	}
	if !equality.Semantic.DeepEqual(oldNode.Spec.Taints, newNode.Spec.Taints) {
		return true
	}
	or, nr := readyCondition(oldNode), readyCondition(newNode)
	if (or == nil) != (nr == nil) {
		return true
	}
	return or != nil && (or.Status != nr.Status || !or.LastTransitionTime.Equal(&nr.LastTransitionTime))
}

func readyCondition(n *corev1.Node) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// ClusterMapFunc maps a workload cluster that connected or disconnected to
// the requests it should trigger.
type ClusterMapFunc func(ctx context.Context, cluster types.NamespacedName) []reconcile.Request

// ClusterSource returns a controller source that calls fn whenever a
// workload cluster connects or is disconnected (Disconnect, a changed or
// deleted kubeconfig Secret, failed health checks), so that controllers
// report a lost cluster without polling.
func (c *ClusterCache) ClusterSource(fn ClusterMapFunc) source.Source {
	return &clusterSource{cc: c, fn: fn}
}

type clusterSource struct {
	sourceQueue
	cc *ClusterCache
	fn ClusterMapFunc
}

var _ source.Source = &clusterSource{}

// String implements fmt.Stringer for controller-runtime's logs.
func (s *clusterSource) String() string { return "workload cluster connections" }

// Start implements source.Source.
func (s *clusterSource) Start(ctx context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	if err := s.bind(ctx, queue, s.String()); err != nil {
		return err
	}
	s.cc.mu.Lock()
	s.cc.clusterSources[s] = struct{}{}
	s.cc.mu.Unlock()
	go s.cc.whenDone(ctx, func() { delete(s.cc.clusterSources, s) })
	return nil
}

func (s *clusterSource) notify(cluster types.NamespacedName) {
	s.add(func(ctx context.Context) []reconcile.Request { return s.fn(ctx, cluster) })
}

// notifyClusterSources tells every cluster source that cluster connected or
// disconnected. It must be called without c.mu held; the sources run in a
// goroutine so that callers holding per-cluster locks do not wait on them.
func (c *ClusterCache) notifyClusterSources(cluster types.NamespacedName) {
	c.mu.Lock()
	srcs := make([]*clusterSource, 0, len(c.clusterSources))
	for s := range c.clusterSources {
		srcs = append(srcs, s)
	}
	c.mu.Unlock()
	if len(srcs) == 0 {
		return
	}
	go func() {
		for _, s := range srcs {
			s.notify(cluster)
		}
	}()
}

// sourceQueue is the controller queue a workload source feeds, bound once by
// the source's Start.
type sourceQueue struct {
	mu    sync.Mutex
	ctx   context.Context
	queue workqueue.TypedRateLimitingInterface[reconcile.Request]
}

// bind records the controller's context and queue; a second Start of the
// same source (named name) is an error.
func (q *sourceQueue) bind(ctx context.Context, queue workqueue.TypedRateLimitingInterface[reconcile.Request], name string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.queue != nil {
		return fmt.Errorf("source %q started twice", name)
	}
	q.ctx, q.queue = ctx, queue
	return nil
}

// add queues the requests mapFn returns, unless the source is not started
// or its controller has stopped.
func (q *sourceQueue) add(mapFn func(context.Context) []reconcile.Request) {
	q.mu.Lock()
	ctx, queue := q.ctx, q.queue
	q.mu.Unlock()
	if queue == nil || ctx.Err() != nil {
		return
	}
	for _, req := range mapFn(ctx) {
		queue.Add(req)
	}
}

// whenDone runs forget under c.mu once ctx ends: a stopped controller's
// source is unregistered.
func (c *ClusterCache) whenDone(ctx context.Context, forget func()) {
	<-ctx.Done()
	c.mu.Lock()
	forget()
	c.mu.Unlock()
}
