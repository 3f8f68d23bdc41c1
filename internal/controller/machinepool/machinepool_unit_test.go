package machinepool

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	kevents "k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/api/conditions"
	"github.com/mpool-dev/mpool/internal/controller/priority"
)

func TestComputePhase(t *testing.T) {
	tests := []struct {
		name string
		in   phaseInput
		want clusterv1.MachinePoolPhase
	}{
		{name: "deletion wins over everything", in: phaseInput{deleting: true, failed: true}, want: clusterv1.MachinePoolPhaseDeleting},
		{name: "a failure wins over readiness", in: phaseInput{failed: true, bootstrapReady: true, infraReady: true}, want: clusterv1.MachinePoolPhaseFailed},
		{name: "no bootstrap data yet: Pending", in: phaseInput{desired: 2}, want: clusterv1.MachinePoolPhasePending},
		{name: "bootstrap ready, infra not: Provisioning", in: phaseInput{bootstrapReady: true, desired: 2}, want: clusterv1.MachinePoolPhaseProvisioning},
		{name: "infra ready with all instances, Nodes not ready: Provisioned",
			in: phaseInput{bootstrapReady: true, infraReady: true, desired: 2, replicas: 2, ready: 1}, want: clusterv1.MachinePoolPhaseProvisioned},
		{name: "as many Ready Nodes as desired: Running",
			in: phaseInput{bootstrapReady: true, infraReady: true, desired: 2, replicas: 2, ready: 2}, want: clusterv1.MachinePoolPhaseRunning},
		{name: "zero desired and zero instances is Running",
			in: phaseInput{bootstrapReady: true, infraReady: true}, want: clusterv1.MachinePoolPhaseRunning},
		{name: "fewer instances than desired: ScalingUp",
			in: phaseInput{bootstrapReady: true, infraReady: true, desired: 3, replicas: 2, ready: 2}, want: clusterv1.MachinePoolPhaseScalingUp},
		{name: "more instances than desired: ScalingDown",
			in: phaseInput{bootstrapReady: true, infraReady: true, desired: 1, replicas: 3, ready: 3}, want: clusterv1.MachinePoolPhaseScalingDown},
		{name: "more Ready Nodes than desired (list lags): ScalingDown",
			in: phaseInput{bootstrapReady: true, infraReady: true, desired: 1, replicas: 1, ready: 2}, want: clusterv1.MachinePoolPhaseScalingDown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := computePhase(tc.in); got != tc.want {
				t.Fatalf("computePhase = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestDefaultReplicas(t *testing.T) {
	mm := func(lo, hi string) map[string]string {
		return map[string]string{clusterv1.AutoscalerMinSizeAnnotation: lo, clusterv1.AutoscalerMaxSizeAnnotation: hi}
	}
	tests := []struct {
		name     string
		ann      map[string]string
		observed int32
		want     int32
		wantErr  bool
	}{
		{name: "no annotations: 1", want: 1},
		{name: "new pool with autoscaler bounds starts at min", ann: mm("2", "5"), want: 2},
		{name: "existing pool keeps its size within bounds", ann: mm("2", "5"), observed: 4, want: 4},
		{name: "existing pool below min is raised", ann: mm("3", "5"), observed: 1, want: 3},
		{name: "existing pool above max is lowered", ann: mm("2", "5"), observed: 7, want: 5},
		{name: "min zero: a new pool starts empty", ann: mm("0", "5"), want: 0},
		{name: "only one bound is ignored", ann: map[string]string{clusterv1.AutoscalerMinSizeAnnotation: "2"}, want: 1, wantErr: true},
		{name: "non-integers are ignored", ann: mm("two", "5"), want: 1, wantErr: true},
		{name: "min above max is ignored", ann: mm("6", "5"), want: 1, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, why, err := defaultReplicas(tc.ann, tc.observed)
			if got != tc.want || (err != nil) != tc.wantErr || why == "" {
				t.Fatalf("defaultReplicas = %d, %q, %v; want %d, err %v", got, why, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestComputeNodeStatus(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	node := func(name string, ready bool, since time.Duration) *corev1.Node {
		st := corev1.ConditionFalse
		if ready {
			st = corev1.ConditionTrue
		}
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: st, LastTransitionTime: metav1.NewTime(now.Add(-since)),
			}}},
		}
	}
	nodes := map[string]*corev1.Node{
		"p1": node("n1", true, time.Minute),
		"p2": node("n2", true, 10*time.Second),
		"p3": node("n3", false, time.Hour),
	}
	tests := []struct {
		name          string
		ids           []string
		minReady      time.Duration
		wantRefs      []string
		wantReady     int32
		wantAvailable int32
		wantNext      time.Duration
	}{
		{name: "no minReadySeconds: ready is available", ids: []string{"p1", "p2", "p3", "p4"}, wantRefs: []string{"n1", "n2", "n3"}, wantReady: 2, wantAvailable: 2},
		{name: "minReadySeconds holds back the young Node and says when it is due", ids: []string{"p1", "p2"}, minReady: 30 * time.Second,
			wantRefs: []string{"n1", "n2"}, wantReady: 2, wantAvailable: 1, wantNext: 20 * time.Second},
		{name: "refs follow providerIDList order", ids: []string{"p3", "p1"}, wantRefs: []string{"n3", "n1"}, wantReady: 1, wantAvailable: 1},
		{name: "no Nodes: no refs", ids: []string{"p9"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := computeNodeStatus(tc.ids, nodes, tc.minReady, now)
			var names []string
			for _, r := range st.refs {
				names = append(names, r.Name)
				if r.UID == "" || r.Kind != "Node" || r.APIVersion != "v1" {
					t.Errorf("incomplete nodeRef %+v", r)
				}
			}
			if len(names) != len(tc.wantRefs) {
				t.Fatalf("refs = %v, want %v", names, tc.wantRefs)
			}
			for i := range names {
				if names[i] != tc.wantRefs[i] {
					t.Fatalf("refs = %v, want %v", names, tc.wantRefs)
				}
			}
			if st.ready != tc.wantReady || st.available != tc.wantAvailable || st.nextAvailable != tc.wantNext {
				t.Fatalf("ready/available/next = %d/%d/%s, want %d/%d/%s", st.ready, st.available, st.nextAvailable,
					tc.wantReady, tc.wantAvailable, tc.wantNext)
			}
		})
	}
}

func TestWithControllerRef(t *testing.T) {
	pool := &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Name: "mp", UID: "new"}}
	mpRef := func(uid string, controller bool) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachinePool", Name: "mp", UID: types.UID(uid), Controller: ptr.To(controller)}
	}
	other := metav1.OwnerReference{APIVersion: "x/v1", Kind: "Other", Name: "o", UID: "o"}
	tests := []struct {
		name    string
		refs    []metav1.OwnerReference
		wantLen int
		wantErr bool
	}{
		{name: "adds the controller ref", refs: nil, wantLen: 1},
		{name: "keeps other owners", refs: []metav1.OwnerReference{other}, wantLen: 2},
		{name: "replaces a stale ref to a recreated pool of the same name", refs: []metav1.OwnerReference{mpRef("old", true)}, wantLen: 1},
		{name: "refuses an object another controller owns", refs: []metav1.OwnerReference{{APIVersion: "x/v1", Kind: "Other", Name: "o", Controller: ptr.To(true)}}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := withControllerRef(tc.refs, pool)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if len(got) != tc.wantLen {
				t.Fatalf("refs = %+v", got)
			}
			found := false
			for _, r := range got {
				if r.Kind == "MachinePool" && r.UID == "new" && ptr.Deref(r.Controller, false) {
					found = true
				}
			}
			if !found {
				t.Fatalf("no controller ref to the pool in %+v", got)
			}
		})
	}
}

func TestNestedHelpersNeverPanic(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"spec":   map[string]any{"providerIDList": []any{"a", int64(3)}},
		"status": map[string]any{"ready": "yes", "replicas": 2.5, "failureMessage": int64(1), "failureReason": "Boom"},
	}}
	if _, _, err := nestedBool(obj, "status", "ready"); err == nil {
		t.Error("a string ready must be reported")
	}
	if _, err := nestedInt32(obj, "status", "replicas"); err == nil {
		t.Error("a fractional replicas must be reported")
	}
	if _, err := nestedStringSlice(obj, "spec", "providerIDList"); err == nil {
		t.Error("a non-string providerID must be reported")
	}
	if r, m := failureOf(obj); r != "Boom" || m != "" {
		t.Errorf("failureOf = %q, %q", r, m)
	}
	if v, err := nestedInt32(&unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"replicas": int64(4)}}}, "status", "replicas"); err != nil || *v != 4 {
		t.Errorf("nestedInt32 = %v, %v", v, err)
	}
	if v, err := nestedInt32(&unstructured.Unstructured{Object: map[string]any{"status": "oops"}}, "status", "replicas"); err == nil && v != nil {
		t.Errorf("nestedInt32 through a string = %v", v)
	}
}

