package infrapool

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/controller/priority"
	"github.com/mpool-dev/mpool/internal/history"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/provider/local"
	"github.com/mpool-dev/mpool/internal/scalegroup"
	"github.com/mpool-dev/mpool/internal/testenv"
)

// startEnv starts (or reuses) the test API server and returns a context
// bounded by ten minutes and a fresh namespace.
func startEnv(t *testing.T) (context.Context, *testenv.Env, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	env, err := testenv.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	return ctx, env, env.NewNamespace(t)
}

// createPool creates the LocalMachinePool "pool" in ns.
func createPool(ctx context.Context, t *testing.T, env *testenv.Env, ns string) *infrav1.LocalMachinePool {
	t.Helper()
	pool := &infrav1.LocalMachinePool{ObjectMeta: metav1.ObjectMeta{Name: "pool", Namespace: ns}}
	if err := env.Client.Create(ctx, pool); err != nil {
		t.Fatal(err)
	}
	return pool
}

// patchRecorder returns a client of env that records every PATCH it sends
// ("<last path element> <body>": "pool {...}", "status {...}") and the
// function that returns those sent so far.
func patchRecorder(t *testing.T, env *testenv.Env) (client.Client, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var sent []string
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return testenv.RoundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodPatch {
				body, err := io.ReadAll(r.Body)
				if err != nil {
					return nil, err
				}
				r.Body = io.NopCloser(bytes.NewReader(body))
				mu.Lock()
				sent = append(sent, path.Base(r.URL.Path)+" "+string(body))
				mu.Unlock()
			}
			return rt.RoundTrip(r)
		})
	})
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(sent)
	}
}

// TestPatchAfterStaleRead: a reconcile reads the pool from a cache that has
// not caught up with the engine's own last status write and computes the
// status the cache still holds. The engine must still write it: diffing
// against the stale cache would send nothing and leave the last write's
// status on the server, and the engine's watch ignores status-only changes,
// so nothing would correct it. Against a real API server.
func TestPatchAfterStaleRead(t *testing.T) {
	ctx, env, ns := startEnv(t)
	pool := createPool(ctx, t, env, ns)
	converged := metav1.Condition{Type: infrav1.RolloutProgressingCondition, Status: metav1.ConditionFalse, Reason: infrav1.ConvergedReason, Message: "converged"}
	unobserved := metav1.Condition{Type: infrav1.RolloutProgressingCondition, Status: metav1.ConditionUnknown, Reason: "ScaleGroupProvisionFailed", Message: "The instances have not been observed"}

	e := &Engine{c: env.Client, status: newPoolMemo[contract.Pool]()}
	write := func(read *infrav1.LocalMachinePool, c metav1.Condition) {
		t.Helper()
		s := &pass{pool: read.DeepCopy(), before: read.DeepCopy()}
		meta.SetStatusCondition(&s.pool.(*infrav1.LocalMachinePool).Status.Conditions, c)
		if err := e.patch(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	// Reconcile 1 converges; reconcile 2 fails to observe the cloud.
	write(pool, converged)
	stale := &infrav1.LocalMachinePool{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pool), stale); err != nil {
		t.Fatal(err)
	}
	write(stale, unobserved)
	// Reconcile 3 reads the cache as it was after reconcile 1 and converges.
	write(stale, converged)

	got := &infrav1.LocalMachinePool{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pool), got); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(got.Status.Conditions, infrav1.RolloutProgressingCondition); c == nil || c.Reason != infrav1.ConvergedReason {
		t.Fatalf("after a reconcile that read a stale pool and converged, the server holds %+v, want reason %s", c, infrav1.ConvergedReason)
	}
}

