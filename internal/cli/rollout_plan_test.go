package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/preview"
)

// runPlan runs `mpool ARGS...` with the rollout command planning at clk's
// time against the test API server.
func runPlan(t *testing.T, clk clock.PassiveClock, args ...string) *cliRun {
	t.Helper()
	r := &cliRun{}
	root := &cobra.Command{Use: "mpool", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(newRolloutCommandWith(clk))
	root.SetArgs(append(args, "--kubeconfig", kubeconfigFile(t, "")))
	root.SetOut(&r.stdout)
	root.SetErr(&r.stderr)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r.err = root.ExecuteContext(ctx)
	return r
}

// ownInstances makes the LocalMachinePool "workers" the controller of the
// fixture's per-instance objects named, as the engine makes it: the plan
// only reads objects the pool controls.
func (f *fixture) ownInstances(t *testing.T, names ...string) {
	t.Helper()
	ctx := context.Background()
	pool := &infrav1.LocalMachinePool{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: f.ns, Name: "workers"}, pool); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		m := &infrav1.LocalMachinePoolMachine{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: f.ns, Name: name}, m); err != nil {
			t.Fatal(err)
		}
		before := m.DeepCopy()
		m.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: infrav1.GroupVersion.String(), Kind: "LocalMachinePool", Name: pool.Name, UID: pool.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}}
		if err := env.Client.Patch(ctx, m, client.MergeFrom(before)); err != nil {
			t.Fatalf("owning %s: %v", name, err)
		}
	}
}

// annotate merges annotations into obj.
func annotate(t *testing.T, obj client.Object, annotations map[string]string) {
	t.Helper()
	ctx := context.Background()
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	before := obj.DeepCopyObject().(client.Object)
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	for k, v := range annotations {
		a[k] = v
	}
	obj.SetAnnotations(a)
	if err := env.Client.Patch(ctx, obj, client.MergeFrom(before)); err != nil {
		t.Fatalf("annotating %s: %v", obj.GetName(), err)
	}
}

// TestRolloutPlan: the fixture's pool (maxSurge 25% = 1, maxUnavailable 1,
// workers-b stale, workers-c NotReady) can lose no more availability, so
// the next step surges one instance and workers-b goes in the step after.
func TestRolloutPlan(t *testing.T) {
	f := newFixture(t, "cli-plan")
	f.ownInstances(t, "workers-a", "workers-b", "workers-c")
	tests := []struct {
		name   string
		args   []string
		golden string
	}{
		{name: "plain", args: []string{"rollout", "plan", "workers", "-n", f.ns}, golden: "rollout_plan"},
		{name: "colour", args: []string{"rollout", "plan", "workers", "-n", f.ns, "--color=always"}, golden: "rollout_plan_color"},
		{name: "json", args: []string{"rollout", "plan", "workers", "-n", f.ns, "-o", "json"}, golden: "rollout_plan_json"},
		{name: "yaml", args: []string{"rollout", "plan", "workers", "-n", f.ns, "-o", "yaml"}, golden: "rollout_plan_yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runPlan(t, f.clock, tt.args...)
			if r.err != nil {
				t.Fatalf("rollout plan failed: %v", r.err)
			}
			golden(t, tt.golden, r.stdout.String())
		})
	}
}

// TestRolloutPlanPausedMarkedAndGated: a paused pool is planned as if
// resumed; the delete-machine mark on a Machine goes before staleness; the
// feature gate keeps stale instances.
func TestRolloutPlanPausedMarkedAndGated(t *testing.T) {
	f := newFixture(t, "cli-plan-paused")
	f.ownInstances(t, "workers-a", "workers-b", "workers-c")
	annotate(t, &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "workers"}}, map[string]string{rolloutPausedAnnotation: "true"})
	annotate(t, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "workers-a"}}, map[string]string{clusterv1.DeleteMachineAnnotation: ""})

	var out strings.Builder
	for _, args := range [][]string{
		{"rollout", "plan", "workers"},
		{"rollout", "plan", "workers", "--skip-model-reconciliation"},
	} {
		r := runPlan(t, f.clock, append(args, "-n", f.ns)...)
		if r.err != nil {
			t.Fatalf("%v: %v", args, r.err)
		}
		out.WriteString("$ mpool " + strings.Join(args, " ") + "\n" + r.stdout.String())
	}
	golden(t, "rollout_plan_paused", out.String())

	mp := &clusterv1.MachinePool{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: "workers"}, mp); err != nil {
		t.Fatal(err)
	}
	if !preview.RolloutPaused(mp, nil) {
		t.Error("the plan changed the pause annotation")
	}
}