func TestLowestNonZeroResult(t *testing.T) {
	tests := []struct {
		name string
		a, b time.Duration
		want time.Duration
	}{
		{name: "none", want: 0},
		{name: "only a", a: time.Second, want: time.Second},
		{name: "only b", b: time.Second, want: time.Second},
		{name: "earliest wins", a: time.Minute, b: time.Second, want: time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := lowestNonZeroResult(ctrl.Result{RequeueAfter: tc.a}, ctrl.Result{RequeueAfter: tc.b})
			if got.RequeueAfter != tc.want {
				t.Fatalf("got %s, want %s", got.RequeueAfter, tc.want)
			}
		})
	}
}

func TestApplyNodeStatusBoundsNodeRefs(t *testing.T) {
	tests := []struct {
		name     string
		refs     int
		wantRefs int
		wantCut  int
	}{
		{name: "under the bound", refs: 3, wantRefs: 3},
		{name: "at the bound", refs: MaxNodeRefs, wantRefs: MaxNodeRefs},
		{name: "over the bound", refs: MaxNodeRefs + 7, wantRefs: MaxNodeRefs, wantCut: MaxNodeRefs + 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &scope{pool: &clusterv1.MachinePool{Spec: clusterv1.MachinePoolSpec{Replicas: ptr.To(int32(tt.refs))}}}
			st := nodeStatus{ready: int32(tt.refs), available: int32(tt.refs)}
			for i := range tt.refs {
				st.refs = append(st.refs, corev1.ObjectReference{Kind: "Node", Name: fmt.Sprintf("n-%d", i)})
			}
			s.applyNodeStatus(st)
			if got := len(s.pool.Status.NodeRefs); got != tt.wantRefs {
				t.Errorf("%d nodeRefs, want %d", got, tt.wantRefs)
			}
			if s.nodeRefsCut != tt.wantCut {
				t.Errorf("nodeRefsCut %d, want %d", s.nodeRefsCut, tt.wantCut)
			}
			// The counts cover every Node, listed or not.
			if ptr.Deref(s.pool.Status.ReadyReplicas, -1) != int32(tt.refs) || unavailableReplicas(s.pool) != 0 {
				t.Errorf("ready %v, unavailable %d; want %d, 0", s.pool.Status.ReadyReplicas, unavailableReplicas(s.pool), tt.refs)
			}
		})
	}
}

