package eks

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/mpool-dev/mpool/internal/events"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
)

// TestMachineHealthCheckOnEKS: a node whose kubelet stops is marked by the
// MachineHealthCheck; EKS has no call that removes a chosen node, so mpool
// cordons and drains it and terminates its instance in the node group's
// Auto Scaling group without a decrement, and the group launches the
// replacement from the node group's release: exactly that instance goes,
// a Remediating event says so, and the pool is Running again with all its
// Nodes Ready.
func TestMachineHealthCheckOnEKS(t *testing.T) {
	f, _ := startSeeded(t, "1.31")
	f.MarkInfrastructureReady(converge)
	f.CreateMachineHealthCheck(intstr.FromString("100%"))
	f.WaitMachineHealthCheck(2, 2, converge)

	// The node group's instances are EKS's: found by the Nodes' providerIDs.
	nodes := f.PoolNodes()
	var before []string
	for _, n := range nodes {
		before = append(before, n.Spec.ProviderID)
	}
	victimNode, providerID := nodes[0].Name, nodes[0].Spec.ProviderID
	victim := providerID[strings.LastIndex(providerID, "/")+1:]

	// The Node is cordoned before its instance goes.
	var cordoned atomic.Bool
	ctx, cancel := context.WithCancel(f.Ctx)
	defer cancel()
	w, err := f.CS.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", victimNode).String()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	go func() {
		for ev := range w.ResultChan() {
			if n, ok := ev.Object.(*corev1.Node); ok && ev.Type != watch.Deleted && n.Spec.Unschedulable {
				cordoned.Store(true)
			}
		}
	}()

	if err := f.Cloud.Cloud().SetInstanceFault(victim, core.FaultKubeletStopped); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, converge, func() error {
		var now []string
		for _, n := range f.PoolNodes() {
			if !readyNode(&n) {
				return fmt.Errorf("node %s is not Ready", n.Name)
			}
			now = append(now, n.Spec.ProviderID)
		}
		if slices.Contains(now, providerID) {
			return fmt.Errorf("the Node of instance %s is still there", victim)
		}
		if len(now) != 2 || !slices.Contains(now, before[1]) {
			return fmt.Errorf("pool Nodes %v; want %s and one replacement", now, before[1])
		}
		return f.Converged(2, "v1.31.0")
	})
	// The pool's Remediating condition lasts only while the node drains;
	// the event that says what happens stays.
	testenv.Eventually(t, converge, func() error {
		list, err := f.CS.EventsV1().Events(f.NS).List(f.Ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, ev := range list.Items {
			if ev.Reason == events.Remediating && strings.Contains(ev.Note, "Remediating instance "+victim+" ") {
				if !strings.Contains(ev.Note, "terminating it, the cloud replaces it") {
					return fmt.Errorf("%s event: %q", events.Remediating, ev.Note)
				}
				return nil
			}
		}
		return fmt.Errorf("no %s event names instance %s", events.Remediating, victim)
	})
	if !cordoned.Load() {
		t.Errorf("Node %s was not cordoned before its instance was terminated", victimNode)
	}
	f.WaitMachineHealthCheck(2, 2, converge)
	out, err := f.describe()
	if err != nil {
		t.Fatal(err)
	}
	if d := out.Nodegroup.ScalingConfig.DesiredSize; d == nil || *d != 2 {
		t.Errorf("the node group's desired size is %v, want 2 (replaced, not shrunk)", d)
	}
}

// readyNode reports whether n's Ready condition is True.
func readyNode(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
