package cli

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/testenv"
)

func TestRolloutStatus(t *testing.T) {
	f := newFixture(t, "cli-rollout")
	tests := []struct {
		name   string
		args   []string
		golden string
	}{
		{name: "plain", args: []string{"rollout", "status", "workers", "-n", f.ns}, golden: "rollout_status"},
		{name: "json", args: []string{"rollout", "status", "workers", "-n", f.ns, "-o", "json"}, golden: "rollout_status_json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, f.clock, tt.args...)
			if r.err != nil {
				t.Fatalf("rollout status failed: %v", r.err)
			}
			golden(t, tt.golden, r.stdout.String())
		})
	}
}

// TestRolloutStatusWatch: --watch prints the rollout in progress, prints
// again as the objects change and exits 0 once the rollout is complete.
func TestRolloutStatusWatch(t *testing.T) {
	f := newFixture(t, "cli-watch")
	r := &cliRun{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		root := newTestRoot(clock.RealClock{}, kubeconfigFile(t, ""), &r.stdout, &r.stderr,
			[]string{"rollout", "status", "workers", "-n", f.ns, "--watch", "--timeout", "1m"})
		r.err = root.ExecuteContext(context.Background())
	}()
	testenv.Eventually(t, 30*time.Second, func() error {
		if !strings.Contains(r.stdout.String(), "rollout in progress") {
			return errors.New("no status printed yet")
		}
		return nil
	})

	// The engine replaces the stale instance and workers-c's Node becomes
	// Ready; the MachinePool controller counts them available.
	for _, name := range []string{"workers-b", "workers-c"} {
		patchStatus(t, &infrav1.LocalMachinePoolMachine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name}}, func(m *infrav1.LocalMachinePoolMachine) {
			m.Status.Ready, m.Status.LatestModelApplied = true, true
			m.Status.Conditions = []metav1.Condition{f.cond(infrav1.InstanceReadyCondition, metav1.ConditionTrue, clusterv1.ReadyReason, "")}
		})
	}
	patchStatus(t, &infrav1.LocalMachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "workers"}}, func(p *infrav1.LocalMachinePool) {
		for i := range p.Status.Conditions {
			switch p.Status.Conditions[i].Type {
			case rolloutProgressingCondition:
				p.Status.Conditions[i] = f.cond(rolloutProgressingCondition, metav1.ConditionFalse, convergedReason, "3 replicas, all available and on model m2")
			case infrav1.ScaleGroupModelUpdatedCondition:
				p.Status.Conditions[i] = f.cond(infrav1.ScaleGroupModelUpdatedCondition, metav1.ConditionTrue, clusterv1.ReadyReason, "All instances run model m2")
			}
		}
	})
	select {
	case <-done:
		t.Fatalf("the watch ended before the rollout completed: %v\n%s", r.err, r.stdout.String())
	default:
	}
	patchStatus(t, &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "workers"}}, func(mp *clusterv1.MachinePool) {
		mp.Status.ReadyReplicas, mp.Status.AvailableReplicas, mp.Status.UpToDateReplicas = ptr.To[int32](3), ptr.To[int32](3), ptr.To[int32](3)
	})

	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the watch did not end once the rollout was complete:\n%s", r.stdout.String())
	}
	out := r.stdout.String()
	if r.err != nil {
		t.Fatalf("rollout status --watch failed: %v\n%s", r.err, out)
	}
	t.Logf("rollout status --watch printed:\n%s", out)
	blocks := strings.Count(out, "machinepool cli-watch/workers: ")
	if blocks < 2 {
		t.Errorf("want the status printed at least twice, got %d times:\n%s", blocks, out)
	}
	last := out[strings.LastIndex(out, "machinepool cli-watch/workers: "):]
	want := `machinepool cli-watch/workers: rollout complete
  up to date   3 of 3
  replicas     3 of 3, surge in use 0 of 1
  ready        3 of 3
  available    3 of 3, unavailable 0 (at most 1 while rolling)
`
	if last != want {
		t.Errorf("last status:\n%s\nwant:\n%s", last, want)
	}
	if strings.Count(out, "rollout complete") != 1 {
		t.Errorf("the complete status is printed more than once:\n%s", out)
	}
}

// TestRolloutStatusWatchTimeout: a rollout that does not complete within
// --timeout fails. The timeout leaves a loaded machine time to print the
// first status.
func TestRolloutStatusWatchTimeout(t *testing.T) {
	f := newFixture(t, "cli-watch-timeout")
	r := runCLI(t, f.clock, "rollout", "status", "workers", "-n", f.ns, "--watch", "--timeout", "5s")
	want := "timed out after 5s waiting for the rollout of machinepool cli-watch-timeout/workers to complete"
	if r.err == nil || r.err.Error() != want {
		t.Fatalf("error = %v, want %q", r.err, want)
	}
	if strings.Count(r.stdout.String(), "rollout in progress") != 1 {
		t.Errorf("want the status printed once (nothing changed):\n%s", r.stdout.String())
	}
	if r := runCLI(t, f.clock, "rollout", "status", "workers", "-n", f.ns, "--watch", "--timeout", "0s"); r.err == nil {
		t.Error("a zero --timeout is accepted")
	}
}