func TestOnlyConflicts(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "machines"}, "m", errors.New("changed"))
	other := errors.New("boom")
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{name: "a conflict", err: conflict, want: true},
		{name: "a wrapped conflict", err: fmt.Errorf("patching: %w", conflict), want: true},
		{name: "conflicts joined", err: errors.Join(conflict, fmt.Errorf("status: %w", conflict)), want: true},
		{name: "a conflict joined with another error", err: errors.Join(conflict, other), want: false},
		{name: "another error", err: other, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := onlyConflicts(tt.err); got != tt.want {
				t.Errorf("onlyConflicts = %v, want %v", got, tt.want)
			}
		})
	}
}

// unavailableReplicas is what v1beta1 readers see as status.unavailableReplicas,
// kept in v1beta2 as status.deprecated.v1beta1.unavailableReplicas.
func unavailableReplicas(mp *clusterv1.MachinePool) int32 {
	if mp.Status.Deprecated == nil || mp.Status.Deprecated.V1Beta1 == nil {
		return 0
	}
	return mp.Status.Deprecated.V1Beta1.UnavailableReplicas
}

// v1beta1Failure returns what v1beta1 readers see as status.failureReason and
// status.failureMessage, kept in v1beta2 in status.deprecated.v1beta1.
func v1beta1Failure(mp *clusterv1.MachinePool) (reason, message *string) {
	if mp.Status.Deprecated == nil || mp.Status.Deprecated.V1Beta1 == nil {
		return nil, nil
	}
	d := mp.Status.Deprecated.V1Beta1
	if d.FailureReason != nil {
		reason = ptr.To(string(*d.FailureReason))
	}
	return reason, d.FailureMessage
}

