package local

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/cli"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/testenv"
)

// TestPlanAgreesWithTheRollingUpgrade: `mpool rollout plan` on a paused
// rollout (maxSurge 1, maxUnavailable 0) says the engine first surges one
// instance and then replaces the stale instances one per step, oldest
// first; once resumed, the engine starts removing them in exactly that
// order.
func TestPlanAgreesWithTheRollingUpgrade(t *testing.T) {
	f, _ := start(t, cloudOptions{}, managerOptions{})
	f.growPool(poolSpec{replicas: 3, maxSurge: intstr.FromInt32(1), maxUnavailable: intstr.FromInt32(0)})

	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) {
		mp.Annotations = map[string]string{preview.RolloutPausedAnnotation: "true"}
		mp.Spec.Template.Spec.Version = v2
	})
	f.waitReportedStale(3)

	plan := f.plan()
	if !plan.Paused || plan.Stale != 3 || plan.UpToDate != 0 || plan.Desired != 3 || !plan.Converges {
		t.Fatalf("plan: paused %v, stale %d, up to date %d, desired %d, converges %v", plan.Paused, plan.Stale, plan.UpToDate, plan.Desired, plan.Converges)
	}
	if plan.Next.Create != 1 || len(plan.Next.Delete) != 0 || plan.Next.TargetCapacity != 4 {
		t.Fatalf("next step: %+v; want one surge instance and nothing deleted while maxUnavailable is 0", plan.Next)
	}
	want := victimWaves(plan)
	byAge := f.objectsByAge()
	if len(want) != 3 || !slices.Equal(slices.Concat(want...), byAge) {
		t.Fatalf("planned removals %v, want the stale instances one per step, oldest first: %v", want, byAge)
	}

	rec := recordRemovals(t, f)
	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) { delete(mp.Annotations, preview.RolloutPausedAnnotation) })
	f.waitConverged(3, v2, "", 2*converge)
	rec.assertWaves(want)
}

// TestPlanAgreesWithScaleDown: scaling a paused pool from 3 to 1, the plan
// names the two instances the delete policy picks; once resumed, the engine
// removes exactly those, in one step.
func TestPlanAgreesWithScaleDown(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy infrav1.DeletePolicyType
		// grow creates the instances in distinct seconds, so that their
		// per-instance objects' creation times order them as the cloud
		// does; Random does not look at ages.
		grow bool
	}{
		{name: "Oldest", policy: infrav1.OldestDeletePolicyType, grow: true},
		{name: "Newest", policy: infrav1.NewestDeletePolicyType, grow: true},
		{name: "Random", policy: infrav1.RandomDeletePolicyType},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := start(t, cloudOptions{}, managerOptions{})
			spec := poolSpec{replicas: 3, deletePolicy: tc.policy}
			if tc.grow {
				f.growPool(spec)
			} else {
				f.createPool(spec)
				f.waitConverged(3, v1, "", converge)
			}

			f.UpdateMachinePool(func(mp *clusterv1.MachinePool) {
				mp.Annotations = map[string]string{preview.RolloutPausedAnnotation: "true"}
				mp.Spec.Replicas = ptr.To[int32](1)
			})
			plan := f.plan()
			want := victimWaves(plan)
			if len(want) != 1 || len(want[0]) != 2 || len(plan.Next.Delete) != 2 || plan.Next.Create != 0 {
				t.Fatalf("plan: next %+v, then %+v; want two instances deleted at once", plan.Next, plan.Then)
			}
			for _, d := range plan.Next.Delete {
				if d.Reason != "Excess" {
					t.Errorf("%s planned for deletion for %s, want Excess", d.Name, d.Reason)
				}
			}
			byAge := f.objectsByAge()
			switch tc.policy {
			case infrav1.OldestDeletePolicyType:
				if !sameSet(want[0], byAge[:2]) {
					t.Errorf("planned victims %v, want the two oldest of %v", want[0], byAge)
				}
			case infrav1.NewestDeletePolicyType:
				if !sameSet(want[0], byAge[1:]) {
					t.Errorf("planned victims %v, want the two newest of %v", want[0], byAge)
				}
			}

			rec := recordRemovals(t, f)
			f.UpdateMachinePool(func(mp *clusterv1.MachinePool) { delete(mp.Annotations, preview.RolloutPausedAnnotation) })
			f.waitConverged(1, v1, "", converge)
			rec.assertWaves(want)
		})
	}
}

// growPool creates the pool with one replica and scales it up one instance
// at a time, each in a later second than the per-instance object before it:
// the API server keeps creation times in whole seconds and the plan orders
// instances by them, where the engine has the cloud's exact times.
func (f *fixture) growPool(p poolSpec) {
	f.T.Helper()
	n := p.replicas
	p.replicas = 1
	f.createPool(p)
	f.waitConverged(1, v1, "", converge)
	for i := int32(2); i <= n; i++ {
		objects := f.objectsByAge()
		newest := f.object(objects[len(objects)-1]).CreationTimestamp.Unix()
		testenv.Eventually(f.T, 3*time.Second, func() error {
			if now := time.Now().Unix(); now <= newest {
				return fmt.Errorf("still in second %d of the newest per-instance object", now)
			}
			return nil
		})
		f.Scale(i)
		f.waitConverged(int(i), v1, "", converge)
	}
}

