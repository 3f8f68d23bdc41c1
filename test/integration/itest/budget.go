package itest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
)

// BudgetWatcher samples a fixture's pool from outside every few
// milliseconds — its group as the simulated cloud's core has it
// (Fixture.Group) and the workload cluster's Nodes — and records every
// sample that breaks the rollout budgets:
//
//   - capacity: instances neither failed nor being removed (the cloud is not
//     deleting them and their Node is not cordoned) never exceed
//     desired + maxSurge;
//   - availability: instances running with a Ready, schedulable Node never
//     fall below desired - maxUnavailable.
//
// These are the engine's own definitions (internal/rollout: an instance
// being drained is no longer a replica, and only a Ready Node is
// available), observed rather than asked for, so they hold whichever
// process or replica runs the engine.
//
// Each sample reads the cloud first and the Nodes second (a consistent
// list), so an instance the engine created after cordoning a victim is never
// seen with the victim still uncordoned. The two reads are not atomic, so a
// victim may look Running in the cloud while its Node is already gone: the
// watcher remembers every instance it has seen cordoned or losing its Node
// (the engine never takes a victim back) and counts it as being removed.
// Nodes are matched to instances by providerID, on every provider.
type BudgetWatcher struct {
	f                     *Fixture
	maxCapacity, minAvail int

	mu         sync.Mutex
	joined     map[string]bool // instances seen with a Node
	removed    map[string]bool // instances seen cordoned or losing their Node
	samples    int
	first      map[string]bool // the instances of the first sample
	changed    int             // samples whose instances differ from the first's
	peak       int
	trough     int
	violations []string

	*Sampler
}

// WatchBudgets starts sampling the fixture's pool against desired replicas
// and the resolved budgets maxSurge and maxUnavailable (instance counts, as
// rollout.ResolveBudgets and `mpool rollout plan` give them); AssertHeld
// stops it and reports. The fixture's provider must have a group in the
// cloud (Provider.GroupKey).
func WatchBudgets(f *Fixture, desired, maxSurge, maxUnavailable int) *BudgetWatcher {
	f.T.Helper()
	if f.Provider.GroupKey == nil {
		f.T.Fatalf("the %s provider's fixture has no group to watch", f.Provider.Name)
	}
	w := &BudgetWatcher{
		f: f, maxCapacity: desired + maxSurge, minAvail: desired - maxUnavailable,
		trough: 1 << 30, joined: map[string]bool{}, removed: map[string]bool{},
	}
	w.sample(context.Background()) // the baseline, before the caller changes anything
	w.Sampler = Sample(f.T, sampleEvery, w.sample)
	return w
}

