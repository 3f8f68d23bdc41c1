package nodeagent

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// nodeNameIndex indexes the pod cache by spec.nodeName.
const nodeNameIndex = "spec.nodeName"

// kubelet plays the kubelet of every Node the agent keeps alive on one API
// server: one pod informer over all namespaces (bound pods only) feeding a
// queue of pods to tend.
type kubelet struct {
	endpoint string
	informer cache.SharedIndexInformer
	queue    workqueue.TypedRateLimitingInterface[string]
}

// own records b as its instance's heartbeat; its Node is now one whose pods
// the agent tends. Callers hold a.mu.
func (a *Agent) own(key string, b *beat) {
	a.disown(key)
	a.beats[key] = b
	if b.health != HealthKubeletStopped {
		a.index(b)
	}
}

// index makes b's Node one whose pods the agent tends. Callers hold a.mu.
func (a *Agent) index(b *beat) {
	a.ownMu.Lock()
	defer a.ownMu.Unlock()
	nodes := a.owned[b.endpoint]
	if nodes == nil {
		nodes = map[string]*beat{}
		a.owned[b.endpoint] = nodes
	}
	nodes[b.nodeName] = b
}

// unindex stops the tending of b's Node's pods. Callers hold a.mu.
func (a *Agent) unindex(b *beat) {
	a.ownMu.Lock()
	defer a.ownMu.Unlock()
	if nodes := a.owned[b.endpoint]; nodes[b.nodeName] == b {
		delete(nodes, b.nodeName)
	}
}

// disown stops key's heartbeat and the tending of its Node's pods, like a
// kubelet that dies with its VM. Callers hold a.mu.
func (a *Agent) disown(key string) *beat {
	b := a.beats[key]
	if b == nil {
		return nil
	}
	delete(a.beats, key)
	a.unindex(b)
	return b
}

// ownedNode returns the Node named name on endpoint if the agent keeps it
// alive.
func (a *Agent) ownedNode(endpoint, name string) (*beat, bool) {
	if name == "" {
		return nil, false
	}
	a.ownMu.RLock()
	defer a.ownMu.RUnlock()
	b, ok := a.owned[endpoint][name]
	return b, ok
}

// tendNode makes sure the kubelet of endpoint runs and queues the pods
// already bound to nodeName (bound before the Node became ours).
func (a *Agent) tendNode(ctx context.Context, endpoint, nodeName string) {
	k, err := a.kubeletFor(ctx, endpoint)
	if err != nil {
		a.log.Error(err, "Starting the pod watch failed: pods on this API server are not tended", "endpoint", endpoint)
		return
	}
	if k == nil {
		return
	}
	objs, err := k.informer.GetIndexer().ByIndex(nodeNameIndex, nodeName)
	if err != nil {
		return
	}
	for _, o := range objs {
		if pod, ok := o.(*corev1.Pod); ok {
			k.queue.Add(cache.MetaObjectToName(pod).String())
		}
	}
}

// kubeletFor returns the kubelet of endpoint, starting it on first use. It
// stops when ctx (the agent's) is done; nil once ctx is done.
func (a *Agent) kubeletFor(ctx context.Context, endpoint string) (*kubelet, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if k := a.kubelets[endpoint]; k != nil {
		return k, nil
	}
	if ctx.Err() != nil {
		return nil, nil
	}
	cs, err := a.watchClient(endpoint)
	if err != nil {
		return nil, err
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermNotEqualSelector("spec.nodeName", "").String()
		}),
		informers.WithTransform(dropManagedFields),
	)
	k := &kubelet{
		endpoint: endpoint,
		informer: factory.Core().V1().Pods().Informer(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](a.opts.RetryBackoff, a.opts.MaxRetryBackoff),
			workqueue.TypedRateLimitingQueueConfig[string]{Clock: a.clock},
		),
	}
	if err := k.informer.AddIndexers(cache.Indexers{nodeNameIndex: func(obj any) ([]string, error) {
		if pod, ok := obj.(*corev1.Pod); ok && pod.Spec.NodeName != "" {
			return []string{pod.Spec.NodeName}, nil
		}
		return nil, nil
	}}); err != nil {
		return nil, fmt.Errorf("indexing pods by node: %w", err)
	}
	if _, err := k.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { a.podChanged(k, obj) },
		UpdateFunc: func(_, obj any) { a.podChanged(k, obj) },
	}); err != nil {
		return nil, fmt.Errorf("watching pods: %w", err)
	}
	a.kubelets[endpoint] = k

	a.kubeletWG.Add(2 + a.opts.PodWorkers)
	go func() {
		defer a.kubeletWG.Done()
		k.informer.Run(ctx.Done())
	}()
	go func() {
		defer a.kubeletWG.Done()
		<-ctx.Done()
		k.queue.ShutDown()
	}()
	for range a.opts.PodWorkers {
		go func() {
			defer a.kubeletWG.Done()
			a.podWorker(ctx, k)
		}()
	}
	a.log.V(1).Info("Started tending pods", "endpoint", endpoint)
	return k, nil
}

// watchClient is a client for the pod informer: the node agent's
// credentials without the request timeout, which would cut every watch.
func (a *Agent) watchClient(endpoint string) (kubernetes.Interface, error) {
	cfg := a.creds[endpoint]
	if cfg == nil {
		return nil, fmt.Errorf("no node-agent credentials for the API server at %s", endpoint)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = a.opts.QPS, a.opts.Burst
	cfg.UserAgent = "mpool-cloudsim-node-agent"
	cfg.Timeout = 0
	cfg.Wrap(a.opts.WrapTransport)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating a pod watch client for %s: %w", endpoint, err)
	}
	return cs, nil
}

