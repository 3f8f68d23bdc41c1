package nodeagent

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Health is what a simulated VM's kubelet does once it has registered its
// Node: the cloud's per-instance faults (core.InstanceFault) as the node
// agent plays them.
type Health string

// Kubelet health.
const (
	// HealthOK: the kubelet renews its Lease and reports Ready=True.
	HealthOK Health = ""
	// HealthKubeletStopped: the kubelet stops; neither the Lease nor the
	// Node's status is renewed any more and its pods are no longer tended.
	// NodeMonitorGracePeriod after the last renewal the agent sets the
	// Node's conditions Unknown (NodeStatusUnknown), as the node lifecycle
	// controller does, which the embedded control plane does not run. An
	// instance that has not joined yet registers its Node first, like a
	// kubelet that dies right after registering.
	HealthKubeletStopped Health = "KubeletStopped"
	// HealthNotReady: the kubelet keeps renewing its Lease but reports
	// Ready=False with reason KubeletNotReady (its container runtime's
	// network is not ready), as a kubelet whose CNI plugin failed does.
	HealthNotReady Health = "NodeNotReady"
)

// DefaultNodeMonitorGracePeriod is kube-controller-manager's default
// --node-monitor-grace-period (50s since Kubernetes 1.32, 40s before).
const DefaultNodeMonitorGracePeriod = 50 * time.Second

// notReadyMessage is what a kubelet whose CNI plugin is not initialised
// reports in the Ready condition.
const notReadyMessage = "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"

// SetHealth changes what the kubelet of the booted instance key does from
// now on (see Health). An instance the agent does not know (not booted, or
// powered off) is ignored; an instance still joining registers its Node with
// the new health.
func (a *Agent) SetHealth(key string, h Health) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.health[key]; !ok {
		return
	}
	a.health[key] = h
	if b := a.beats[key]; b != nil {
		a.setHealthLocked(b, h, a.clock.Now())
	}
}

// setHealthLocked changes a joined Node's health; the heartbeat loop posts
// the change at its next tick. Callers hold a.mu.
func (a *Agent) setHealthLocked(b *beat, h Health, now time.Time) {
	if b.health == h {
		return
	}
	switch {
	case h == HealthKubeletStopped:
		a.unindex(b)
	case b.health == HealthKubeletStopped:
		a.index(b)
	}
	b.health = h
	b.next = now
}

// readyStatus is the Ready status a kubelet of health h posts.
func readyStatus(h Health) corev1.ConditionStatus {
	if h == HealthNotReady {
		return corev1.ConditionFalse
	}
	return corev1.ConditionTrue
}

// registeredReady is the Ready status the Node has after j's join: what it
// registered with, or not known when a stopped kubelet's instance resumed.
func registeredReady(j *job) corev1.ConditionStatus {
	if j.inst.Joined && j.health == HealthKubeletStopped {
		return ""
	}
	return readyStatus(j.health)
}

// beatDue reports whether b needs a beat worker now: a Lease renewal that
// is due, a changed status to post, or a stopped kubelet's Node to mark
// Unknown. Callers hold a.mu.
func (a *Agent) beatDue(b *beat, now time.Time) bool {
	switch {
	case b.health == HealthKubeletStopped:
		return b.posted != corev1.ConditionUnknown && !now.Before(b.renewed.Add(a.opts.NodeMonitorGracePeriod))
	case b.posted != readyStatus(b.health):
		return true
	}
	return !now.Before(b.next)
}

// renewalOnly reports whether b's beat is only a Lease renewal, which
// takeDue holds to MaxHeartbeatQPS, rather than a change beatDue lets
// through at once. Callers hold a.mu.
func (b *beat) renewalOnly() bool {
	return b.health != HealthKubeletStopped && b.posted == readyStatus(b.health)
}

// beat renews b's Lease and posts its Node's status when it changed, or
// marks a stopped kubelet's Node Unknown.
func (a *Agent) beat(ctx context.Context, b *beat) {
	a.mu.Lock()
	alive := a.beats[b.key] == b
	h, posted := b.health, b.posted
	lease := a.leaseDuration()
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		b.inflight = false
		a.mu.Unlock()
	}()
	if !alive {
		return
	}
	// settle records what the Node now shows, unless the health changed
	// meanwhile (the next tick posts that).
	settle := func(s corev1.ConditionStatus) {
		a.mu.Lock()
		defer a.mu.Unlock()
		if b.health == h {
			b.posted = s
		}
	}
	if h == HealthKubeletStopped {
		if posted == corev1.ConditionUnknown {
			return
		}
		if err := a.markNotReady(ctx, b.endpoint, b.nodeName); err != nil {
			a.log.V(1).Info("Marking a stopped kubelet's node Unknown failed", "node", b.nodeName, "err", err.Error())
			return
		}
		settle(corev1.ConditionUnknown)
		return
	}
	if err := a.renewLease(ctx, b.endpoint, b.nodeName, lease); err != nil {
		if ctx.Err() == nil {
			a.log.V(1).Info("Renewing a node lease failed", "node", b.nodeName, "err", err.Error())
		}
	} else {
		now := a.clock.Now()
		a.mu.Lock()
		b.renewed = now
		a.mu.Unlock()
	}
	want := readyStatus(h)
	if posted == want {
		return
	}
	if err := a.postStatus(ctx, b.endpoint, b.nodeName, h); err != nil {
		a.log.V(1).Info("Posting a node's status failed", "node", b.nodeName, "err", err.Error())
		return
	}
	settle(want)
	if posted != corev1.ConditionTrue && posted != corev1.ConditionFalse {
		// The kubelet is back: it tends the pods bound meanwhile.
		a.tendNode(ctx, b.endpoint, b.nodeName)
	}
}

// postStatus posts the Node conditions a kubelet of health h reports.
func (a *Agent) postStatus(ctx context.Context, endpoint, nodeName string, h Health) error {
	if err := a.patchConditions(ctx, endpoint, nodeName, nodeConditions(h, metav1.NewTime(a.clock.Now()))); err != nil {
		return fmt.Errorf("posting the status of node %s: %w", nodeName, err)
	}
	return nil
}

// nodeConditions are the conditions a kubelet of health h posts at t.
func nodeConditions(h Health, t metav1.Time) []corev1.NodeCondition {
	cond := func(typ corev1.NodeConditionType, status corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: typ, Status: status, LastHeartbeatTime: t, LastTransitionTime: t, Reason: reason, Message: msg}
	}
	ready := cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status")
	if h == HealthNotReady {
		ready = cond(corev1.NodeReady, corev1.ConditionFalse, "KubeletNotReady", notReadyMessage)
	}
	return []corev1.NodeCondition{
		cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
		cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
		cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
		ready,
	}
}