// TestPoolMemberIndexFindsWhatTheLabelsSelect: the index key of a member,
// computed from the labels a pool gives its members, is the pool's key, for
// names short and long (hashed label values), and differs between pools of
// one name in two Clusters; an object without both labels is not indexed.
func TestPoolMemberIndexFindsWhatTheLabelsSelect(t *testing.T) {
	long := strings.Repeat("p", 70)
	pools := []*clusterv1.MachinePool{
		{ObjectMeta: metav1.ObjectMeta{Name: "mp-0"}, Spec: clusterv1.MachinePoolSpec{ClusterName: "a"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "mp-0"}, Spec: clusterv1.MachinePoolSpec{ClusterName: "b"}},
		{ObjectMeta: metav1.ObjectMeta{Name: long}, Spec: clusterv1.MachinePoolSpec{ClusterName: long}},
	}
	seen := map[string]bool{}
	for _, pool := range pools {
		member := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Labels: poolLabels(pool)}}
		keys := poolMemberIndex(member)
		if len(keys) != 1 || keys[0] != poolMemberKey(pool) {
			t.Fatalf("pool %s/%s: member indexed as %v, the pool lists %q", pool.Spec.ClusterName, pool.Name, keys, poolMemberKey(pool))
		}
		if seen[keys[0]] {
			t.Fatalf("two pools share the key %q", keys[0])
		}
		seen[keys[0]] = true
	}
	half := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{clusterv1.MachinePoolNameLabel: "mp-0"}}}
	if keys := poolMemberIndex(half); keys != nil {
		t.Fatalf("an object with only the pool-name label is indexed as %v", keys)
	}
}

// eventLog records events (reason and note) for unit tests.
type eventLog struct{ notes []string }

func (l *eventLog) Eventf(_, _ runtime.Object, _, reason, _, note string, args ...any) {
	l.notes = append(l.notes, reason+": "+fmt.Sprintf(note, args...))
}