// TestPatchSendsEachPartOnce: a pass that changed the metadata, the spec
// and the status sends the metadata and spec in one patch and the status
// alone in the other; a status that differs only where JSON does not show
// it (a condition's time within the same second) sends nothing. Against a
// real API server.
func TestPatchSendsEachPartOnce(t *testing.T) {
	ctx, env, ns := startEnv(t)
	pool := createPool(ctx, t, env, ns)
	c, recorded := patchRecorder(t, env)
	e := &Engine{c: c, a: local.Adapter{}, status: newPoolMemo[contract.Pool]()}
	at := time.Date(2026, 11, 29, 1, 2, 3, 0, time.UTC)
	s := &pass{pool: pool.DeepCopy(), before: pool.DeepCopy()}
	p := s.pool.(*infrav1.LocalMachinePool)
	p.Annotations = map[string]string{"mpool.dev/revision": "r1"}
	p.Spec.ProviderIDList = []string{"local:///g/1"}
	meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.NewTime(at)})
	if err := e.patch(ctx, s); err != nil {
		t.Fatal(err)
	}
	sent := recorded()
	if len(sent) != 2 {
		t.Fatalf("sent %d patches, want 2: %q", len(sent), sent)
	}
	if meta := sent[0]; !strings.HasPrefix(meta, "pool ") || !strings.Contains(meta, "r1") || !strings.Contains(meta, "local:///g/1") || strings.Contains(meta, `"status"`) {
		t.Errorf("the first patch %q: want the annotation and the spec, and no status", meta)
	}
	if status := sent[1]; !strings.HasPrefix(status, "status ") || !strings.Contains(status, `"Ready"`) || strings.Contains(status, "r1") || strings.Contains(status, "local:///g/1") {
		t.Errorf("the second patch %q: want the status alone", status)
	}

	got := &infrav1.LocalMachinePool{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pool), got); err != nil {
		t.Fatal(err)
	}
	before := len(recorded())
	s = &pass{pool: got.DeepCopy(), before: got.DeepCopy()}
	s.pool.(*infrav1.LocalMachinePool).Status.Conditions[0].LastTransitionTime = metav1.NewTime(at.Add(time.Millisecond))
	if err := e.patch(ctx, s); err != nil {
		t.Fatal(err)
	}
	if sent := recorded()[before:]; len(sent) != 0 {
		t.Errorf("a status that differs by a millisecond: sent %q, want nothing", sent)
	}
}