// TestRolloutPlanNotes: objects labelled for the pool but not controlled
// by it are left out, as the engine does, and a paused Cluster, which stops
// the engine, is told.
func TestRolloutPlanNotes(t *testing.T) {
	f := newFixture(t, "cli-plan-notes")
	f.ownInstances(t, "workers-a", "workers-b")
	cluster := &clusterv1.Cluster{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: f.ns, Name: "demo"}, cluster); err != nil {
		t.Fatal(err)
	}
	before := cluster.DeepCopy()
	cluster.Spec.Paused = ptr.To(true)
	if err := env.Client.Patch(context.Background(), cluster, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	v, err := PlanRollout(context.Background(), env.Client, f.ns, "workers", PlanOptions{Now: f.now})
	if err != nil {
		t.Fatal(err)
	}
	if v.Replicas != 2 {
		t.Errorf("replicas %d, want 2: workers-c is not the pool's", v.Replicas)
	}
	want := []string{
		"Left out 1 LocalMachinePoolMachine that LocalMachinePool workers does not control, as the engine does: workers-c",
		"Cluster cli-plan-notes/demo is paused: the engine does nothing until it is resumed",
	}
	if strings.Join(v.Notes, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(v.Notes, "\n"), strings.Join(want, "\n"))
	}
}

func TestRolloutPlanErrors(t *testing.T) {
	f := newFixture(t, "cli-plan-errors")
	f.ownInstances(t, "workers-a", "workers-b", "workers-c")
	create(t, &clusterv1.MachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "orphan"},
		Spec: clusterv1.MachinePoolSpec{ClusterName: "demo", Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
			ClusterName:       "demo",
			Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To("")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "LocalMachinePool", Name: "nope"},
		}}},
	})
	create(t, &clusterv1.MachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "foreign"},
		Spec: clusterv1.MachinePoolSpec{ClusterName: "demo", Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
			ClusterName:       "demo",
			Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To("")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.example.com", Kind: "ToyMachinePool", Name: "toy"},
		}}},
	})
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "a missing MachinePool", args: []string{"rollout", "plan", "nope", "-n", f.ns}, wantErr: "machinepool cli-plan-errors/nope not found"},
		{
			name:    "a missing infrastructure pool",
			args:    []string{"rollout", "plan", "orphan", "-n", f.ns},
			wantErr: "LocalMachinePool cli-plan-errors/nope not found: nothing to plan",
		},
		{
			name:    "a pool of a kind no provider of mpool serves",
			args:    []string{"rollout", "plan", "foreign", "-n", f.ns},
			wantErr: "ToyMachinePool cli-plan-errors/toy is of a kind no provider of mpool serves",
		},
		{name: "an unknown output format", args: []string{"rollout", "plan", "workers", "-n", f.ns, "-o", "toml"}, wantErr: "unknown output format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runPlan(t, f.clock, tt.args...)
			if r.err == nil || !strings.Contains(r.err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want one containing %q", r.err, tt.wantErr)
			}
		})
	}
}