// dropManagedFields keeps the pod cache small.
func dropManagedFields(obj any) (any, error) {
	if pod, ok := obj.(*corev1.Pod); ok {
		pod.ManagedFields = nil
	}
	return obj, nil
}

// podChanged queues a pod on one of our Nodes that needs the kubelet.
func (a *Agent) podChanged(k *kubelet, obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	node, ok := a.ownedNode(k.endpoint, pod.Spec.NodeName)
	if !ok {
		return
	}
	if act, _ := nextPodAction(pod, node.hostIP, a.clock.Now(), a.opts.PodStopDelay); act == podNothing {
		return
	}
	k.queue.Add(cache.MetaObjectToName(pod).String())
}

func (a *Agent) podWorker(ctx context.Context, k *kubelet) {
	for {
		key, shutdown := k.queue.Get()
		if shutdown {
			return
		}
		if err := a.syncPod(ctx, k, key); err != nil && ctx.Err() == nil {
			a.log.V(1).Info("Tending a pod failed, retrying", "pod", key, "err", err.Error())
			k.queue.AddRateLimited(key)
		} else {
			k.queue.Forget(key)
		}
		k.queue.Done(key)
	}
}

// syncPod does what the kubelet of the pod's Node would do next, if the Node
// is one of ours and powered on.
func (a *Agent) syncPod(ctx context.Context, k *kubelet, key string) error {
	obj, exists, err := k.informer.GetIndexer().GetByKey(key)
	if err != nil || !exists {
		return nil
	}
	pod := obj.(*corev1.Pod)
	node, ok := a.ownedNode(k.endpoint, pod.Spec.NodeName)
	if !ok {
		return nil
	}
	now := a.clock.Now()
	act, wait := nextPodAction(pod, node.hostIP, now, a.opts.PodStopDelay)
	switch {
	case act == podStart:
		return a.startPod(ctx, k.endpoint, pod, node.hostIP, now)
	case act == podDelete && wait > 0:
		k.queue.AddAfter(key, wait)
		return nil
	case act == podDelete:
		return a.deletePod(ctx, k.endpoint, pod)
	}
	return nil
}

// startPod posts the pod's Running status as a strategic merge patch of the
// status subresource, with the pod's UID as precondition (as the kubelet's
// status manager does).
func (a *Agent) startPod(ctx context.Context, endpoint string, pod *corev1.Pod, hostIP string, now time.Time) error {
	patch, err := statusPatch(pod, runningStatus(pod, hostIP, now))
	if err != nil {
		return err
	}
	if patch == nil {
		return nil
	}
	cs, err := a.client(endpoint)
	if err != nil {
		return err
	}
	_, err = cs.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	switch {
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		// Gone, or the UID precondition failed: a new pod took the name and
		// gets its own event.
		return nil
	case err != nil:
		return fmt.Errorf("updating the status of pod %s: %w", klog.KObj(pod), err)
	}
	a.log.V(2).Info("Pod is running", "pod", klog.KObj(pod), "node", pod.Spec.NodeName)
	return nil
}

// statusPatch is the strategic merge patch from pod's status to s, with the
// pod's UID as precondition; nil when there is nothing to change.
func statusPatch(pod *corev1.Pod, s corev1.PodStatus) ([]byte, error) {
	oldJSON, err := json.Marshal(&corev1.Pod{Status: pod.Status})
	if err != nil {
		return nil, fmt.Errorf("encoding the status of pod %s: %w", klog.KObj(pod), err)
	}
	newJSON, err := json.Marshal(&corev1.Pod{Status: s})
	if err != nil {
		return nil, fmt.Errorf("encoding the status of pod %s: %w", klog.KObj(pod), err)
	}
	diff, err := strategicpatch.CreateTwoWayMergePatch(oldJSON, newJSON, &corev1.Pod{})
	if err != nil {
		return nil, fmt.Errorf("computing the status patch of pod %s: %w", klog.KObj(pod), err)
	}
	var patch map[string]any
	if err := json.Unmarshal(diff, &patch); err != nil {
		return nil, fmt.Errorf("decoding the status patch of pod %s: %w", klog.KObj(pod), err)
	}
	if len(patch) == 0 {
		return nil, nil
	}
	patch["metadata"] = map[string]any{"uid": pod.UID}
	b, err := json.Marshal(patch)
	if err != nil {
		return nil, fmt.Errorf("encoding the status patch of pod %s: %w", klog.KObj(pod), err)
	}
	return b, nil
}

// deletePod finishes a terminating pod as the kubelet does once its
// containers stopped: delete with grace period 0, UID as precondition.
func (a *Agent) deletePod(ctx context.Context, endpoint string, pod *corev1.Pod) error {
	cs, err := a.client(endpoint)
	if err != nil {
		return err
	}
	err = cs.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      metav1.NewUIDPreconditions(string(pod.UID)),
	})
	// Conflict: the UID precondition failed, a new pod took the name.
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting terminated pod %s: %w", klog.KObj(pod), err)
	}
	a.log.V(2).Info("Pod terminated", "pod", klog.KObj(pod), "node", pod.Spec.NodeName)
	return nil
}
