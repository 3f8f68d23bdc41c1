package aws

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// capacitySpy records the manager's Auto Scaling requests that change a
// group's capacity: each TerminateInstanceInAutoScalingGroup with its
// instance and ShouldDecrementDesiredCapacity, and every SetDesiredCapacity
// or UpdateAutoScalingGroup that sets a desired capacity.
type capacitySpy struct {
	next http.RoundTripper

	mu         sync.Mutex
	terminated []terminateCall
	desired    []string
}

type terminateCall struct {
	instance  string
	decrement string
}

func (s *capacitySpy) RoundTrip(req *http.Request) (*http.Response, error) {
	form, err := queryForm(req)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	switch form.Get("Action") {
	case "TerminateInstanceInAutoScalingGroup":
		s.terminated = append(s.terminated, terminateCall{instance: form.Get("InstanceId"), decrement: form.Get("ShouldDecrementDesiredCapacity")})
	case "SetDesiredCapacity", "UpdateAutoScalingGroup":
		if d := form.Get("DesiredCapacity"); d != "" {
			s.desired = append(s.desired, form.Get("Action")+" "+d)
		}
	}
	s.mu.Unlock()
	return s.next.RoundTrip(req)
}

func (s *capacitySpy) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.terminated, s.desired = nil, nil
}

// TestScaleInRespectsPodDisruptionBudget: seed 004's pool scaled 1 → 4 → 2
// while a PodDisruptionBudget (minAvailable 3) guards a pod on each of the
// 4 Nodes. The test plays the pods' ReplicaSet: an evicted pod is replaced
// on a schedulable Node, but only once a drain has been refused by the
// budget, so that the second victim's drain must wait for it. On every
// state it observes, at least 3 guarded pods are available (Ready, not
// being deleted, on a live instance), no pod is left on an instance being
// terminated (it would be lost, not evicted) and the budget's current
// healthy count is at least its desired; the pool converges to 2 with its 2
// victims terminated by TerminateInstanceInAutoScalingGroup with
// ShouldDecrementDesiredCapacity, and no desired capacity sent to AWS.
func TestScaleInRespectsPodDisruptionBudget(t *testing.T) {
	cloud := startCloud(t, 0)
	f := newFixture(t, cloud)
	spy := &capacitySpy{next: http.DefaultTransport}
	f.StartManager(func(o *manager.Options) {
		o.CloudHTTPClient = &http.Client{Timeout: 30 * time.Second, Transport: spy}
	})
	f.ApplySeed(itest.Replicas(1))
	f.waitConverged(1, seedVersion)
	f.Scale(4)
	f.waitConverged(4, seedVersion)

	before := sorted(f.InstanceIDs())
	// Pods are bound to Nodes by name, and the next test's simulated
	// instances get the same names: its drains must not meet these pods
	// and their budget.
	t.Cleanup(func() {
		_ = f.CS.PolicyV1().PodDisruptionBudgets(f.NS).Delete(context.Background(), itest.GuardedApp, metav1.DeleteOptions{})
		_ = f.CS.CoreV1().Pods(f.NS).DeleteCollection(context.Background(), metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)},
			metav1.ListOptions{LabelSelector: "app=" + itest.GuardedApp})
	})
	seen := map[string]bool{}
	for i, n := range f.PoolNodes() {
		name := fmt.Sprintf("%s-%d", itest.GuardedApp, i)
		f.RunGuardedPod(name, n.Name)
		seen[name] = false
	}
	f.GuardingPDB(3, 1)

	spy.reset()
	terminates := f.ops(awsface.OpAWSTerminateInstanceInASG)
	obs := &disruptionObserver{f: f, minAvailable: 3, replicas: 4, seen: seen}
	sampling := itest.Sample(t, 50*time.Millisecond, obs.sample)
	f.Scale(2)
	f.waitConverged(2, seedVersion)
	sampling.Stop()
	// The converged state too: the last victim's pod may have gone after
	// the observer's last look.
	if err := obs.observe(f.Ctx); err != nil {
		t.Fatalf("observing the converged state: %v", err)
	}

	obs.mu.Lock()
	defer obs.mu.Unlock()
	t.Logf("scale-in 4 → 2: %d states observed, %d evictions, %d states with a drain refused by the budget, %d replacement pods",
		obs.states, len(obs.evicted), obs.blocked, obs.created)
	if len(obs.violations) > 0 {
		t.Errorf("the PodDisruptionBudget was violated in %d observed states, first: %s", len(obs.violations), obs.violations[0])
	}
	if obs.errors > obs.states/2 {
		t.Errorf("%d of %d observations failed: the invariant was not really watched", obs.errors, obs.states)
	}
	if len(obs.evicted) < 2 {
		t.Errorf("%d guarded pods evicted, want at least the 2 victims'", len(obs.evicted))
	}
	if obs.blocked == 0 {
		t.Error("no drain was refused by the PodDisruptionBudget: the test proves nothing")
	}

	after := sorted(f.InstanceIDs())
	spy.mu.Lock()
	defer spy.mu.Unlock()
	var victims []string
	for _, c := range spy.terminated {
		if c.decrement != "true" {
			t.Errorf("instance %s terminated with ShouldDecrementDesiredCapacity=%q, want true", c.instance, c.decrement)
		}
		victims = append(victims, c.instance)
	}
	victims = sorted(victims)
	want := slices.DeleteFunc(slices.Clone(before), func(id string) bool { return slices.Contains(after, id) })
	if !slices.Equal(victims, want) || len(victims) != 2 {
		t.Errorf("terminated %v, want each of the 2 removed instances %v once (before %v, after %v)", victims, want, before, after)
	}
	if n := f.ops(awsface.OpAWSTerminateInstanceInASG) - terminates; n != 2 {
		t.Errorf("the face answered %d TerminateInstanceInAutoScalingGroup, want 2", n)
	}
	if len(spy.desired) > 0 {
		t.Errorf("the scale-in sent desired capacities %v: AWS must not pick victims", spy.desired)
	}
	for _, id := range after {
		if !slices.Contains(before, id) {
			t.Errorf("instance %s was launched during a scale-in", id)
		}
	}
}