// TestFormatRolloutPlan checks the text rendering on plans the live
// fixtures do not reach.
func TestFormatRolloutPlan(t *testing.T) {
	base := func() *RolloutPlanView {
		return &RolloutPlanView{Namespace: "ns", Name: "p", Desired: 2, DeletePolicy: "Newest", MaxSurge: 1, Replicas: 2, Available: 2}
	}
	tests := []struct {
		name    string
		view    func() *RolloutPlanView
		want    []string
		notWant []string
	}{
		{
			name:    "a converged pool has nothing to do",
			view:    func() *RolloutPlanView { v := base(); v.Next.Done, v.Converges = true, true; return v },
			want:    []string{"nothing to do: every desired replica is up to date and available"},
			notWant: []string{"next step:", "completes after"},
		},
		{
			name: "a closed window, a drain in flight, a quarantined instance and the engine's pause",
			view: func() *RolloutPlanView {
				v := base()
				until := metav1.NewTime(time.Date(2030, 1, 3, 2, 0, 0, 0, time.UTC))
				v.MaintenanceWindow = &PlanWindowView{Schedule: "0 2 * * *", Duration: "4h0m0s", Until: &until}
				v.UndrainableNodeBehavior, v.NodeDrainTimeout = "Cordon", "5m0s"
				started := metav1.NewTime(time.Date(2030, 1, 2, 12, 0, 0, 0, time.UTC))
				v.Draining = []PlanDrainView{{Name: "p-a", Started: started, TimesOutAt: &metav1.Time{Time: started.Add(5 * time.Minute)}, Then: "kept cordoned and quarantined; the rollout goes on without it"}}
				v.Quarantined = 1
				v.PausedBy = "DrainBlocked: Node n-b of instance b was not drained"
				v.Next = PlanStepView{TargetCapacity: 2, Waiting: []PlanWaitView{{Reason: "OutsideMaintenanceWindow", Message: "2 stale instances wait: outside the maintenance window until 2030-01-03T02:00:00Z"}}}
				return v
			},
			want: []string{
				"paused by    DrainBlocked: Node n-b of instance b was not drained\n",
				`window       "0 2 * * *" for 4h0m0s: closed (opens 2030-01-03T02:00:00Z)`,
				"undrainable  Cordon (after nodeDrainTimeout 5m0s)\n",
				"draining     p-a since 2030-01-02T12:00:00Z until 2030-01-02T12:05:00Z, then kept cordoned and quarantined",
				"quarantined  1 instance left cordoned",
				"- 2 stale instances wait: outside the maintenance window until 2030-01-03T02:00:00Z",
			},
		},
		{
			name: "the revision and an automatic rollback's target",
			view: func() *RolloutPlanView {
				v := base()
				v.Revision, v.Revisions = &PlanRevisionView{Number: 3, ModelHash: "m3"}, 3
				v.Stops = &PlanStopsView{ProgressDeadline: "10m0s", MaxFailedReplacements: 3, AutoRollback: true, RollbackTo: &PlanRevisionView{Number: 2, ModelHash: "m2"}}
				return v
			},
			want: []string{
				"revision     3 (model m3), 3 revisions in the history ('mpool rollout history p')\n",
				"stops        after no progress for 10m0s or 3 new instances failed in a row: rolls back to revision 2 (model m2)\n",
			},
		},
		{
			name: "a pool that never stops itself",
			view: func() *RolloutPlanView {
				v := base()
				v.Stops = &PlanStopsView{ProgressDeadline: "off"}
				return v
			},
			want:    []string{"stops        never by itself"},
			notWant: []string{"revision "},
		},
		{
			name: "failed, deleting and new victims are told apart",
			view: func() *RolloutPlanView {
				v := base()
				v.Failed, v.Deleting = 1, 1
				v.Next = PlanStepView{TargetCapacity: 2, Create: 1, Delete: []PlannedDeletionView{
					{Name: "p-a", InstanceID: "a", Reason: "Failed", Why: "failed: the cloud gave up on it"},
					{Name: "p-b", InstanceID: "b", Zone: "z1", Reason: "Deleting", Why: "removal already started: draining and deleting it goes on"},
				}}
				v.Then = []PlanStepView{{TargetCapacity: 1, Delete: []PlannedDeletionView{{New: true, Reason: "Excess", Why: "scale down: more instances than desired"}}}}
				v.Converges = true
				return v
			},
			want: []string{
				"replicas     2, surge in use 0 of max 1; 1 being removed, 1 failed\n",
				"  target capacity 2: create 1 instance on the current model\n",
				"  delete p-a (instance a): failed: the cloud gave up on it\n",
				"  delete p-b (instance b, z1): removal already started",
				"  step 2:\n    target capacity 1: create nothing\n    delete a new instance: scale down",
				"the rollout completes after 2 steps",
			},
		},
		{
			name: "a plan that does not converge says so",
			view: func() *RolloutPlanView {
				v := base()
				v.Next = PlanStepView{TargetCapacity: 2, Waiting: []PlanWaitView{{Reason: "BudgetExhausted", Message: "budget exhausted: 1 unavailable of max 0, 1 still to delete"}}}
				return v
			},
			want: []string{"delete nothing\n  held back by:\n  - budget exhausted", "the rollout does not complete on its own"},
		},
		{
			name: "long projections are cut",
			view: func() *RolloutPlanView {
				v := base()
				for range maxProjectedSteps + 3 {
					v.Then = append(v.Then, PlanStepView{TargetCapacity: 2})
				}
				v.Converges = true
				return v
			},
			want:    []string{"  step 11:\n", "  ... 3 more steps\n", "the rollout completes after 14 steps"},
			notWant: []string{"step 12:"},
		},
		{
			name: "notes close the plan",
			view: func() *RolloutPlanView { v := base(); v.Notes = []string{"Nodes not read"}; return v },
			want: []string{"note: Nodes not read\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := formatRolloutPlan(tt.view(), palette{})
			if !strings.HasPrefix(got, "machinepool ns/p: rollout plan (dry run: nothing is changed)\n  computed from the state last reported") {
				t.Errorf("the plan does not open with what it is and what it is computed from:\n%s", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("output has %q:\n%s", w, got)
				}
			}
		})
	}
}
