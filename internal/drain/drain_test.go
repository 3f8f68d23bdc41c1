package drain_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/mpool-dev/mpool/internal/drain"
	"github.com/mpool-dev/mpool/internal/testenv"
)

func clientset(t *testing.T) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func newNode(t *testing.T, cs kubernetes.Interface) *corev1.Node {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	n, err := cs.CoreV1().Nodes().Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "drain-" + hex.EncodeToString(b)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// pod creates a pod bound to node and, playing the kubelet (none runs for
// these Nodes), marks it Running and Ready: the eviction API ignores budgets
// for pending pods. Pods have no grace period: no kubelet would finish a
// graceful deletion.
func pod(t *testing.T, cs kubernetes.Interface, ns, name, node string, mutate func(*corev1.Pod)) {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers:                    []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	if mutate != nil {
		mutate(p)
	}
	p, err := cs.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s: %v", name, err)
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if _, err := cs.CoreV1().Pods(ns).UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("marking pod %s running: %v", name, err)
	}
}

// pdb creates a PodDisruptionBudget for app requiring minAvailable pods and
// waits until the disruption controller has computed how many disruptions
// it allows.
func pdb(t *testing.T, cs kubernetes.Interface, ns, app string, minAvailable, wantAllowed int32) {
	t.Helper()
	_, err := cs.PolicyV1().PodDisruptionBudgets(ns).Create(context.Background(), &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: ns},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(minAvailable)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitAllowed(t, cs, ns, app, wantAllowed)
}

