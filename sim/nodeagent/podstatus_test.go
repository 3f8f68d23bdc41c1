package nodeagent

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/utils/ptr"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func testPod(mods ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default", UID: "uid-1"},
		Spec: corev1.PodSpec{
			NodeName:       "node-a",
			InitContainers: []corev1.Container{{Name: "setup", Image: "setup:1"}, {Name: "proxy", Image: "proxy:1", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}},
			Containers:     []corev1.Container{{Name: "app", Image: "app:1"}, {Name: "log", Image: "log:1"}},
		},
		Status: corev1.PodStatus{
			Phase:      corev1.PodPending,
			QOSClass:   corev1.PodQOSBestEffort,
			Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(-time.Hour))}},
		},
	}
	for _, m := range mods {
		m(p)
	}
	return p
}

func running(p *corev1.Pod) { p.Status = runningStatus(p, "10.1.0.5", t0) }

func terminating(grace int64, requested time.Time) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.DeletionGracePeriodSeconds = ptr.To(grace)
		p.DeletionTimestamp = ptr.To(metav1.NewTime(requested.Add(time.Duration(grace) * time.Second)))
	}
}

func TestNextPodAction(t *testing.T) {
	tests := []struct {
		name      string
		pod       *corev1.Pod
		stopDelay time.Duration
		want      podAction
		wantWait  time.Duration
	}{
		{name: "a pending pod is started", pod: testPod(), want: podStart},
		{name: "a running, ready pod needs nothing", pod: testPod(running), want: podNothing},
		{name: "a running pod that lost readiness is made ready again", pod: testPod(running, func(p *corev1.Pod) {
			findCondition(p.Status.Conditions, corev1.PodReady).Status = corev1.ConditionFalse
		}), want: podStart},
		{name: "a pod reported on another host is started here", pod: testPod(running, func(p *corev1.Pod) { p.Status.HostIP = "10.9.9.9" }), want: podStart},
		{name: "a container added to the status list is reported", pod: testPod(running, func(p *corev1.Pod) {
			p.Status.ContainerStatuses = p.Status.ContainerStatuses[:1]
		}), want: podStart},
		{name: "a succeeded pod is left alone", pod: testPod(func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }), want: podNothing},
		{name: "a failed pod is left alone", pod: testPod(func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }), want: podNothing},
		{name: "a terminating pod is deleted at once by default", pod: testPod(running, terminating(30, t0)), want: podDelete},
		{name: "a terminating pod that never ran is deleted too", pod: testPod(terminating(30, t0)), want: podDelete},
		{name: "a terminating terminal pod is deleted", pod: testPod(terminating(30, t0), func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }), want: podDelete},
		{name: "a pod already deleted with grace 0 waits only for finalizers", pod: testPod(terminating(0, t0)), want: podNothing},
		{name: "the stop delay is waited for", pod: testPod(terminating(30, t0)), stopDelay: 5 * time.Second, want: podDelete, wantWait: 5 * time.Second},
		{name: "the stop delay counts from the deletion request", pod: testPod(terminating(30, t0.Add(-3*time.Second))), stopDelay: 5 * time.Second, want: podDelete, wantWait: 2 * time.Second},
		{name: "the stop delay is capped by the grace period", pod: testPod(terminating(2, t0)), stopDelay: 5 * time.Second, want: podDelete, wantWait: 2 * time.Second},
		{name: "a stop delay already over deletes now", pod: testPod(terminating(30, t0.Add(-time.Minute))), stopDelay: 5 * time.Second, want: podDelete},
		{name: "a deletion timestamp far in the future never waits longer than the stop delay", pod: testPod(terminating(30, t0.Add(24*time.Hour))), stopDelay: 5 * time.Second, want: podDelete, wantWait: 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, wait := nextPodAction(tt.pod, "10.1.0.5", t0, tt.stopDelay)
			if got != tt.want || wait != tt.wantWait {
				t.Fatalf("nextPodAction = %d, %s; want %d, %s", got, wait, tt.want, tt.wantWait)
			}
		})
	}
}

