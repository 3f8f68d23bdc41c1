package local

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
)

// budgetWatcher samples the pool's state every few milliseconds, from the
// cloud and the workload cluster, and records every sample that breaks the
// rollout budgets:
//
//   - capacity: instances neither failed nor being removed (the cloud is not
//     deleting them and their Node is not cordoned) never exceed
//     desired + maxSurge;
//   - availability: instances running with a Ready, schedulable Node never
//     fall below desired - maxUnavailable.
//
// Each sample reads the cloud first and the Nodes second (a consistent
// list), so an instance the engine created after cordoning a victim is never
// seen with the victim still uncordoned. The two reads are not atomic, so a
// victim may look Running in the cloud while its Node is already gone: the
// watcher remembers every instance it has seen cordoned or losing its Node
// (the engine never takes a victim back) and counts it as being removed.
type budgetWatcher struct {
	f                     *fixture
	maxCapacity, minAvail int

	mu         sync.Mutex
	joined     map[string]bool // instances seen with a Node
	removed    map[string]bool // instances seen cordoned or losing their Node
	samples    int
	peak       int
	trough     int
	violations []string

	cancel context.CancelFunc
	done   chan struct{}
}

// watchBudgets starts sampling; stop it with stop.
func watchBudgets(f *fixture, desired, maxSurge, maxUnavailable int) *budgetWatcher {
	ctx, cancel := context.WithCancel(context.Background())
	w := &budgetWatcher{
		f: f, maxCapacity: desired + maxSurge, minAvail: desired - maxUnavailable,
		trough: 1 << 30, cancel: cancel, done: make(chan struct{}),
		joined: map[string]bool{}, removed: map[string]bool{},
	}
	go func() {
		defer close(w.done)
		t := time.NewTicker(15 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				w.sample(ctx)
			}
		}
	}()
	f.T.Cleanup(w.stop)
	return w
}

func (w *budgetWatcher) sample(ctx context.Context) {
	g, err := w.f.Cloud.Cloud().GetGroup(w.f.group)
	if err != nil {
		return
	}
	list, err := w.f.CS.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	nodes := map[string]*corev1.Node{}
	for i := range list.Items {
		nodes[list.Items[i].Spec.ProviderID] = &list.Items[i]
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	capacity, available := 0, 0
	var desc []string
	for _, in := range g.Instances {
		node := nodes[in.ProviderID]
		if node != nil {
			w.joined[in.ID] = true
		}
		if node != nil && node.Spec.Unschedulable || node == nil && w.joined[in.ID] {
			w.removed[in.ID] = true
		}
		removed := w.removed[in.ID]
		if in.State != core.StateDeleting && in.State != core.StateFailed && !removed {
			capacity++
		}
		if in.State == core.StateRunning && node != nil && testenv.NodeReady(node) && !removed {
			available++
		}
		desc = append(desc, fmt.Sprintf("%s:%s:node=%v:removed=%v:ready=%v", in.ID, in.State, node != nil, removed, node != nil && testenv.NodeReady(node)))
	}
	w.samples++
	w.peak = max(w.peak, capacity)
	w.trough = min(w.trough, available)
	if capacity > w.maxCapacity {
		w.violations = append(w.violations, fmt.Sprintf("capacity %d > %d: %s", capacity, w.maxCapacity, strings.Join(desc, " ")))
	}
	if available < w.minAvail {
		w.violations = append(w.violations, fmt.Sprintf("available %d < %d: %s", available, w.minAvail, strings.Join(desc, " ")))
	}
}

func (w *budgetWatcher) stop() {
	w.cancel()
	<-w.done
}

// assertHeld stops the watcher and fails the test with every violation.
func (w *budgetWatcher) assertHeld() {
	w.f.T.Helper()
	w.stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.samples < 10 {
		w.f.T.Errorf("budget watcher took only %d samples", w.samples)
	}
	for i, v := range w.violations {
		if i == 5 {
			w.f.T.Errorf("... and %d more budget violations", len(w.violations)-5)
			break
		}
		w.f.T.Errorf("budget broken: %s", v)
	}
	w.f.T.Logf("budget watcher: %d samples, peak capacity %d (max %d), lowest availability %d (min %d)",
		w.samples, w.peak, w.maxCapacity, w.trough, w.minAvail)
}