// disruptionObserver watches the guarded pods, their budget and the pool's
// drains on every state it observes (every 50 ms), recording violations of
// the budget, evictions and refused drains; and plays the pods'
// ReplicaSet once a drain has been refused.
type disruptionObserver struct {
	f                      *fixture
	minAvailable, replicas int

	mu         sync.Mutex
	states     int
	errors     int
	violations []string
	evicted    []string
	// seen holds every guarded pod observed, true once it was evicted.
	seen    map[string]bool
	blocked int
	created int
}

// sample observes one state, counting it and its error.
func (o *disruptionObserver) sample(ctx context.Context) {
	err := o.observe(ctx)
	o.mu.Lock()
	o.states++
	if err != nil && ctx.Err() == nil {
		o.errors++
	}
	o.mu.Unlock()
}

// evict records that the pod name was evicted, once. Callers hold mu.
func (o *disruptionObserver) evict(name string) {
	if !o.seen[name] {
		o.seen[name] = true
		o.evicted = append(o.evicted, name)
	}
}

// observe checks one state and replaces missing pods once a drain was
// refused.
func (o *disruptionObserver) observe(ctx context.Context) error {
	f := o.f
	// Nodes of live instances (not being terminated).
	live := map[string]bool{}
	if g := f.Group(); g != nil {
		for _, in := range g.Instances {
			if in.State != core.StateDeleting {
				live[in.ProviderID] = true
			}
		}
	}
	nodes, err := f.CS.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	liveNodes, schedulable := map[string]bool{}, []string{}
	for _, n := range nodes.Items {
		if live[n.Spec.ProviderID] {
			liveNodes[n.Name] = true
			if !n.Spec.Unschedulable && testenv.NodeReady(&n) {
				schedulable = append(schedulable, n.Name)
			}
		}
	}
	pods, err := f.CS.CoreV1().Pods(f.NS).List(ctx, metav1.ListOptions{LabelSelector: "app=" + itest.GuardedApp})
	if err != nil {
		return err
	}
	pdb, err := f.CS.PolicyV1().PodDisruptionBudgets(f.NS).Get(ctx, itest.GuardedApp, metav1.GetOptions{})
	if err != nil {
		return err
	}
	machines := &infrav1.AWSMachinePoolMachineList{}
	if err := env.Client.List(ctx, machines, client.InNamespace(f.NS)); err != nil {
		return err
	}

	available, alive := 0, 0
	perNode := map[string]int{}
	var names []string
	o.mu.Lock()
	present := map[string]bool{}
	for i := range pods.Items {
		p := &pods.Items[i]
		names = append(names, p.Name)
		present[p.Name] = true
		if _, known := o.seen[p.Name]; !known {
			o.seen[p.Name] = false
		}
		if p.DeletionTimestamp != nil {
			o.evict(p.Name)
			continue
		}
		alive++
		perNode[p.Spec.NodeName]++
		if !liveNodes[p.Spec.NodeName] {
			o.violations = append(o.violations, fmt.Sprintf("pod %s was not evicted but lost with the instance of Node %s", p.Name, p.Spec.NodeName))
		}
		if itest.PodReady(p) && liveNodes[p.Spec.NodeName] {
			available++
		}
	}
	// A pod seen before and gone now was evicted between two states.
	for name := range o.seen {
		if !present[name] {
			o.evict(name)
		}
	}
	if available < o.minAvailable {
		o.violations = append(o.violations, fmt.Sprintf("%d guarded pods available of %v, want at least %d (live Nodes %v)", available, names, o.minAvailable, liveNodes))
	}
	if pdb.Status.ObservedGeneration == pdb.Generation && pdb.Status.CurrentHealthy < pdb.Status.DesiredHealthy {
		o.violations = append(o.violations, fmt.Sprintf("budget status %+v: fewer healthy than desired", pdb.Status))
	}
	for _, m := range machines.Items {
		if c := meta.FindStatusCondition(m.Status.Conditions, infrav1.DrainingSucceededCondition); c != nil &&
			c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "PodDisruptionBudget") {
			o.blocked++
			break
		}
	}
	replace := o.blocked > 0 && alive < o.replicas && len(schedulable) > 0
	n := o.created
	if replace {
		o.created++
	}
	o.mu.Unlock()
	if !replace {
		return nil
	}
	// The ReplicaSet's part: one pod, on the schedulable Node with the
	// fewest guarded pods.
	slices.SortFunc(schedulable, func(a, b string) int { return perNode[a] - perNode[b] })
	_, err = f.CS.CoreV1().Pods(f.NS).Create(ctx, itest.GuardedPod(f.NS, fmt.Sprintf("%s-r%d", itest.GuardedApp, n), schedulable[0]), metav1.CreateOptions{})
	return err
}