// setMinAvailable changes a budget and waits for the disruption controller.
func setMinAvailable(t *testing.T, cs kubernetes.Interface, ns, app string, minAvailable, wantAllowed int32) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"minAvailable":%d}}`, minAvailable)
	if _, err := cs.PolicyV1().PodDisruptionBudgets(ns).Patch(context.Background(), app, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAllowed(t, cs, ns, app, wantAllowed)
}

func waitAllowed(t *testing.T, cs kubernetes.Interface, ns, app string, want int32) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func() error {
		b, err := cs.PolicyV1().PodDisruptionBudgets(ns).Get(context.Background(), app, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if b.Status.ObservedGeneration != b.Generation || b.Status.DisruptionsAllowed != want {
			return fmt.Errorf("budget %s: observed generation %d of %d, %d disruptions allowed, want %d",
				app, b.Status.ObservedGeneration, b.Generation, b.Status.DisruptionsAllowed, want)
		}
		return nil
	})
}

func podExists(t *testing.T, cs kubernetes.Interface, ns, name string) bool {
	t.Helper()
	_, err := cs.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

func TestDrainRespectsPodDisruptionBudgetsAndSkipsDaemonSets(t *testing.T) {
	ctx := context.Background()
	cs := clientset(t)
	ns := env.NewNamespace(t)
	node := newNode(t, cs)

	ds, err := cs.AppsV1().DaemonSets(ns).Create(ctx, &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: ns},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod(t, cs, ns, "bare", node.Name, nil)
	pod(t, cs, ns, "scratch", node.Name, func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	})
	pod(t, cs, ns, "agent", node.Name, func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name, UID: ds.UID, Controller: ptr.To(true)}}
	})
	pod(t, cs, ns, "guarded", node.Name, nil)
	pod(t, cs, ns, "elsewhere", "", nil)
	pdb(t, cs, ns, "guarded", 1, 0)

	now := time.Now()
	res, err := drain.Node(ctx, cs, node, drain.Options{StartedAt: now, Now: now, Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if res.Done || res.TimedOut {
		t.Fatalf("drain finished although a PDB forbids evicting guarded: %+v", res)
	}
	if want := []string{ns + "/guarded"}; !slices.Equal(res.Blocked, want) || !slices.Equal(res.Remaining, want) {
		t.Errorf("blocked %v, remaining %v; want only %v", res.Blocked, res.Remaining, want)
	}
	if want := []string{ns + "/guarded"}; !slices.Equal(res.Budgets, want) {
		t.Errorf("budgets %v, want %v: the refusal names the PodDisruptionBudget", res.Budgets, want)
	}
	if msg := res.Message(); !strings.Contains(msg, "PodDisruptionBudget "+ns+"/guarded") {
		t.Errorf("message %q does not name the PodDisruptionBudget", msg)
	}
	n, err := cs.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !n.Spec.Unschedulable {
		t.Error("Node not cordoned")
	}
	for name, want := range map[string]bool{"bare": false, "scratch": false, "agent": true, "guarded": true, "elsewhere": true} {
		if got := podExists(t, cs, ns, name); got != want {
			t.Errorf("pod %s exists = %v, want %v", name, got, want)
		}
	}

	// The disruption budget allows one eviction now.
	setMinAvailable(t, cs, ns, "guarded", 0, 1)
	res, err = drain.Node(ctx, cs, node, drain.Options{StartedAt: now, Now: time.Now(), Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Done || res.Evicted != 1 {
		t.Errorf("second pass: %+v, want done after one eviction", res)
	}
	if podExists(t, cs, ns, "guarded") || !podExists(t, cs, ns, "agent") {
		t.Error("guarded should be evicted and the DaemonSet pod kept")
	}
}

func TestDrainTimesOut(t *testing.T) {
	ctx := context.Background()
	cs := clientset(t)
	ns := env.NewNamespace(t)
	node := newNode(t, cs)
	pod(t, cs, ns, "guarded", node.Name, nil)
	pdb(t, cs, ns, "guarded", 1, 0)

	for _, tc := range []struct {
		name    string
		started time.Duration // before now
		timeout time.Duration
		want    bool
	}{
		{name: "within the timeout", started: 30 * time.Second, timeout: time.Minute, want: false},
		{name: "past the timeout", started: 2 * time.Minute, timeout: time.Minute, want: true},
		{name: "no timeout waits forever", started: 24 * time.Hour, timeout: 0, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Now()
			res, err := drain.Node(ctx, cs, node, drain.Options{StartedAt: now.Add(-tc.started), Now: now, Timeout: tc.timeout})
			if err != nil {
				t.Fatal(err)
			}
			if res.Done || res.TimedOut != tc.want {
				t.Errorf("got %+v, want TimedOut=%v", res, tc.want)
			}
		})
	}
}

// TestDrainWaitsForTerminatingPods: an evicted pod whose grace period
// runs (no kubelet confirms it here) is left, and said to be terminating,
// not waiting for an eviction.
func TestDrainWaitsForTerminatingPods(t *testing.T) {
	ctx := context.Background()
	cs := clientset(t)
	ns := env.NewNamespace(t)
	node := newNode(t, cs)
	pod(t, cs, ns, "slow", node.Name, func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To[int64](600) })

	now := time.Now()
	res, err := drain.Node(ctx, cs, node, drain.Options{StartedAt: now, Now: now, Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{ns + "/slow"}
	if res.Done || res.Evicted != 1 || !slices.Equal(res.Remaining, want) || !slices.Equal(res.Terminating, want) || len(res.Blocked) != 0 {
		t.Fatalf("first pass %+v: want slow evicted, remaining and terminating", res)
	}
	res, err = drain.Node(ctx, cs, node, drain.Options{StartedAt: now.Add(-2 * time.Hour), Now: time.Now(), Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Evicted != 0 || !slices.Equal(res.Terminating, want) {
		t.Errorf("second pass %+v: want timed out, no new eviction, slow terminating", res)
	}
	if msg := res.Message(); !strings.Contains(msg, "evicted, still terminating") {
		t.Errorf("message %q does not say the pod is terminating", msg)
	}
}

func TestDrainOfAGoneNodeIsDone(t *testing.T) {
	cs := clientset(t)
	res, err := drain.Node(context.Background(), cs, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "never-existed"}}, drain.Options{Now: time.Now()})
	if err != nil || !res.Done {
		t.Errorf("got %+v, %v", res, err)
	}
}
