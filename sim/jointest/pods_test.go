package jointest

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/server"
)

// applyGroup creates a group of one instance booting after bootDelay and
// returns the instance.
func applyGroup(t *testing.T, srv *server.Server, group, token string, bootDelay time.Duration) core.Instance {
	t.Helper()
	spec := core.GroupSpec{
		Capacity:   1,
		Model:      core.Model{CustomData: cloudInit("kubeadm.k8s.io/v1beta3", token, caHash(t))},
		Simulation: &core.SimulationPatch{BootDelay: &bootDelay},
	}
	g, err := srv.Cloud().ApplyGroup(group, spec)
	if err != nil {
		t.Fatalf("ApplyGroup %s: %v", group, err)
	}
	if len(g.Instances) != 1 {
		t.Fatalf("group %s has %d instances, want 1", group, len(g.Instances))
	}
	return g.Instances[0]
}

// waitJoined waits until the group's only instance joined.
func waitJoined(t *testing.T, srv *server.Server, group string) core.Instance {
	t.Helper()
	return waitJoin(t, core.JoinJoined, func() (*core.Group, error) { return srv.Cloud().GetGroup(group) }).Instances[0]
}

// waitJoin waits until the group get reads has instances, all in join
// phase want, and returns it.
func waitJoin(t testing.TB, want core.JoinPhase, get func() (*core.Group, error)) *core.Group {
	t.Helper()
	var g *core.Group
	testenv.Eventually(t, 60*time.Second, func() error {
		var err error
		if g, err = get(); err != nil {
			return err
		}
		if len(g.Instances) == 0 {
			return fmt.Errorf("group %s has no instances yet", g.Name)
		}
		for _, in := range g.Instances {
			if in.Join != want {
				return fmt.Errorf("instance %s: %s %s %q", in.ID, in.State, in.Join, in.Message)
			}
		}
		return nil
	})
	return g
}

// createPod creates a pod bound to node (as the scheduler would have) with
// an init container and two containers.
func createPod(t *testing.T, cs kubernetes.Interface, ns, name, node string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			NodeName:       node,
			InitContainers: []corev1.Container{{Name: "setup", Image: "registry.example/setup:1"}},
			Containers:     []corev1.Container{{Name: "app", Image: "registry.example/app:1"}, {Name: "log", Image: "registry.example/log:1"}},
		},
	}
	created, err := cs.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s: %v", name, err)
	}
	return created
}

func podCondition(p *corev1.Pod, typ corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}

// waitRunning waits until the pod runs and is Ready on the Node at hostIP.
func waitRunning(t *testing.T, cs kubernetes.Interface, ns, name, hostIP string) *corev1.Pod {
	t.Helper()
	var p *corev1.Pod
	testenv.Eventually(t, 30*time.Second, func() error {
		var err error
		if p, err = cs.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{}); err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodRunning || podCondition(p, corev1.PodReady) != corev1.ConditionTrue {
			return fmt.Errorf("pod %s is %s, Ready %q", name, p.Status.Phase, podCondition(p, corev1.PodReady))
		}
		return nil
	})
	if p.Status.HostIP != hostIP || p.Status.PodIP == "" || p.Status.StartTime == nil {
		t.Errorf("pod %s: hostIP %q, podIP %q, startTime %v; want hostIP %s, a pod IP and a start time", name, p.Status.HostIP, p.Status.PodIP, p.Status.StartTime, hostIP)
	}
	for _, typ := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		if s := podCondition(p, typ); s != corev1.ConditionTrue {
			t.Errorf("pod %s condition %s = %q, want True", name, typ, s)
		}
	}
	if len(p.Status.ContainerStatuses) != len(p.Spec.Containers) {
		t.Fatalf("pod %s has %d container statuses, want %d", name, len(p.Status.ContainerStatuses), len(p.Spec.Containers))
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Running == nil || !c.Ready {
			t.Errorf("pod %s container %s: %+v, want running and ready", name, c.Name, c.State)
		}
	}
	if len(p.Status.InitContainerStatuses) != 1 || p.Status.InitContainerStatuses[0].State.Terminated == nil {
		t.Errorf("pod %s init containers %+v, want setup completed", name, p.Status.InitContainerStatuses)
	}
	return p
}

func waitGone(t *testing.T, cs kubernetes.Interface, ns, name string) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, func() error {
		p, err := cs.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("pod %s still exists (deletionTimestamp %v)", name, p.DeletionTimestamp)
	})
}

