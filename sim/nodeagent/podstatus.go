package nodeagent

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// podAction is what the simulated kubelet does next with a pod on one of
// its Nodes.
type podAction int

const (
	// podNothing: the pod already shows what a kubelet would report, or it
	// is terminal, or its deletion only waits for finalizers.
	podNothing podAction = iota
	// podStart: post a Running status with every container ready.
	podStart
	// podDelete: the pod is terminating; delete it with grace period 0
	// (after the returned delay, if any).
	podDelete
)

// defaultGracePeriod is the grace period of a terminating pod that does not
// say (the API server always sets one; this is a guard).
const defaultGracePeriod = 30 * time.Second

// podCIDR is the range the simulated kubelet hands fake pod IPs from.
var podCIDR = netip.MustParsePrefix("10.64.0.0/10")

// nextPodAction decides what the kubelet of pod's Node does now. A
// terminating pod is deleted once it has taken stopDelay to stop, never
// longer than its grace period; the returned wait is how long that still
// takes (at most stopDelay, whatever the clocks say).
func nextPodAction(pod *corev1.Pod, hostIP string, now time.Time, stopDelay time.Duration) (podAction, time.Duration) {
	if pod.DeletionTimestamp != nil {
		if g := pod.DeletionGracePeriodSeconds; g != nil && *g == 0 {
			// Already deleted with grace period 0: only finalizers hold it.
			return podNothing, 0
		}
		grace := defaultGracePeriod
		if g := pod.DeletionGracePeriodSeconds; g != nil {
			grace = time.Duration(*g) * time.Second
		}
		delay := min(stopDelay, grace)
		if delay <= 0 {
			return podDelete, 0
		}
		// The API server sets deletionTimestamp to the deletion request's
		// time plus the grace period.
		stopping := pod.DeletionTimestamp.Add(-grace)
		wait := min(stopping.Add(delay).Sub(now), delay)
		return podDelete, max(wait, 0)
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return podNothing, 0
	}
	if podRunning(pod, hostIP) {
		return podNothing, 0
	}
	return podStart, 0
}

// kubeletConditions are the pod conditions a kubelet owns, all True once
// every container runs and is ready.
var kubeletConditions = []corev1.PodConditionType{
	corev1.PodReadyToStartContainers,
	corev1.PodInitialized,
	corev1.ContainersReady,
	corev1.PodReady,
	corev1.PodScheduled,
}

// podRunning reports whether pod's status already says what runningStatus
// would: Running on hostIP with a pod IP, every kubelet condition True and
// every container started and ready.
func podRunning(pod *corev1.Pod, hostIP string) bool {
	s := &pod.Status
	if s.Phase != corev1.PodRunning || s.HostIP != hostIP || s.PodIP == "" || s.StartTime == nil {
		return false
	}
	for _, t := range kubeletConditions {
		if c := findCondition(s.Conditions, t); c == nil || c.Status != corev1.ConditionTrue {
			return false
		}
	}
	if len(s.ContainerStatuses) != len(pod.Spec.Containers) || len(s.InitContainerStatuses) != len(pod.Spec.InitContainers) {
		return false
	}
	for i, c := range pod.Spec.Containers {
		cs := s.ContainerStatuses[i]
		if cs.Name != c.Name || cs.State.Running == nil || !cs.Ready {
			return false
		}
	}
	for i, c := range pod.Spec.InitContainers {
		cs := s.InitContainerStatuses[i]
		if cs.Name != c.Name {
			return false
		}
		if sidecar(c) {
			if cs.State.Running == nil || !cs.Ready {
				return false
			}
		} else if t := cs.State.Terminated; t == nil || t.ExitCode != 0 {
			return false
		}
	}
	return true
}