// TestReportCreatedMachinesIsOneEvent: the Machines one reconcile created
// make one event naming the first few, not an event each.
func TestReportCreatedMachinesIsOneEvent(t *testing.T) {
	log := &eventLog{}
	r := &Reconciler{Recorder: log}
	s := &scope{pool: &clusterv1.MachinePool{}, infraMachineKind: "LocalMachinePoolMachine"}
	r.reportCreatedMachines(s)
	if len(log.notes) != 0 {
		t.Fatalf("no Machine created, events %q", log.notes)
	}
	s.created = []string{"m-7", "m-1", "m-3", "m-2", "m-6", "m-5", "m-4"}
	r.reportCreatedMachines(s)
	want := "MachineCreated: Created 7 Machines, one for each new LocalMachinePoolMachine: m-1, m-2, m-3, m-4, m-5 and 2 more"
	if len(log.notes) != 1 || log.notes[0] != want {
		t.Fatalf("events %q, want [%q]", log.notes, want)
	}
	s.created = []string{"m-8"}
	r.reportCreatedMachines(s)
	if want := "MachineCreated: Created Machine m-8 for its LocalMachinePoolMachine"; len(log.notes) != 2 || log.notes[1] != want {
		t.Fatalf("events %q, want %q last", log.notes, want)
	}
}

func TestObserveOwnSpecWrite(t *testing.T) {
	pool := func() *clusterv1.MachinePool {
		return &clusterv1.MachinePool{
			ObjectMeta: metav1.ObjectMeta{Generation: 4},
			Status: clusterv1.MachinePoolStatus{ObservedGeneration: 4, Conditions: []metav1.Condition{
				{Type: "Ready", ObservedGeneration: 4},
				{Type: "Paused", ObservedGeneration: 3}, // set by an earlier reconcile: left as it is
			}},
		}
	}
	p := pool()
	observeOwnSpecWrite(p, 4, 5, true)
	if p.Status.ObservedGeneration != 5 || p.Status.Conditions[0].ObservedGeneration != 5 || p.Status.Conditions[1].ObservedGeneration != 3 || p.Generation != 5 {
		t.Errorf("after its own spec patch (4 → 5): observedGeneration %d, conditions at %d and %d, generation %d; want 5, 5 and 3, 5",
			p.Status.ObservedGeneration, p.Status.Conditions[0].ObservedGeneration, p.Status.Conditions[1].ObservedGeneration, p.Generation)
	}
	p = pool()
	observeOwnSpecWrite(p, 4, 5, false)
	if p.Status.ObservedGeneration != 4 || p.Status.Conditions[0].ObservedGeneration != 5 {
		t.Errorf("a failed reconcile's spec patch: observedGeneration %d, Ready at %d; want 4 (not observed by this reconcile) and 5",
			p.Status.ObservedGeneration, p.Status.Conditions[0].ObservedGeneration)
	}
	p = pool()
	observeOwnSpecWrite(p, 4, 4, true)
	if p.Status.ObservedGeneration != 4 || p.Generation != 4 {
		t.Errorf("a patch that did not move the generation: observedGeneration %d, generation %d; want 4, 4", p.Status.ObservedGeneration, p.Generation)
	}
}

// TestObserveCreation: a pool is being created from Pending or Provisioning
// until it is first Running; the phases on the way keep that, so a Running
// pool's scale-up (ScalingUp, then Provisioned while its new Nodes join) is
// not a creation and holds nothing. Each new phase of a creation is a step.
func TestObserveCreation(t *testing.T) {
	pool := types.NamespacedName{Namespace: "ns", Name: "p"}
	for _, tc := range []struct {
		name   string
		phases []clusterv1.MachinePoolPhase
		want   bool
	}{
		{"new", []clusterv1.MachinePoolPhase{clusterv1.MachinePoolPhasePending}, true},
		{"launching", []clusterv1.MachinePoolPhase{clusterv1.MachinePoolPhasePending, clusterv1.MachinePoolPhaseProvisioning, clusterv1.MachinePoolPhaseScalingUp, clusterv1.MachinePoolPhaseProvisioned}, true},
		{"created", []clusterv1.MachinePoolPhase{clusterv1.MachinePoolPhaseProvisioning, clusterv1.MachinePoolPhaseProvisioned, clusterv1.MachinePoolPhaseRunning}, false},
		{"scale-up of a running pool", []clusterv1.MachinePoolPhase{clusterv1.MachinePoolPhaseRunning, clusterv1.MachinePoolPhaseScalingUp, clusterv1.MachinePoolPhaseProvisioned}, false},
		{"failed", []clusterv1.MachinePoolPhase{clusterv1.MachinePoolPhaseProvisioning, clusterv1.MachinePoolPhaseFailed}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hold := priority.NewHold()
			from := ""
			for _, p := range tc.phases {
				observeCreation(hold, pool, from, string(p))
				from = string(p)
			}
			if got := hold.Creating(pool); got != tc.want {
				t.Errorf("after %v: creating %v, want %v", tc.phases, got, tc.want)
			}
			if got := hold.Active(); got != tc.want {
				t.Errorf("after %v: the Hold active %v, want %v (a creation that just took a step)", tc.phases, got, tc.want)
			}
		})
	}
}