// TestRolloutPauseResume: pause and resume set and remove the annotation
// the engine honours, say what they did, and do nothing twice.
func TestRolloutPauseResume(t *testing.T) {
	f := newFixture(t, "cli-pause")
	var out strings.Builder
	steps := []struct {
		name       string
		args       []string
		wantPaused bool
	}{
		{name: "pause sets the annotation", args: []string{"rollout", "pause", "workers"}, wantPaused: true},
		{name: "pausing again changes nothing", args: []string{"rollout", "pause", "workers"}, wantPaused: true},
		{name: "status says it is paused and how to resume", args: []string{"rollout", "status", "workers"}, wantPaused: true},
		{name: "resume removes the annotation", args: []string{"rollout", "resume", "workers"}, wantPaused: false},
		{name: "resuming again changes nothing", args: []string{"rollout", "resume", "workers"}, wantPaused: false},
	}
	for _, st := range steps {
		r := runCLI(t, f.clock, append(st.args, "-n", f.ns)...)
		if r.err != nil {
			t.Fatalf("%s: %v", st.name, r.err)
		}
		out.WriteString("$ mpool " + strings.Join(st.args, " ") + "\n" + r.stdout.String())
		mp := &clusterv1.MachinePool{}
		if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: "workers"}, mp); err != nil {
			t.Fatal(err)
		}
		v, set := mp.Annotations[rolloutPausedAnnotation]
		if paused := set && v == "true"; paused != st.wantPaused || (!st.wantPaused && set) {
			t.Errorf("%s: annotations = %v, want paused %v", st.name, mp.Annotations, st.wantPaused)
		}
		if mp.Labels[clusterv1.ClusterNameLabel] != "demo" {
			t.Errorf("%s: the patch touched the labels: %v", st.name, mp.Labels)
		}
	}
	golden(t, "rollout_pause_resume", out.String())
}

