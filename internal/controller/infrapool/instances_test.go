package infrapool

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/contract"
)

// TestFirstStatusWaitsForTheNode: a new per-instance object's first status
// waits, at most Timing.FirstInstanceStatus after its creation, for its
// instance to be Ready; an object that has a status, an instance that is
// Ready, failed, going or timed out, or a drained one, is written at once.
func TestFirstStatusWaitsForTheNode(t *testing.T) {
	now := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC)
	timing := Timing{}
	timing.defaults()
	e := &Engine{timing: timing}
	fresh := func(age time.Duration, conds ...metav1.Condition) contract.InstanceObject {
		return &infrav1.LocalMachinePoolMachine{
			ObjectMeta: metav1.ObjectMeta{Name: "pool-i-1", CreationTimestamp: metav1.NewTime(now.Add(-age))},
			Status:     infrav1.LocalMachinePoolMachineStatus{Conditions: conds},
		}
	}
	node := &corev1.ObjectReference{Kind: "Node", Name: "n-1"}
	running := contract.InstanceReport{InstanceID: "i-1", State: contract.InstanceRunning}
	ready := contract.InstanceReport{InstanceID: "i-1", State: contract.InstanceRunning, NodeRef: node, Ready: true}
	written := metav1.Condition{Type: infrav1.InstanceReadyCondition, Status: metav1.ConditionFalse, Reason: infrav1.WaitingForNodeReason}
	for _, tc := range []struct {
		name    string
		obj     contract.InstanceObject
		rep     contract.InstanceReport
		drained bool
		want    time.Duration
	}{
		{"a new object of a running instance without a Node waits", fresh(3 * time.Second), running, false, 7 * time.Second},
		{"of a booting one too", fresh(0), contract.InstanceReport{InstanceID: "i-1", State: contract.InstanceBooting}, false, 10 * time.Second},
		{"of one whose Node is not Ready too", fresh(time.Second), contract.InstanceReport{InstanceID: "i-1", State: contract.InstanceRunning, NodeRef: node}, false, 9 * time.Second},
		{"not beyond the wait", fresh(11 * time.Second), running, false, 0},
		{"a Ready instance is written at once", fresh(time.Second), ready, false, 0},
		{"an object with a status is written at once", fresh(time.Second, written), running, false, 0},
		{"a failed instance at once", fresh(time.Second), contract.InstanceReport{InstanceID: "i-1", State: contract.InstanceFailed}, false, 0},
		{"a going instance at once", fresh(time.Second), contract.InstanceReport{InstanceID: "i-1", State: contract.InstanceDeleting}, false, 0},
		{"a timed-out instance at once", fresh(time.Second), contract.InstanceReport{InstanceID: "i-1", State: contract.InstanceRunning, JoinTimedOut: true}, false, 0},
		{"a drained instance at once", fresh(time.Second), running, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &pass{now: now, drains: map[string]drainOutcome{}}
			if tc.drained {
				s.drains["i-1"] = drainOutcome{}
			}
			if got := e.firstStatusWait(s, tc.obj, tc.rep); got != tc.want {
				t.Errorf("waits %s, want %s", got, tc.want)
			}
		})
	}
	e.timing.FirstInstanceStatus = -1
	if got := e.firstStatusWait(&pass{now: now}, fresh(0), running); got != 0 {
		t.Errorf("a negative FirstInstanceStatus: waits %s, want 0 (every state written)", got)
	}
}