// TestPatchStampsTheGenerationOfItsOwnSpecWrite: a pass that writes the
// pool's providerIDList moves its generation; the status it writes next
// says it observed the new one (status.observedGeneration and the
// conditions), so the next pass has nothing to write for it. When someone
// else changed the spec meanwhile, the status keeps the generation the
// pass acted on. Against a real API server.
func TestPatchStampsTheGenerationOfItsOwnSpecWrite(t *testing.T) {
	ctx, env, ns := startEnv(t)
	pool := createPool(ctx, t, env, ns)
	c, recorded := patchRecorder(t, env)
	e := &Engine{c: c, a: local.Adapter{}, status: newPoolMemo[contract.Pool]()}
	report := func(read *infrav1.LocalMachinePool, ids ...string) *pass {
		s := &pass{pool: read.DeepCopy(), before: read.DeepCopy()}
		p := s.pool.(*infrav1.LocalMachinePool)
		p.Spec.ProviderIDList = ids
		p.Status.ObservedGeneration = p.Generation
		meta.SetStatusCondition(&p.Status.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", ObservedGeneration: p.Generation})
		return s
	}
	get := func() *infrav1.LocalMachinePool {
		t.Helper()
		got := &infrav1.LocalMachinePool{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pool), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	stamped := func(got *infrav1.LocalMachinePool) (int64, int64) {
		return got.Status.ObservedGeneration, meta.FindStatusCondition(got.Status.Conditions, "Ready").ObservedGeneration
	}

	if err := e.patch(ctx, report(pool, "local:///g/1")); err != nil {
		t.Fatal(err)
	}
	got := get()
	if status, cond := stamped(got); got.Generation != pool.Generation+1 || status != got.Generation || cond != got.Generation {
		t.Fatalf("after writing the providerIDList: generation %d (was %d), status.observedGeneration %d, Ready's %d: want the new generation in both",
			got.Generation, pool.Generation, status, cond)
	}
	before := len(recorded())
	if err := e.patch(ctx, report(got, "local:///g/1")); err != nil {
		t.Fatal(err)
	}
	if sent := recorded()[before:]; len(sent) != 0 {
		t.Errorf("the next pass, nothing changed: sent %q, want nothing", sent)
	}

	// Someone changes the template between the pass's read and its write.
	s := report(got, "local:///g/1", "local:///g/2")
	theirs := got.DeepCopy()
	theirs.Spec.Template.InstanceType = "large"
	if err := env.Client.Update(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	if err := e.patch(ctx, s); err != nil {
		t.Fatal(err)
	}
	after := get()
	if status, cond := stamped(after); after.Generation != got.Generation+2 || status != got.Generation || cond != got.Generation {
		t.Errorf("with a spec change of someone else's in between: generation %d (was %d), status.observedGeneration %d, Ready's %d: want %d in both, the generation the pass acted on",
			after.Generation, got.Generation, status, cond, got.Generation)
	}
}

// TestZoneLabelBackfill: a per-instance object the engine created before
// it labelled objects with their zone gets the label once; one that has
// it, or whose zone is unknown or no label value, gets no write. Against a
// real API server.
func TestZoneLabelBackfill(t *testing.T) {
	ctx, env, ns := startEnv(t)
	obj := &infrav1.LocalMachinePoolMachine{ObjectMeta: metav1.ObjectMeta{Name: "pool-1", Namespace: ns, Labels: map[string]string{"keep": "me"}},
		Spec: infrav1.LocalMachinePoolMachineSpec{InstanceID: "1", ProviderID: "local:///g/1"}}
	if err := env.Client.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	e := &Engine{c: env.Client, a: local.Adapter{}}
	for _, zone := range []string{"", "not a label value!"} {
		if w := e.zoneLabelPatch(obj, scalegroup.Instance{ID: "1", Zone: zone}); w != nil {
			t.Errorf("zone %q: a write, want none", zone)
		}
	}
	w := e.zoneLabelPatch(obj, scalegroup.Instance{ID: "1", Zone: "zone-2"})
	if w == nil {
		t.Fatal("an unlabelled object of an instance in zone-2: no write")
	}
	if err := w(ctx); err != nil {
		t.Fatal(err)
	}
	got := &infrav1.LocalMachinePoolMachine{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
		t.Fatal(err)
	}
	if got.Labels[contract.ZoneLabel] != "zone-2" || got.Labels["keep"] != "me" {
		t.Errorf("labels %v, want the zone's added to the others", got.Labels)
	}
	if w := e.zoneLabelPatch(got, scalegroup.Instance{ID: "1", Zone: "zone-2"}); w != nil {
		t.Error("a labelled object: a write, want none")
	}
}

// syncFixture is a pool, its MachinePool and a group of n Running
// instances, with an engine of workers writers, against a real API server.
type syncFixture struct {
	ctx   context.Context
	env   *testenv.Env
	ns    string
	e     *Engine
	pool  *infrav1.LocalMachinePool
	owner *clusterv1.MachinePool
	group *scalegroup.Group
}

func newSyncFixture(t *testing.T, n, workers int) *syncFixture {
	t.Helper()
	ctx, env, ns := startEnv(t)
	f := &syncFixture{ctx: ctx, env: env, ns: ns, pool: createPool(ctx, t, env, ns), group: &scalegroup.Group{},
		e:     &Engine{c: env.Client, a: local.Adapter{}, workers: workers, tracker: newInstanceTimes(), held: newInstanceTimes()},
		owner: &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Name: "mp", Namespace: ns}}}
	for i := range n {
		id := fmt.Sprintf("i-%d", i)
		f.group.Instances = append(f.group.Instances, scalegroup.Instance{ID: id, ProviderID: "local:///g/" + id, State: scalegroup.StateRunning})
	}
	return f
}

// pass is a pass that reads no per-instance objects (a cache that has shown
// none of the creates) and leaves its bulk writes for later or not.
func (f *syncFixture) pass(bulkLater bool) *pass {
	return &pass{pool: f.pool, owner: f.owner, cloud: f.group, objects: map[string]contract.InstanceObject{}, bulkLater: bulkLater}
}

// created counts the per-instance objects in the API server.
func (f *syncFixture) created(t *testing.T) int {
	t.Helper()
	list := &infrav1.LocalMachinePoolMachineList{}
	if err := f.env.Client.List(f.ctx, list, client.InNamespace(f.ns)); err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}

// TestSyncInstancesBoundedPerPass: a pass makes at most writesPerPass
// per-instance writes and asks for the next pass at once; the passes that
// follow, reading a cache that may not show the earlier creates yet, make
// the rest without repeating any. Against a real API server.
func TestSyncInstancesBoundedPerPass(t *testing.T) {
	const n = 10
	f := newSyncFixture(t, n, 1)
	e := f.e
	// The memo keeps the passes from repeating the creates.
	var passes int
	for {
		s := f.pass(false)
		if err := e.syncInstances(f.ctx, s); err != nil {
			t.Fatal(err)
		}
		passes++
		got := f.created(t)
		if want := min(n, passes*e.writesPerPass(n)); got != want {
			t.Fatalf("after pass %d: %d objects, want %d (at most %d writes a pass)", passes, got, want, e.writesPerPass(n))
		}
		if !s.moreWrites {
			if got != n {
				t.Fatalf("pass %d left no writes with %d of %d objects", passes, got, n)
			}
			break
		}
		if s.requeue != moreWritesDelay {
			t.Fatalf("pass %d left writes and requeues after %v, want %v", passes, s.requeue, moreWritesDelay)
		}
	}
	if want := (n + e.writesPerPass(n) - 1) / e.writesPerPass(n); passes != want {
		t.Errorf("%d passes, want %d", passes, want)
	}
}

// TestSyncInstancesLeavesBulkWritesToALowPriorityPass: a pass at the default
// priority (pass.bulkLater) creates no per-instance object and says it left
// them (bulkDeferred); the low-priority pass that follows creates them all.
// Against a real API server.
func TestSyncInstancesLeavesBulkWritesToALowPriorityPass(t *testing.T) {
	const n = 3
	f := newSyncFixture(t, n, 4)
	busy := f.pass(true)
	if err := f.e.syncInstances(f.ctx, busy); err != nil {
		t.Fatal(err)
	}
	if got := f.created(t); got != 0 || !busy.bulkDeferred {
		t.Fatalf("a pass at the default priority: %d objects created, bulkDeferred %v; want 0 and true", got, busy.bulkDeferred)
	}
	low := f.pass(false)
	if err := f.e.syncInstances(f.ctx, low); err != nil {
		t.Fatal(err)
	}
	if got := f.created(t); got != n || low.bulkDeferred {
		t.Fatalf("the low-priority pass: %d objects created, bulkDeferred %v; want %d and false", got, low.bulkDeferred, n)
	}
}

// ownerlessPass runs e's pass over pool, which has no owner, as if at age
// after its creation, with bulkLater; it returns the pass with the pool as
// the API server holds it after the pass's patches.
func ownerlessPass(ctx context.Context, t *testing.T, env *testenv.Env, e *Engine, pool *infrav1.LocalMachinePool, age time.Duration, bulkLater bool) *pass {
	t.Helper()
	read := &infrav1.LocalMachinePool{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pool), read); err != nil {
		t.Fatal(err)
	}
	s := &pass{pool: read.DeepCopy(), before: read.DeepCopy(), now: read.CreationTimestamp.Add(age), bulkLater: bulkLater}
	if err := e.observe(ctx, s); err != nil {
		t.Fatal(err)
	}
	if !s.halt {
		t.Fatalf("at %s: a pool without an owner went on past observe", age)
	}
	if err := e.report(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := e.patch(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pool), read); err != nil {
		t.Fatal(err)
	}
	s.pool = read
	return s
}