// waitReportedStale waits until the engine reports n Running instances, all
// on an older model than the pool's.
func (f *fixture) waitReportedStale(n int) {
	f.T.Helper()
	testenv.Eventually(f.T, converge, func() error {
		list := &infrav1.LocalMachinePoolMachineList{}
		if err := env.Client.List(f.Ctx, list, client.InNamespace(f.NS)); err != nil {
			return err
		}
		stale := 0
		for _, m := range list.Items {
			if m.Status.State == infrav1.LocalInstanceRunning && m.Status.Ready && !m.Status.LatestModelApplied {
				stale++
			}
		}
		if stale != n || len(list.Items) != n {
			return fmt.Errorf("%d of %d LocalMachinePoolMachines report a stale model, want %d", stale, len(list.Items), n)
		}
		return nil
	})
}

// plan runs `mpool rollout plan` on the pool, as the command does.
func (f *fixture) plan() *cli.RolloutPlanView {
	f.T.Helper()
	v, err := cli.PlanRollout(f.Ctx, env.Client, f.NS, poolName, cli.PlanOptions{Now: time.Now()})
	if err != nil {
		f.T.Fatalf("planning the rollout: %v", err)
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	f.T.Logf("rollout plan:\n%s", b)
	return v
}

// victimWaves returns the per-instance objects a plan deletes, step by
// step, leaving out the steps that delete none and the instances the plan
// expects to create first.
func victimWaves(v *cli.RolloutPlanView) [][]string {
	var waves [][]string
	for _, s := range append([]cli.PlanStepView{v.Next}, v.Then...) {
		var names []string
		for _, d := range s.Delete {
			if !d.New {
				names = append(names, d.Name)
			}
		}
		if len(names) > 0 {
			waves = append(waves, names)
		}
	}
	return waves
}

// objectsByAge returns the names of the pool's per-instance objects, oldest
// first.
func (f *fixture) objectsByAge() []string {
	f.T.Helper()
	list := &infrav1.LocalMachinePoolMachineList{}
	if err := env.Client.List(f.Ctx, list, client.InNamespace(f.NS)); err != nil {
		f.T.Fatal(err)
	}
	slices.SortFunc(list.Items, func(a, b infrav1.LocalMachinePoolMachine) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Spec.InstanceID, b.Spec.InstanceID)
	})
	names := make([]string, len(list.Items))
	for i := range list.Items {
		names[i] = list.Items[i].Name
	}
	return names
}

func (f *fixture) object(name string) *infrav1.LocalMachinePoolMachine {
	f.T.Helper()
	m := &infrav1.LocalMachinePoolMachine{}
	if err := env.Client.Get(f.Ctx, f.Key(name), m); err != nil {
		f.T.Fatal(err)
	}
	return m
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// removalRecorder watches the pool's per-instance objects and records the
// order in which the engine starts removing instances: the drain-started
// annotation, a deletion timestamp or the object's deletion, whichever it
// sees first. The watch delivers changes in the order the API server made
// them.
type removalRecorder struct {
	t     *testing.T
	watch *machineWatch
	mu    sync.Mutex
	order []string
}

func recordRemovals(t *testing.T, f *fixture) *removalRecorder {
	t.Helper()
	r := &removalRecorder{t: t}
	seen := map[string]bool{}
	r.watch = watchMachines(t, f, func(typ watch.EventType, m *infrav1.LocalMachinePoolMachine) {
		removing := typ == watch.Deleted || m.DeletionTimestamp != nil || m.Annotations[preview.DrainStartedAnnotation] != ""
		if removing && !seen[m.Name] {
			seen[m.Name] = true
			r.mu.Lock()
			r.order = append(r.order, m.Name)
			r.mu.Unlock()
		}
	})
	return r
}

// stop ends the watch; it reports whether the watch was still running.
func (r *removalRecorder) stop() bool { return r.watch.stop() }

// assertWaves stops the recorder and checks that the engine removed the
// instances of each planned step before those of the next one.
func (r *removalRecorder) assertWaves(want [][]string) {
	r.t.Helper()
	if !r.stop() {
		r.t.Fatal("the watch of the LocalMachinePoolMachines ended early: the order of removals is not known")
	}
	r.mu.Lock()
	got := slices.Clone(r.order)
	r.mu.Unlock()
	r.t.Logf("the engine removed, in order: %v; the plan said %v", got, want)
	rest := got
	for i, wave := range want {
		if len(rest) < len(wave) {
			r.t.Fatalf("step %d: the plan removes %v, the engine removed only %v in all", i+1, wave, got)
		}
		if !sameSet(rest[:len(wave)], wave) {
			r.t.Fatalf("step %d: the plan removes %v, the engine removed %v (all removals: %v)", i+1, wave, rest[:len(wave)], got)
		}
		rest = rest[len(wave):]
	}
	if len(rest) > 0 {
		r.t.Errorf("the engine also removed %v, which the plan did not name", rest)
	}
}