// TestRolloutStatusCounts checks the pure status computation on cases the
// live fixture does not reach.
func TestRolloutStatusCounts(t *testing.T) {
	yes, no := true, false
	base := func(desired int32, available int32, instances ...InstanceView) *poolState {
		mp := &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Generation: 2}}
		mp.Spec.Replicas = &desired
		mp.Status.AvailableReplicas = &available
		mp.Status.ObservedGeneration = 2
		return &poolState{pool: mp, instances: instances, infra: &infraState{view: InfraPoolView{Kind: "LocalMachinePool", Name: "p", Found: true}}}
	}
	running := func(upToDate *bool, ready bool) InstanceView {
		return InstanceView{State: "Running", UpToDate: upToDate, Ready: ready}
	}
	tests := []struct {
		name         string
		state        *poolState
		wantComplete bool
		wantWaiting  []string
		check        func(t *testing.T, v RolloutStatusView)
	}{
		{
			name:         "all up to date and available is complete",
			state:        base(2, 2, running(&yes, true), running(&yes, true)),
			wantComplete: true,
		},
		{
			name:  "surge above desired is counted and must go",
			state: base(2, 2, running(&yes, true), running(&yes, true), running(&no, true)),
			wantWaiting: []string{
				"1 stale instances to be replaced",
			},
			check: func(t *testing.T, v RolloutStatusView) {
				if v.SurgeInUse != 1 || v.Replicas != 3 || v.Stale != 1 {
					t.Errorf("counts = %+v", v)
				}
			},
		},
		{
			name:  "deleting and failed instances are not replicas",
			state: base(1, 1, running(&yes, true), InstanceView{State: "Running", Deleting: true}, InstanceView{State: "Failed"}),
			wantWaiting: []string{
				"1 instances to finish deleting",
				"1 failed instances to be replaced",
			},
			check: func(t *testing.T, v RolloutStatusView) {
				if v.Replicas != 1 || v.Deleting != 1 || v.Failed != 1 || v.SurgeInUse != 0 {
					t.Errorf("counts = %+v", v)
				}
			},
		},
		{
			name: "an unobserved generation is not complete",
			state: func() *poolState {
				s := base(1, 1, running(&yes, true))
				s.pool.Generation = 3
				return s
			}(),
			wantWaiting: []string{"the MachinePool controller to observe generation 3 (observed 2)"},
		},
		{
			name: "a missing infrastructure pool",
			state: func() *poolState {
				s := base(1, 0)
				s.infra.view.Found = false
				return s
			}(),
			wantWaiting: []string{"LocalMachinePool p to be created"},
		},
		{
			name: "a failing scale group is reported from its condition",
			state: func() *poolState {
				s := base(2, 1, running(&yes, true))
				s.infra.conditions = []metav1.Condition{
					{Type: infrav1.ScaleGroupReadyCondition, Status: metav1.ConditionFalse, Reason: "Throttled", Message: "the cloud throttled the request"},
					{Type: infrav1.ScaleGroupDesiredReplicasCondition, Status: metav1.ConditionFalse, Reason: infrav1.ScaleGroupScaleUpReason, Message: "1 of 2 replicas"},
				}
				return s
			}(),
			wantWaiting: []string{
				"LocalMachinePool ScaleGroupReady=False Throttled: the cloud throttled the request",
				"1 more instances to be created",
				"1 replicas to become available",
			},
		},
		{
			name: "a rollout the engine paused says so, with the engine's reason",
			state: func() *poolState {
				s := base(2, 2, running(&no, true), running(&no, true), InstanceView{State: "Failed", UpToDate: &yes})
				s.infra.conditions = []metav1.Condition{{
					Type: infrav1.RolloutProgressingCondition, Status: metav1.ConditionFalse, Reason: infrav1.ReplacementsFailingReason,
					Message: "Rollout paused by the engine: 3 consecutive instances of model m failed",
				}}
				return s
			}(),
			wantWaiting: []string{"LocalMachinePool RolloutProgressing=False ReplacementsFailing: Rollout paused by the engine: 3 consecutive instances of model m failed"},
			check: func(t *testing.T, v RolloutStatusView) {
				if v.Stopped != infrav1.ReplacementsFailingReason {
					t.Errorf("stopped %q, want %s", v.Stopped, infrav1.ReplacementsFailingReason)
				}
				if text := formatRolloutStatus(v, ""); !strings.Contains(text, "rollout paused by the engine (ReplacementsFailing)") {
					t.Errorf("status text does not say who paused it:\n%s", text)
				}
			},
		},
		{
			name: "a blue-green rollout says its phase",
			state: func() *poolState {
				s := base(2, 2, running(&no, true), running(&no, true), running(&yes, true), running(&yes, true))
				s.infra.conditions = []metav1.Condition{{
					Type: infrav1.RolloutProgressingCondition, Status: metav1.ConditionTrue, Reason: "NodePoolSoaking",
					Message: "blue-green: soaking until 2030-01-02T13:00:00Z",
				}}
				return s
			}(),
			check: func(t *testing.T, v RolloutStatusView) {
				if v.BlueGreen != "NodePoolSoaking" {
					t.Errorf("blue-green %q, want NodePoolSoaking", v.BlueGreen)
				}
				if text := formatRolloutStatus(v, ""); !strings.Contains(text, "rollout in progress, blue-green: NodePoolSoaking") || !strings.Contains(text, "soaking until") {
					t.Errorf("status text does not say the phase:\n%s", text)
				}
			},
		},
		{
			name:  "instances without a model report are neither up to date nor stale",
			state: base(1, 1, running(nil, true)),
			check: func(t *testing.T, v RolloutStatusView) {
				if v.Complete || v.UpToDate != 0 || v.Stale != 0 {
					t.Errorf("view = %+v", v)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := rolloutStatus(tt.state)
			if tt.check != nil {
				tt.check(t, v)
				return
			}
			if v.Complete != tt.wantComplete {
				t.Errorf("complete = %v, want %v", v.Complete, tt.wantComplete)
			}
			if strings.Join(v.Waiting, "\n") != strings.Join(tt.wantWaiting, "\n") {
				t.Errorf("waiting =\n%s\nwant\n%s", strings.Join(v.Waiting, "\n"), strings.Join(tt.wantWaiting, "\n"))
			}
		})
	}
}

// TestRolloutResumeLiftsTheEnginesPause: a rollout the engine paused itself
// (its record on the infrastructure pool says so) is resumed by `rollout
// resume`, which removes the record; status says who paused it.
func TestRolloutResumeLiftsTheEnginesPause(t *testing.T) {
	f := newFixture(t, "cli-selfpause")
	ctx := context.Background()
	key := types.NamespacedName{Namespace: f.ns, Name: "workers"}
	pool := &infrav1.LocalMachinePool{}
	if err := env.Client.Get(ctx, key, pool); err != nil {
		t.Fatal(err)
	}
	before := pool.DeepCopy()
	rec := preview.RolloutProgress{Model: "m", ProgressAt: time.Now(), Paused: infrav1.ReplacementsFailingReason, Message: "3 consecutive instances failed"}
	pool.Annotations = map[string]string{preview.RolloutProgressAnnotation: rec.String()}
	if err := env.Client.Patch(ctx, pool, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, f.clock, "rollout", "resume", "workers", "-n", f.ns)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if out := r.stdout.String(); !strings.Contains(out, "the rollout the engine had paused (ReplacementsFailing) resumed") {
		t.Errorf("resume says %q", out)
	}
	if err := env.Client.Get(ctx, key, pool); err != nil {
		t.Fatal(err)
	}
	if _, ok := pool.Annotations[preview.RolloutProgressAnnotation]; ok {
		t.Errorf("the engine's record is still on the pool: %v", pool.Annotations)
	}
	r = runCLI(t, f.clock, "rollout", "resume", "workers", "-n", f.ns)
	if r.err != nil || !strings.Contains(r.stdout.String(), "nothing to do") {
		t.Errorf("resuming again: %v, %q", r.err, r.stdout.String())
	}
}