// TestNewPoolWaitsForItsOwnerQuietly: a pool created moments ago whose
// owner MachinePool has not set its ownerReference yet writes no status (in
// a burst of new pools, each would write "waiting for the owner" only to
// replace it a second later) and looks again when ownerQuiet is over; a
// pool still without an owner then says so. Against a real API server.
func TestNewPoolWaitsForItsOwnerQuietly(t *testing.T) {
	ctx, env, ns := startEnv(t)
	created := createPool(ctx, t, env, ns)
	e := &Engine{c: env.Client, status: newPoolMemo[contract.Pool]()}
	reconcileAt := func(age time.Duration) *pass { return ownerlessPass(ctx, t, env, e, created, age, false) }

	s := reconcileAt(2 * time.Second)
	if got := s.pool.GetConditions(); len(got) != 0 {
		t.Errorf("2s after its creation, without an owner: the pool's status was written: %v", got)
	}
	if got, want := s.result().RequeueAfter, ownerQuiet-2*time.Second; got != want {
		t.Errorf("2s after its creation, without an owner: requeue after %s, want %s (the end of ownerQuiet)", got, want)
	}

	s = reconcileAt(ownerQuiet + time.Second)
	c := meta.FindStatusCondition(s.pool.GetConditions(), infrav1.ScaleGroupReadyCondition)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != infrav1.WaitingForOwnerReason {
		t.Errorf("after ownerQuiet, still without an owner: ScaleGroupReady is %+v, want False/%s", c, infrav1.WaitingForOwnerReason)
	}
}