func TestPhaseChangeTellsWhatMovedIt(t *testing.T) {
	pool := func(phase clusterv1.MachinePoolPhase, bootstrap, infra metav1.ConditionStatus) *clusterv1.MachinePool {
		mp := &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Name: "mp", Namespace: "ns"}}
		mp.Status.SetTypedPhase(phase)
		mp.Status.Conditions = []metav1.Condition{
			{Type: conditions.BootstrapReadyCondition, Status: bootstrap},
			{Type: clusterv1.InfrastructureReadyCondition, Status: infra},
		}
		return mp
	}
	const f, tr = metav1.ConditionFalse, metav1.ConditionTrue
	tests := []struct {
		name       string
		orig, pool *clusterv1.MachinePool
		want       []string
	}{
		{
			name: "bootstrap data moves the pool out of Pending",
			orig: pool(clusterv1.MachinePoolPhasePending, f, f),
			pool: pool(clusterv1.MachinePoolPhaseProvisioning, tr, f),
			want: []string{"Normal PhaseChanged Phase changed from Pending to Provisioning: bootstrap data is ready"},
		},
		{
			name: "the infrastructure pool moves it on",
			orig: pool(clusterv1.MachinePoolPhaseProvisioning, tr, f),
			pool: pool(clusterv1.MachinePoolPhaseScalingUp, tr, tr),
			want: []string{"Normal PhaseChanged Phase changed from Provisioning to ScalingUp: the infrastructure pool is ready"},
		},
		{
			name: "both at once",
			orig: pool(clusterv1.MachinePoolPhasePending, f, f),
			pool: pool(clusterv1.MachinePoolPhaseRunning, tr, tr),
			want: []string{"Normal PhaseChanged Phase changed from Pending to Running: bootstrap data and the infrastructure pool are ready"},
		},
		{
			name: "ready again without a phase change keeps its own event",
			orig: pool(clusterv1.MachinePoolPhaseRunning, tr, f),
			pool: pool(clusterv1.MachinePoolPhaseRunning, tr, tr),
			want: []string{"Normal InfrastructureReady The infrastructure pool is ready"},
		},
		{
			name: "a new pool's first phase is not a change",
			orig: &clusterv1.MachinePool{},
			pool: pool(clusterv1.MachinePoolPhasePending, f, f),
		},
		{
			name: "a new pool that starts ready",
			orig: &clusterv1.MachinePool{},
			pool: pool(clusterv1.MachinePoolPhaseProvisioning, tr, f),
			want: []string{"Normal PhaseChanged Phase changed from (none) to Provisioning: bootstrap data is ready"},
		},
		{
			name: "a phase change alone",
			orig: pool(clusterv1.MachinePoolPhaseScalingUp, tr, tr),
			pool: pool(clusterv1.MachinePoolPhaseRunning, tr, tr),
			want: []string{"Normal PhaseChanged Phase changed from ScalingUp to Running"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := kevents.NewFakeRecorder(10)
			r := &Reconciler{Recorder: rec}
			r.recordEvents(&scope{pool: tt.pool, orig: tt.orig})
			var got []string
			for len(rec.Events) > 0 {
				got = append(got, <-rec.Events)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