// expectUntouched checks that nothing changed pod since it was last seen
// and that it does not run; terminating says whether it must still be
// terminating.
func expectUntouched(t *testing.T, cs kubernetes.Interface, seen *corev1.Pod, terminating bool) {
	t.Helper()
	p, err := cs.CoreV1().Pods(seen.Namespace).Get(context.Background(), seen.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("pod %s: %v, want it left alone", seen.Name, err)
	}
	if p.ResourceVersion != seen.ResourceVersion {
		t.Errorf("pod %s was updated (phase %s, hostIP %q), want it untouched", p.Name, p.Status.Phase, p.Status.HostIP)
	}
	if terminating && p.DeletionTimestamp == nil {
		t.Errorf("pod %s is not terminating", p.Name)
	}
}

// TestNodeAgentTendsPods checks the node agent's kubelet part against the
// real API server: pods bound to a joined Node run and become Ready,
// terminating pods finish promptly, and pods on Nodes the agent does not own
// or no longer keeps alive are left alone.
//
// The checks that something does not happen need no waiting: every pod of
// the API server reaches the agent through one watch, in order, so once a
// pod created (or deleted) later has been handled, the earlier one has been
// seen and passed over.
func TestNodeAgentTendsPods(t *testing.T) {
	ctx := context.Background()
	cs := clientset(t)
	srv := startCloud(t)
	token := createToken(t, time.Now().Add(time.Hour))
	ns := env.NewNamespace(t)

	applyGroup(t, srv, "pods", token, 0)
	in := waitJoined(t, srv, "pods")
	foreignNode := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "foreign-" + ns}}
	if _, err := cs.CoreV1().Nodes().Create(ctx, foreignNode, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(ctx, foreignNode.Name, metav1.DeleteOptions{}) })
	foreign := createPod(t, cs, ns, "foreign", foreignNode.Name)

	t.Run("a pod bound to a joined Node runs and becomes Ready", func(t *testing.T) {
		createPod(t, cs, ns, "web", in.NodeName)
		waitRunning(t, cs, ns, "web", in.PrivateIP)
	})

	t.Run("a pod on a Node the agent does not own is left untouched", func(t *testing.T) {
		expectUntouched(t, cs, foreign, false)
	})

	t.Run("a deleted pod finishes well within its 30s grace period", func(t *testing.T) {
		if err := cs.CoreV1().Pods(ns).Delete(ctx, "foreign", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := cs.CoreV1().Pods(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitGone(t, cs, ns, "web")

		foreign, err := cs.CoreV1().Pods(ns).Get(ctx, "foreign", metav1.GetOptions{})
		if err != nil || foreign.DeletionTimestamp == nil {
			t.Fatalf("the terminating pod on the foreign Node: %v, want it still terminating (no kubelet there)", err)
		}
	})

	t.Run("an evicted pod finishes promptly", func(t *testing.T) {
		createPod(t, cs, ns, "evictee", in.NodeName)
		waitRunning(t, cs, ns, "evictee", in.PrivateIP)
		ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "evictee", Namespace: ns}}
		if err := cs.CoreV1().Pods(ns).EvictV1(ctx, ev); err != nil {
			t.Fatalf("evicting: %v", err)
		}
		waitGone(t, cs, ns, "evictee")
	})

	var witness core.Instance
	t.Run("a pod bound before its Node joined runs once it joins", func(t *testing.T) {
		// The pod watch already runs (for the first Node) and passes over
		// the pod while its Node is not the agent's yet.
		booting := applyGroup(t, srv, "pods-witness", token, time.Second)
		createPod(t, cs, ns, "early", booting.Hostname)
		witness = waitJoined(t, srv, "pods-witness")
		if witness.NodeName != booting.Hostname {
			t.Fatalf("node name %q, want the hostname %q", witness.NodeName, booting.Hostname)
		}
		waitRunning(t, cs, ns, "early", witness.PrivateIP)
	})

	t.Run("pods of a powered-off instance are no longer tended", func(t *testing.T) {
		if witness.NodeName == "" {
			t.Skip("the witness instance did not join")
		}
		createPod(t, cs, ns, "before", in.NodeName)
		waitRunning(t, cs, ns, "before", in.PrivateIP)

		if _, err := srv.Cloud().DeleteInstances("pods", []string{in.ID}); err != nil {
			t.Fatal(err)
		}
		if err := cs.CoreV1().Pods(ns).Delete(ctx, "before", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		before, err := cs.CoreV1().Pods(ns).Get(ctx, "before", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		after := createPod(t, cs, ns, "after", in.NodeName)

		// The witness runs on another instance: once its pod started and
		// finished, the agent has seen both pods above.
		createPod(t, cs, ns, "witness", witness.NodeName)
		waitRunning(t, cs, ns, "witness", witness.PrivateIP)
		if err := cs.CoreV1().Pods(ns).Delete(ctx, "witness", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitGone(t, cs, ns, "witness")

		expectUntouched(t, cs, before, true)
		expectUntouched(t, cs, after, false)
	})
}