// TestNewPoolWaitsQuietlyWhilePoolsAreCreated: while pools are being
// created (an active priority.Hold), a pool that never reported and would
// only say that it waits for its owner MachinePool writes no status, past
// ownerQuiet too, and leaves the status to a bulk pass; a pass that may do
// bulk writes, or any pass once the Hold is over, writes it. Against a real
// API server.
func TestNewPoolWaitsQuietlyWhilePoolsAreCreated(t *testing.T) {
	ctx, env, ns := startEnv(t)
	created := createPool(ctx, t, env, ns)
	hold := priority.NewHold()
	e := &Engine{c: env.Client, status: newPoolMemo[contract.Pool](), hold: hold}
	// Past ownerQuiet: only the Hold keeps the pool quiet.
	reconcile := func(bulkLater bool) *pass {
		return ownerlessPass(ctx, t, env, e, created, ownerQuiet+time.Second, bulkLater)
	}

	hold.Observe(types.NamespacedName{Namespace: ns, Name: "another-pool"}, true, true)
	if s := reconcile(true); len(s.pool.GetConditions()) != 0 || !s.statusDeferred {
		t.Errorf("while pools are being created: conditions %v written, status deferred %v; want none written, deferred", s.pool.GetConditions(), s.statusDeferred)
	}
	s := reconcile(false)
	if c := meta.FindStatusCondition(s.pool.GetConditions(), infrav1.ScaleGroupReadyCondition); c == nil || c.Reason != infrav1.WaitingForOwnerReason || s.statusDeferred {
		t.Fatalf("the bulk pass: ScaleGroupReady %+v, status deferred %v; want %s written", c, s.statusDeferred, infrav1.WaitingForOwnerReason)
	}

	// With no pool being created, a new pool reports at once.
	if err := env.Client.Delete(ctx, created); err != nil {
		t.Fatal(err)
	}
	created = createPool(ctx, t, env, ns)
	hold.Observe(types.NamespacedName{Namespace: ns, Name: "another-pool"}, false, false)
	if c := meta.FindStatusCondition(reconcile(true).pool.GetConditions(), infrav1.ScaleGroupReadyCondition); c == nil || c.Reason != infrav1.WaitingForOwnerReason {
		t.Errorf("no pool being created: ScaleGroupReady %+v, want %s written", c, infrav1.WaitingForOwnerReason)
	}
}

// TestFinalizerIsStoredOnce: a pass adds the pool's finalizer, and the pass
// after it reads the pool from a cache that has not shown that write yet.
// The second must not patch the finalizer again (it did, for most pools,
// when many were created at once); a pass of another engine, which made no
// such write, must. Against a real API server.
func TestFinalizerIsStoredOnce(t *testing.T) {
	ctx, env, ns := startEnv(t)
	stale := createPool(ctx, t, env, ns)
	c, recorded := patchRecorder(t, env)
	pass := func(e *Engine, read *infrav1.LocalMachinePool) (int, *pass) {
		t.Helper()
		before := len(recorded())
		s := &pass{pool: read.DeepCopy(), before: read.DeepCopy()}
		if err := e.storeBeforeCloud(ctx, s); err != nil {
			t.Fatal(err)
		}
		return len(recorded()) - before, s
	}
	fin := local.Adapter{}.Kinds().PoolFinalizer
	e := &Engine{c: c, a: local.Adapter{}}
	if n, _ := pass(e, stale); n != 1 {
		t.Fatalf("the first pass sent %d patches, want 1", n)
	}
	n, s := pass(e, stale)
	if n != 0 {
		t.Errorf("a pass from the cache before the finalizer's write sent %d patches, want 0", n)
	}
	for _, obj := range []client.Object{s.pool, s.before} {
		if !slices.Contains(obj.GetFinalizers(), fin) {
			t.Errorf("after the pass from the stale cache the pool has no finalizer: %v", obj.GetFinalizers())
		}
	}
	if n, _ := pass(&Engine{c: c, a: local.Adapter{}}, stale); n != 1 {
		t.Errorf("another engine's pass from the stale cache sent %d patches, want 1 (it wrote nothing)", n)
	}
	fresh := &infrav1.LocalMachinePool{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(stale), fresh); err != nil {
		t.Fatal(err)
	}
	if n, _ := pass(e, fresh); n != 0 {
		t.Errorf("a pass that reads the finalizer sent %d patches, want 0", n)
	}
}

