package jointest

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/server"
)

// readyCondition returns the Node's Ready condition, or an error when the
// Node or the condition is missing.
func readyCondition(ctx context.Context, cs kubernetes.Interface, name string) (corev1.NodeCondition, error) {
	n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return corev1.NodeCondition{}, err
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c, nil
		}
	}
	return corev1.NodeCondition{}, fmt.Errorf("node %s has no Ready condition", name)
}

// waitReady waits until the Node's Ready condition has status and reason.
func waitReady(t *testing.T, cs kubernetes.Interface, name string, status corev1.ConditionStatus, reason string) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func() error {
		c, err := readyCondition(context.Background(), cs, name)
		if err != nil {
			return err
		}
		if c.Status != status || c.Reason != reason {
			return fmt.Errorf("node %s Ready = %s (%s), want %s (%s)", name, c.Status, c.Reason, status, reason)
		}
		return nil
	})
}

// renewed reports an error unless the Node's Lease was renewed after
// after (want true) or was not (want false).
func renewed(cs kubernetes.Interface, name string, after time.Time, want bool) func() error {
	return func() error {
		l, err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if got := l.Spec.RenewTime.After(after); got != want {
			return fmt.Errorf("lease of %s renewed after %s: %v, want %v", name, after, got, want)
		}
		return nil
	}
}

// leaseRenewTime is the Node's Lease's renewTime.
func leaseRenewTime(t *testing.T, cs kubernetes.Interface, name string) time.Time {
	t.Helper()
	l, err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Spec.RenewTime.Time
}

func TestInstanceFaults(t *testing.T) {
	ctx := context.Background()
	cs := clientset(t)
	opts := cloudOptions(t)
	opts.NodeAgent.NodeMonitorGracePeriod = 2 * time.Second
	srv := startCloudWith(t, opts)
	token := createToken(t, time.Now().Add(time.Hour))

	t.Run("a stopped kubelet's Node goes Unknown after the grace period and Ready again when it restarts", func(t *testing.T) {
		applyGroup(t, srv, "kubelet-stopped", token, 0)
		in := waitJoined(t, srv, "kubelet-stopped")
		setFault(t, srv, in.ID, core.FaultKubeletStopped)
		waitReady(t, cs, in.NodeName, corev1.ConditionUnknown, "NodeStatusUnknown")
		stopped := leaseRenewTime(t, cs, in.NodeName)
		// Marked Unknown the grace period (2s, give or take the second
		// the Node's times are rounded to) after the last renewal, which
		// is not renewed any more (for two heartbeats).
		if c, _ := readyCondition(ctx, cs, in.NodeName); c.LastTransitionTime.Time.Before(stopped.Add(time.Second)) {
			t.Fatalf("Unknown at %s, less than the grace period after the last renewal %s", c.LastTransitionTime, stopped)
		}
		consistently(t, 2500*time.Millisecond, renewed(cs, in.NodeName, stopped, false))

		setFault(t, srv, in.ID, core.FaultNone)
		waitReady(t, cs, in.NodeName, corev1.ConditionTrue, "KubeletReady")
		testenv.Eventually(t, 10*time.Second, renewed(cs, in.NodeName, stopped, true))
	})

	t.Run("a NotReady kubelet reports Ready=False and keeps heartbeating", func(t *testing.T) {
		applyGroup(t, srv, "not-ready", token, 0)
		in := waitJoined(t, srv, "not-ready")
		setFault(t, srv, in.ID, core.FaultNodeNotReady)
		waitReady(t, cs, in.NodeName, corev1.ConditionFalse, "KubeletNotReady")
		testenv.Eventually(t, 10*time.Second, renewed(cs, in.NodeName, leaseRenewTime(t, cs, in.NodeName), true))
		setFault(t, srv, in.ID, core.FaultNone)
		waitReady(t, cs, in.NodeName, corev1.ConditionTrue, "KubeletReady")
	})

	t.Run("a kubelet NotReady from the start registers its Node NotReady", func(t *testing.T) {
		applyGroup(t, srv, "not-ready-at-boot", token, 2*time.Second)
		if _, err := srv.Cloud().SetGroupInstanceFault(core.LocalKey("not-ready-at-boot"), 1, core.FaultNodeNotReady); err != nil {
			t.Fatal(err)
		}
		in := waitJoined(t, srv, "not-ready-at-boot")
		waitReady(t, cs, in.NodeName, corev1.ConditionFalse, "KubeletNotReady")
	})

	t.Run("an instance that never joins registers no Node, and joins once the fault is cleared", func(t *testing.T) {
		if _, err := srv.Cloud().ApplyGroup("never-joins", core.GroupSpec{Capacity: 0}); err != nil {
			t.Fatal(err)
		}
		if _, err := srv.Cloud().SetGroupFaults("never-joins", core.GroupFaults{NeverJoins: 1}); err != nil {
			t.Fatal(err)
		}
		g, err := srv.Cloud().ApplyGroup("never-joins", core.GroupSpec{Capacity: 1, Model: core.Model{CustomData: cloudInit("kubeadm.k8s.io/v1beta3", token, caHash(t))}})
		if err != nil {
			t.Fatal(err)
		}
		in := g.Instances[0]
		testenv.Eventually(t, 10*time.Second, func() error {
			g, err := srv.Cloud().GetGroup("never-joins")
			if err != nil {
				return err
			}
			if in = g.Instances[0]; in.State != core.StateRunning || in.Join != core.JoinJoining || in.Fault != core.FaultNeverJoins {
				return fmt.Errorf("instance %s: %s %s %s", in.ID, in.State, in.Join, in.Fault)
			}
			return nil
		})
		consistently(t, 2*time.Second, func() error {
			if _, err := cs.CoreV1().Nodes().Get(ctx, in.Hostname, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("node %s: %v, want NotFound", in.Hostname, err)
			}
			return nil
		})
		setFault(t, srv, in.ID, core.FaultNone)
		in = waitJoined(t, srv, "never-joins")
		waitReady(t, cs, in.NodeName, corev1.ConditionTrue, "KubeletReady")
	})
}

// consistently fails the test if cond fails within d, polling.
func consistently(t *testing.T, d time.Duration, cond func() error) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if err := cond(); err != nil {
			t.Fatal(err)
		}
	}
}

// setFault sets (FaultNone: clears) the instance's health fault.
func setFault(t testing.TB, srv *server.Server, id string, f core.InstanceFault) {
	t.Helper()
	if err := srv.Cloud().SetInstanceFault(id, f); err != nil {
		t.Fatalf("SetInstanceFault %s %s: %v", id, f, err)
	}
}