func TestRunningStatus(t *testing.T) {
	pod := testPod(func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions,
			corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "containers with unready status: [app]"},
			corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"},
		)
	})
	s := runningStatus(pod, "10.1.0.5", t0)
	if s.Phase != corev1.PodRunning || s.HostIP != "10.1.0.5" || len(s.HostIPs) != 1 || s.HostIPs[0].IP != "10.1.0.5" {
		t.Errorf("phase %s, hostIP %s, hostIPs %v; want Running on 10.1.0.5", s.Phase, s.HostIP, s.HostIPs)
	}
	if ip, err := netip.ParseAddr(s.PodIP); err != nil || !podCIDR.Contains(ip) || len(s.PodIPs) != 1 || s.PodIPs[0].IP != s.PodIP {
		t.Errorf("podIP %q, podIPs %v; want one address in %s", s.PodIP, s.PodIPs, podCIDR)
	}
	if s.StartTime == nil || !s.StartTime.Time.Equal(t0) || s.QOSClass != corev1.PodQOSBestEffort {
		t.Errorf("startTime %v, qosClass %q; want %s and the class kept", s.StartTime, s.QOSClass, t0)
	}
	for _, typ := range kubeletConditions {
		c := findCondition(s.Conditions, typ)
		if c == nil || c.Status != corev1.ConditionTrue || c.Reason != "" || c.Message != "" {
			t.Errorf("condition %s = %+v, want True without reason", typ, c)
		}
	}
	if c := findCondition(s.Conditions, corev1.PodScheduled); !c.LastTransitionTime.Time.Equal(t0.Add(-time.Hour)) {
		t.Errorf("PodScheduled transition time %s changed, want kept", c.LastTransitionTime)
	}
	if c := findCondition(s.Conditions, corev1.DisruptionTarget); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("a condition the kubelet does not own was dropped: %v", s.Conditions)
	}
	if len(s.ContainerStatuses) != 2 {
		t.Fatalf("container statuses %v, want 2", s.ContainerStatuses)
	}
	for i, cs := range s.ContainerStatuses {
		if cs.Name != pod.Spec.Containers[i].Name || cs.Image != pod.Spec.Containers[i].Image || cs.State.Running == nil || !cs.Ready || !ptr.Deref(cs.Started, false) || cs.ContainerID == "" || cs.ImageID == "" {
			t.Errorf("container status %+v, want %s running and ready", cs, pod.Spec.Containers[i].Name)
		}
	}
	if len(s.InitContainerStatuses) != 2 {
		t.Fatalf("init container statuses %v, want 2", s.InitContainerStatuses)
	}
	if setup := s.InitContainerStatuses[0]; setup.State.Terminated == nil || setup.State.Terminated.ExitCode != 0 || setup.Ready {
		t.Errorf("init container %+v, want completed", setup)
	}
	if proxy := s.InitContainerStatuses[1]; proxy.State.Running == nil || !proxy.Ready {
		t.Errorf("sidecar %+v, want running and ready", proxy)
	}

	pod.Status = s
	if !podRunning(pod, "10.1.0.5") {
		t.Fatalf("the running status does not count as running")
	}
	again := runningStatus(pod, "10.1.0.5", t0.Add(time.Minute))
	if patch, err := statusPatch(pod, again); err != nil || patch != nil {
		t.Fatalf("a second pass changes %s (%v), want nothing: times and IPs are kept", patch, err)
	}
}

func TestStatusPatch(t *testing.T) {
	pod := testPod(func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady"})
	})
	patch, err := statusPatch(pod, runningStatus(pod, "10.1.0.5", t0))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Metadata struct {
			UID string `json:"uid"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(patch, &m); err != nil || m.Metadata.UID != "uid-1" {
		t.Fatalf("patch %s: want the pod's UID as precondition (%v)", patch, err)
	}
	// Applied to the stored pod, the patch yields the running status: the
	// old Ready reason is cleared, not merged.
	old, _ := json.Marshal(pod)
	applied, err := strategicpatch.StrategicMergePatch(old, patch, &corev1.Pod{})
	if err != nil {
		t.Fatal(err)
	}
	var got corev1.Pod
	if err := json.Unmarshal(applied, &got); err != nil {
		t.Fatal(err)
	}
	if !podRunning(&got, "10.1.0.5") {
		t.Fatalf("patched status %+v is not running", got.Status)
	}
	if c := findCondition(got.Status.Conditions, corev1.PodReady); c.Reason != "" {
		t.Fatalf("Ready reason %q survived the patch", c.Reason)
	}
}

func TestFakePodIP(t *testing.T) {
	tests := []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{name: "host-network pods use the node's IP", pod: testPod(func(p *corev1.Pod) { p.Spec.HostNetwork = true }), want: "10.1.0.5"},
		{name: "an IP already reported is kept", pod: testPod(func(p *corev1.Pod) { p.Status.PodIP = "10.70.1.2" }), want: "10.70.1.2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fakePodIP(tt.pod, "10.1.0.5"); got != tt.want {
				t.Fatalf("fakePodIP = %s, want %s", got, tt.want)
			}
		})
	}
	t.Run("other pods get a stable address in the pod range", func(t *testing.T) {
		seen := map[string]bool{}
		for i := range 100 {
			p := testPod(func(p *corev1.Pod) { p.UID = types.UID(fmt.Sprintf("uid-%d", i)) })
			ip := fakePodIP(p, "10.1.0.5")
			if a, err := netip.ParseAddr(ip); err != nil || !podCIDR.Contains(a) || ip != fakePodIP(p, "10.1.0.5") {
				t.Fatalf("fakePodIP = %q, want a stable address in %s", ip, podCIDR)
			}
			seen[ip] = true
		}
		if len(seen) < 99 {
			t.Fatalf("%d distinct IPs for 100 pods", len(seen))
		}
	})
}