func (w *BudgetWatcher) sample(ctx context.Context) {
	g := w.f.Group()
	if g == nil {
		return
	}
	list, err := w.f.CS.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	nodes := map[string]*corev1.Node{}
	for i := range list.Items {
		if id := list.Items[i].Spec.ProviderID; id != "" {
			nodes[id] = &list.Items[i]
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	capacity, available := 0, 0
	var desc []string
	ids := make(map[string]bool, len(g.Instances))
	for _, in := range g.Instances {
		ids[in.ID] = true
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
		ready := node != nil && testenv.NodeReady(node)
		if in.State == core.StateRunning && ready && !removed {
			available++
		}
		desc = append(desc, fmt.Sprintf("%s:%s:node=%v:removed=%v:ready=%v", in.ID, in.State, node != nil, removed, ready))
	}
	if w.first == nil {
		w.first = ids
	} else if !maps.Equal(ids, w.first) {
		w.changed++
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

// sampleEvery is how often the watchers sample.
const sampleEvery = 15 * time.Millisecond

// Sampler calls a function at an interval, from Sample until Stop (or the
// end of the test): the loop of every watcher that looks at a pool from
// outside.
type Sampler struct{ *background }

// Sample starts calling sample every interval, in a goroutine of its own,
// and stops it when the test ends. sample's context is cancelled by Stop.
func Sample(t testing.TB, every time.Duration, sample func(context.Context)) *Sampler {
	return &Sampler{runInBackground(t, func(ctx context.Context) {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				sample(ctx)
			}
		}
	})}
}

// background is a function running in a goroutine of its own until Stop.
type background struct {
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// runInBackground runs run in a goroutine until Stop cancels its context
// (Stop runs when the test ends).
func runInBackground(t testing.TB, run func(context.Context)) *background {
	ctx, cancel := context.WithCancel(context.Background())
	b := &background{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(b.done)
		run(ctx)
	}()
	t.Cleanup(b.Stop)
	return b
}

// Stop cancels the function's context and waits until it has returned. It
// is safe to call more than once.
func (b *background) Stop() {
	b.once.Do(func() {
		b.cancel()
		<-b.done
	})
}

// InstanceWatcher samples a fixture's group from outside every few
// milliseconds and remembers the model of every instance it has seen, so
// a test can count the instances created on each model (an instance that
// lived less than a sample may be missed; one never deleted is not).
type InstanceWatcher struct {
	f *Fixture
	*Sampler
	mu   sync.Mutex
	seen map[string]string // instance ID -> model hash
}

// WatchInstances starts an InstanceWatcher on the fixture's group.
func WatchInstances(f *Fixture) *InstanceWatcher {
	w := &InstanceWatcher{f: f, seen: map[string]string{}}
	w.sample(context.Background())
	w.Sampler = Sample(f.T, sampleEvery, w.sample)
	return w
}

func (w *InstanceWatcher) sample(context.Context) {
	g := w.f.Group()
	if g == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, in := range g.Instances {
		if _, ok := w.seen[in.ID]; !ok {
			w.seen[in.ID] = in.ModelHash
		}
	}
}

// Models returns how many instances the watcher has seen of each model.
func (w *InstanceWatcher) Models() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for _, m := range w.seen {
		out[m]++
	}
	return out
}

// Stop stops the watcher after one last sample and returns Models.
func (w *InstanceWatcher) Stop() map[string]int {
	w.Sampler.Stop()
	w.sample(context.Background())
	return w.Models()
}

// AssertHeld stops the watcher and fails the test with every violation
// (the first five, and how many more), and when no sample saw the group's
// instances differ from the first sample's: a roll it did not see proves
// nothing. (A count of samples would not say that: a roll whose
// replacements fail at once is over in a few hundred milliseconds, a dozen
// samples on a loaded machine, and a thousand samples of an unchanged
// group see nothing.)
func (w *BudgetWatcher) AssertHeld() {
	t := w.f.T
	t.Helper()
	w.Stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.changed == 0 {
		t.Errorf("budget watcher never saw the group change (%d samples, all of instances %v)", w.samples, slices.Sorted(maps.Keys(w.first)))
	}
	for i, v := range w.violations {
		if i == 5 {
			t.Errorf("... and %d more budget violations", len(w.violations)-5)
			break
		}
		t.Errorf("budget broken: %s", v)
	}
	t.Logf("budget watcher: %d samples (%d during the change), peak capacity %d (max %d), lowest availability %d (min %d)",
		w.samples, w.changed, w.peak, w.maxCapacity, w.trough, w.minAvail)
}

// ServingWatcher samples the workload cluster from outside and records
// every sample with fewer Ready, schedulable Nodes of the pool's instances
// than its size, and the most instances the cloud's group held at once.
type ServingWatcher struct {
	f    *Fixture
	min  int
	stop func()

	mu   sync.Mutex
	n    int
	low  []string
	peak int
}

// WatchServing starts a ServingWatcher of f's pool of size instances.
func WatchServing(f *Fixture, size int) *ServingWatcher {
	w := &ServingWatcher{f: f, min: size}
	s := Sample(f.T, sampleEvery, w.sample)
	w.stop = s.Stop
	return w
}

func (w *ServingWatcher) sample(ctx context.Context) {
	g := w.f.Group()
	if g == nil {
		return
	}
	ours := map[string]bool{}
	live := 0
	for _, in := range g.Instances {
		ours[in.ProviderID] = true
		if in.State != core.StateDeleting {
			live++
		}
	}
	list, err := w.f.CS.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	var serving []string
	for i := range list.Items {
		n := &list.Items[i]
		if ours[n.Spec.ProviderID] && testenv.NodeReady(n) && !n.Spec.Unschedulable {
			serving = append(serving, n.Name)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n++
	w.peak = max(w.peak, live)
	if len(serving) < w.min {
		w.low = append(w.low, strings.Join(serving, ","))
	}
}

// AssertAtLeast stops the watcher and fails the test if any sample had
// fewer Ready schedulable Nodes than the pool's size (or too few samples
// were taken to say). It returns the most instances the group held at once.
func (w *ServingWatcher) AssertAtLeast() int {
	w.f.T.Helper()
	w.stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n < 10 {
		w.f.T.Errorf("serving watcher took only %d samples", w.n)
	}
	if len(w.low) > 0 {
		w.f.T.Errorf("%d samples with fewer than %d Ready schedulable Nodes, first: [%s]", len(w.low), w.min, w.low[0])
	}
	return w.peak
}