// TestPlacementGoesWithTheFinalizer: the pass that places a new pool's
// scale group (an adapter with an infrastructure cluster) stores the
// reference, the finalizer and the revision's record in one patch, before
// anything is created in the cloud; a pass from a cache that has not shown
// that patch sends none. Against a real API server.
func TestPlacementGoesWithTheFinalizer(t *testing.T) {
	ctx, env, ns := startEnv(t)
	read := createPool(ctx, t, env, ns)
	c, recorded := patchRecorder(t, env)
	a := placingAdapter{}
	e := &Engine{c: c, a: a}
	pass := func() (*pass, []string) {
		t.Helper()
		n := len(recorded())
		s := &pass{pool: read.DeepCopy(), before: read.DeepCopy(), infra: &infrav1.LocalMachinePool{}}
		// What recordRevision leaves on the pool before the placement.
		s.pool.SetAnnotations(withEntry(s.pool.GetAnnotations(), history.RecordedAnnotation, "hash"))
		if err := e.resolveRef(ctx, s); err != nil || !s.placed {
			t.Fatalf("resolveRef: placed %v, %v", s.placed, err)
		}
		if err := e.storeBeforeCloud(ctx, s); err != nil {
			t.Fatal(err)
		}
		return s, recorded()[n:]
	}
	fin := a.Kinds().PoolFinalizer
	s, sent := pass()
	if len(sent) != 1 {
		t.Fatalf("the placing pass sent %d patches, want 1: %q", len(sent), sent)
	}
	stored := &infrav1.LocalMachinePool{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(read), stored); err != nil {
		t.Fatal(err)
	}
	want := s.group.Encode()
	if got := stored.Annotations[contract.GroupRefAnnotation]; got != want || !slices.Contains(stored.Finalizers, fin) || stored.Annotations[history.RecordedAnnotation] != "hash" {
		t.Errorf("after the patch the pool has reference %q (want %q), finalizers %v, record %q", got, want, stored.Finalizers, stored.Annotations[history.RecordedAnnotation])
	}
	if !equalMeta(s.before, s.pool) {
		t.Errorf("after the patch the pass's base differs from its pool: the pass's own patch would repeat it")
	}
	s, sent = pass()
	if len(sent) != 0 {
		t.Errorf("a pass from the cache before the patch sent %q, want nothing", sent)
	}
	for _, obj := range []client.Object{s.pool, s.before} {
		if !slices.Contains(obj.GetFinalizers(), fin) || obj.GetAnnotations()[contract.GroupRefAnnotation] != want {
			t.Errorf("after the pass from the stale cache: finalizers %v, annotations %v", obj.GetFinalizers(), obj.GetAnnotations())
		}
	}
}

// placingAdapter is the local adapter with an infrastructure cluster: its
// pools are placed by resolveRef, as Azure's and AWS's are.
type placingAdapter struct{ local.Adapter }

func (placingAdapter) NewInfraCluster() client.Object { return &infrav1.LocalMachinePool{} }

// TestStaleReadKeepsTransitionTimes: a pass writes the pool's conditions,
// and the pass after it, seconds later, reads the pool from a cache that has
// not shown that write yet. Its conditions are the ones written, and it must
// neither write them again nor move their transition times (it did: every
// condition re-stamped, for about one pool in three when many were created
// at once). An engine that made no such write does write them. Against a
// real API server.
func TestStaleReadKeepsTransitionTimes(t *testing.T) {
	ctx, env, ns := startEnv(t)
	stale := createPool(ctx, t, env, ns)
	c, recorded := patchRecorder(t, env)
	t0 := time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC)
	pass := func(e *Engine, at time.Time) int {
		t.Helper()
		n := len(recorded())
		s := &pass{pool: stale.DeepCopy(), before: stale.DeepCopy(), now: at}
		last, _ := e.status.get(s.pool.GetUID())
		setPoolConditions(s, last, false)
		if err := e.patch(ctx, s); err != nil {
			t.Fatal(err)
		}
		return len(recorded()) - n
	}
	e := &Engine{c: c, status: newPoolMemo[contract.Pool]()}
	if n := pass(e, t0); n != 1 {
		t.Fatalf("the first pass sent %d patches, want 1", n)
	}
	if n := pass(e, t0.Add(5*time.Second)); n != 0 {
		t.Errorf("a pass from the cache before the status write sent %d patches, want 0: %q", n, recorded())
	}
	got := &infrav1.LocalMachinePool{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(stale), got); err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Conditions) == 0 {
		t.Fatal("the pool has no conditions")
	}
	for _, cond := range got.Status.Conditions {
		if !cond.LastTransitionTime.Time.Equal(t0) {
			t.Errorf("condition %s moved its transition time to %s, want %s (its status never changed)", cond.Type, cond.LastTransitionTime.UTC(), t0)
		}
	}
	if n := pass(&Engine{c: c, status: newPoolMemo[contract.Pool]()}, t0.Add(10*time.Second)); n != 1 {
		t.Errorf("another engine's pass from the stale cache sent %d patches, want 1 (it wrote nothing)", n)
	}
}