// runningStatus is the status a kubelet posts once all of pod's containers
// run on the Node at hostIP: phase Running, the kubelet's conditions True
// (other conditions kept), init containers completed (sidecars running),
// every container running and ready. Times already recorded are kept, new
// ones are now.
func runningStatus(pod *corev1.Pod, hostIP string, now time.Time) corev1.PodStatus {
	t := metav1.NewTime(now)
	s := *pod.Status.DeepCopy()
	s.Phase = corev1.PodRunning
	s.Reason, s.Message = "", ""
	s.HostIP = hostIP
	s.HostIPs = []corev1.HostIP{{IP: hostIP}}
	ip := fakePodIP(pod, hostIP)
	s.PodIP = ip
	s.PodIPs = []corev1.PodIP{{IP: ip}}
	if s.StartTime == nil {
		s.StartTime = &t
	}
	for _, typ := range kubeletConditions {
		c := findCondition(s.Conditions, typ)
		if c == nil {
			s.Conditions = append(s.Conditions, corev1.PodCondition{Type: typ})
			c = &s.Conditions[len(s.Conditions)-1]
		}
		if c.Status != corev1.ConditionTrue {
			c.Status = corev1.ConditionTrue
			c.LastTransitionTime = t
		}
		c.Reason, c.Message = "", ""
	}

	old := containerStatusesByName(pod.Status.InitContainerStatuses)
	s.InitContainerStatuses = make([]corev1.ContainerStatus, 0, len(pod.Spec.InitContainers))
	for _, c := range pod.Spec.InitContainers {
		cs := containerStatus(pod, c, old[c.Name], t)
		if !sidecar(c) {
			started := t
			if r := old[c.Name].State.Running; r != nil {
				started = r.StartedAt
			}
			if prev := old[c.Name].State.Terminated; prev != nil && prev.ExitCode == 0 {
				cs.State = old[c.Name].State
			} else {
				cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 0, Reason: "Completed", StartedAt: started, FinishedAt: t, ContainerID: cs.ContainerID,
				}}
			}
			cs.Ready, cs.Started = false, ptr.To(false)
		}
		s.InitContainerStatuses = append(s.InitContainerStatuses, cs)
	}
	old = containerStatusesByName(pod.Status.ContainerStatuses)
	s.ContainerStatuses = make([]corev1.ContainerStatus, 0, len(pod.Spec.Containers))
	for _, c := range pod.Spec.Containers {
		s.ContainerStatuses = append(s.ContainerStatuses, containerStatus(pod, c, old[c.Name], t))
	}
	return s
}

// containerStatus is c running and ready, keeping the start time and
// restart count of a previous status of the same container.
func containerStatus(pod *corev1.Pod, c corev1.Container, old corev1.ContainerStatus, now metav1.Time) corev1.ContainerStatus {
	started := now
	if old.State.Running != nil {
		started = old.State.Running.StartedAt
	}
	return corev1.ContainerStatus{
		Name:         c.Name,
		Image:        c.Image,
		ImageID:      "sha256:" + digest(c.Image),
		ContainerID:  "containerd://" + digest(string(pod.UID), c.Name),
		State:        corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
		Ready:        true,
		Started:      ptr.To(true),
		RestartCount: old.RestartCount,
	}
}

func containerStatusesByName(list []corev1.ContainerStatus) map[string]corev1.ContainerStatus {
	m := make(map[string]corev1.ContainerStatus, len(list))
	for _, cs := range list {
		m[cs.Name] = cs
	}
	return m
}

// sidecar reports whether an init container is a sidecar: it keeps running
// beside the regular containers.
func sidecar(c corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

func findCondition(conds []corev1.PodCondition, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// fakePodIP is the pod's IP: the Node's own for host-network pods, else a
// stable address in podCIDR derived from the pod's UID (an IP already
// reported is kept).
func fakePodIP(pod *corev1.Pod, hostIP string) string {
	if pod.Spec.HostNetwork {
		return hostIP
	}
	if pod.Status.PodIP != "" {
		return pod.Status.PodIP
	}
	sum := sha256.Sum256([]byte(pod.UID))
	base := podCIDR.Addr().As4()
	n := binary.BigEndian.Uint32(base[:])
	hostBits := uint32(1)<<(32-podCIDR.Bits()) - 1
	off := binary.BigEndian.Uint32(sum[:4]) & hostBits
	off = max(off, 1) // not the network address
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], n|off)
	return netip.AddrFrom4(b).String()
}

// digest is a stable 64-hex-digit identifier of parts.
func digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
