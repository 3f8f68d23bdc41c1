package infrapool

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/capi"
	"github.com/mpool-dev/mpool/internal/lastwrite"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// syncInstances makes the per-instance objects match the group: one per
// instance, controller-owned by the pool, with the instance's status. An
// object whose instance is gone loses its Node and then its finalizer, and
// is deleted. Nodes of instances the cloud is deleting (powered off) are
// deleted too. The creates, and the patches of instances on their way up
// (routineReport) with their zone labels and owners, are bulk writes
// (package priority): a pass that may not do them now (pass.bulkLater)
// leaves them to a low-priority one (pass.bulkDeferred); a status that
// changes the instance's model (modelNews) is not bulk. The status of an
// instance leaving, failed or not joined in time, the releases and the Node
// deletions are done by every pass.
func (e *Engine) syncInstances(ctx context.Context, s *pass) error {
	instances := s.instances()
	present := make(map[string]bool, len(instances))
	var work, bulk []func(context.Context) error
	for _, in := range instances {
		present[in.ID] = true
		obj := s.objects[in.ID]
		if in.State == scalegroup.StateDeleting {
			if node := s.nodes[in.ProviderID]; node != nil && s.nodesKnown {
				work = append(work, func(ctx context.Context) error { return e.deleteWorkloadNode(ctx, s, node) })
			}
		}
		switch {
		case in.State == scalegroup.StateDeleting:
			// On its way out: the object goes with it, its status no longer
			// matters, unless it says why the instance goes.
			if obj != nil {
				if w := e.notJoinedStatus(s, obj, in.ID); w != nil {
					work = append(work, w)
				}
			}
		case obj == nil:
			if e.written.Pending(instanceCreateKey(s, in.ID), "") {
				continue // created: the cache has not shown it yet
			}
			rep := e.reportOf(s, in) // here: the writes run in parallel
			bulk = append(bulk, func(ctx context.Context) error { return e.createInstanceObject(ctx, s, in, rep) })
		default:
			e.written.Forget(instanceCreateKey(s, in.ID))
			rep := e.reportOf(s, in)
			if w := e.instanceStatusPatch(s, obj, rep); w != nil {
				// Judged against the status the patch is computed from.
				if routineReport(rep) && !modelNews(e.a.ReadInstance(e.statusBase(obj)), rep) {
					bulk = append(bulk, w)
				} else {
					work = append(work, w)
				}
			}
			if w := e.zoneLabelPatch(obj, in); w != nil {
				bulk = append(bulk, w)
			}
			if w := e.ownerPatch(obj); w != nil {
				bulk = append(bulk, w)
			}
		}
	}
	// The objects of instances that left go first: their Machines with
	// them, and the MachinePool's counts.
	var releases []func(context.Context) error
	for id, obj := range s.objects {
		if !present[id] {
			key := lastwrite.Key{UID: obj.GetUID(), Part: "release"}
			if e.written.Pending(key, obj.GetResourceVersion()) {
				continue // released: the cache has not shown it yet
			}
			status := e.notJoinedStatus(s, obj, id)
			releases = append(releases, func(ctx context.Context) error {
				if status != nil {
					if err := status(ctx); err != nil {
						return err
					}
				}
				if err := e.releaseInstanceObject(ctx, s, obj, false); err != nil {
					return err
				}
				if s.nodesKnown { // else it waited for the Nodes
					e.written.Wrote(key, obj.GetResourceVersion(), obj)
				}
				return nil
			})
		}
	}
	e.tracker.retain(s.pool.GetUID(), present)
	e.held.retain(s.pool.GetUID(), present)
	if len(bulk) > 0 && s.bulkLater {
		s.bulkDeferred = true
		bulk = nil
	}
	work = slices.Concat(releases, work, bulk)
	if limit := e.writesPerPass(len(instances)); len(work) > limit {
		// The rest in the next pass, at once: a pass waits for its writes,
		// and a thousand of them (the first pass of a roll marks every
		// instance out of date) would hold back the next decision by
		// seconds, such as deleting the old instances of a wave whose new
		// ones just became Ready.
		work = work[:limit]
		s.moreWrites = true
		s.requeueAfter(moreWritesDelay)
	}
	// While a roll replaces stale instances (unless the
	// SkipMachinePoolModelReconciliation gate leaves them), a pass starts no
	// write after rollWriteBudget: the next decision (deleting the old
	// instances of a wave whose replacements just became Ready) waits for
	// this pass, and the writes of a wave of 250 took 2–3 s behind the
	// client's rate limit. The rest go in the next pass.
	var deadline time.Time
	if s.plan.Counts.Stale > 0 && !e.skip {
		deadline = time.Now().Add(rollWriteBudget)
	}
	var skipped atomic.Bool
	err := e.parallel(ctx, len(work), func(ctx context.Context, i int) error {
		if !deadline.IsZero() && time.Now().After(deadline) {
			skipped.Store(true)
			return nil
		}
		return work[i](ctx)
	})
	if skipped.Load() {
		s.moreWrites = true
		s.requeueAfter(moreWritesDelay)
	}
	return err
}

// rollWriteBudget is how long a pass of a rolling pool goes on starting
// per-instance writes.
const rollWriteBudget = time.Second

// moreWritesDelay is how soon a pass that left per-instance writes for the
// next one is followed by it.
const moreWritesDelay = time.Millisecond

// routineReport reports whether rep is of an instance on its way up or
// serving (Pending, Booting, Running): its per-instance object's status is
// bookkeeping, where an instance leaving or failed is news.
func routineReport(rep contract.InstanceReport) bool {
	switch rep.State {
	case contract.InstancePending, contract.InstanceBooting, contract.InstanceRunning:
		return !rep.JoinTimedOut && rep.FailureReason == nil
	}
	return false
}

// modelNews reports whether rep changes whether an instance that has
// reported runs the pool's current model (status.latestModelApplied): a
// rollout starting or an instance brought up to date. That is the pool's
// own progress, not bookkeeping: 'mpool rollout plan' and the MachinePool's
// UpToDate condition count stale instances from it, and left to a
// low-priority pass (which a busy manager holds back for minutes) they
// showed a pool waiting for its maintenance window as all up to date.
func modelNews(v contract.InstanceView, rep contract.InstanceReport) bool {
	return v.Reported && v.UpToDate != rep.LatestModelApplied
}

// writesPerPass bounds the per-instance writes of one pass over a group of
// n instances: four rounds of its workers, or a quarter of the group when
// that is more. A pass has a fixed cost (the cloud's group read, the pool's
// status written) that grows with the group; a bulk of writes in passes
// this small would pay it often enough to slow them down (at 10,000
// instances, 128 writes a pass took the per-instance objects 4 minutes
// to settle).
func (e *Engine) writesPerPass(n int) int {
	return max(4*e.workers, n/4)
}

// notJoinedStatus returns the write that records, on the per-instance
// object of an instance deleted this reconcile for not joining, why it went
// (the InstanceReady condition's NodeStartupTimeout), before the object goes
// with its instance; nil for any other instance.
func (e *Engine) notJoinedStatus(s *pass, obj contract.InstanceObject, id string) func(context.Context) error {
	if !s.deletedNow[id] || !s.joinTimedOut[id] || s.cloud == nil {
		return nil
	}
	for _, in := range s.cloud.Instances {
		if in.ID == id {
			return e.instanceStatusPatch(s, obj, e.reportOf(s, in))
		}
	}
	return nil
}

// reportOf returns instanceReport(s, in), computed once per reconcile: the
// per-instance objects and the pool's status share it.
func (e *Engine) reportOf(s *pass, in scalegroup.Instance) contract.InstanceReport {
	if r, ok := s.reports[in.ID]; ok {
		return r
	}
	r := e.instanceReport(s, in)
	if s.reports == nil {
		s.reports = map[string]contract.InstanceReport{}
	}
	s.reports[in.ID] = r
	return r
}

// instanceReport describes inst for its per-instance object and the pool's
// status.
func (e *Engine) instanceReport(s *pass, in scalegroup.Instance) contract.InstanceReport {
	r := contract.InstanceReport{
		InstanceID:         in.ID,
		ProviderID:         in.ProviderID,
		Zone:               in.Zone,
		ModelHash:          in.ModelHash,
		LatestModelApplied: in.ModelHash == s.modelHash,
		Message:            in.Message,
		Template:           in.Template,
		JoinTimedOut:       s.joinTimedOut[in.ID],
	}
	switch in.State {
	case scalegroup.StateCreating:
		r.State = contract.InstancePending
	case scalegroup.StateBooting:
		r.State = contract.InstanceBooting
	case scalegroup.StateRunning:
		r.State = contract.InstanceRunning
	case scalegroup.StateFailed:
		r.State = contract.InstanceFailed
		r.FailureReason = ptr.To(infrav1.InstanceFailedReason)
		r.FailureMessage = ptr.To(orDefault(in.Message, "The cloud reports the instance as failed"))
	case scalegroup.StateDeleting:
		r.State = contract.InstanceDeleting
	default:
		r.State = contract.InstancePending
	}
	if e.removalStarted(s, in.ID) {
		r.State = contract.InstanceDeleting
	}
	if node := s.nodes[in.ProviderID]; node != nil {
		r.NodeRef = &corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}
		r.Version = node.Status.NodeInfo.KubeletVersion
		r.Ready = r.State == contract.InstanceRunning && preview.NodeReadySince(node) != nil
	}
	return r
}

// removalStarted reports whether the removal of instance id started: the
// engine marked it, or its per-instance object is being deleted. A removal
// this pass ended (an undrainable instance kept) has not: the object read
// at the start of the pass still carries the drain-started annotation the
// pass removed, and reporting the instance Deleting from it would leave
// that in its status until something else wakes the pool.
func (e *Engine) removalStarted(s *pass, id string) bool {
	if _, ok := s.removing[id]; ok {
		return true
	}
	obj := s.objects[id]
	if s.kept[id] {
		return obj != nil && !obj.GetDeletionTimestamp().IsZero()
	}
	if _, ok := e.removalStart(s, id); ok {
		return true
	}
	return obj != nil && !obj.GetDeletionTimestamp().IsZero()
}

// createInstanceObject creates the per-instance object of in and writes its
// status (rep) from the create's answer. An object without a status reports no
// status.latestModelApplied, and the MachinePool's UpToDate condition turned
// Unknown ("n of n machines do not report ...") for every new object and
// True again once the next reconcile wrote its status: two more writes of
// the MachinePool's status per batch of creates. An object the cache has
// not shown yet already exists: fine.
func (e *Engine) createInstanceObject(ctx context.Context, s *pass, in scalegroup.Instance, rep contract.InstanceReport) error {
	obj := e.a.NewInstance()
	obj.SetNamespace(s.pool.GetNamespace())
	obj.SetName(contract.InstanceObjectName(s.pool.GetName(), in.ID))
	labels := map[string]string{clusterv1.MachinePoolNameLabel: capi.LabelValue(s.owner.Name)}
	if s.owner.Spec.ClusterName != "" {
		labels[clusterv1.ClusterNameLabel] = capi.LabelValue(s.owner.Spec.ClusterName)
	}
	if zone, ok := zoneLabel(in.Zone); ok {
		labels[contract.ZoneLabel] = zone
	}
	obj.SetLabels(labels)
	if t, ok := s.removing[in.ID]; ok {
		obj.SetAnnotations(map[string]string{preview.DrainStartedAnnotation: t.UTC().Format(time.RFC3339)})
	}
	gvk, err := e.ownerGVK(s.pool)
	if err != nil {
		return fmt.Errorf("owning %s %s: %w", e.a.Kinds().Instance, obj.GetName(), err)
	}
	obj.SetOwnerReferences([]metav1.OwnerReference{contract.PoolOwnerReference(s.pool, gvk)})
	controllerutil.AddFinalizer(obj, e.a.Kinds().InstanceFinalizer)
	e.a.WriteInstanceSpec(obj, in.ID, in.ProviderID)
	if err := e.c.Create(ctx, obj); err != nil {
		if kerrors.IsAlreadyExists(err) {
			return nil
		}
		return fmt.Errorf("creating %s %s: %w", e.a.Kinds().Instance, obj.GetName(), err)
	}
	e.written.Wrote(instanceCreateKey(s, in.ID), "", obj)
	if w := e.instanceStatusPatch(s, obj, rep); w != nil {
		return w(ctx)
	}
	return nil
}

// ownerGVK is the kind and version a per-instance object's owner
// reference names its pool by: the version the API group prefers, which is
// the one the garbage collector watches the pool at. A reference to another
// served version is correct too, but the collector cannot tell that from
// its graph: it checks every such object with two GETs, the object's and
// the pool's (AWSMachinePool, served as mpool's v1beta1 and CAPA's v1beta2,
// cost that for every AWS instance). The scheme's version is the answer
// when the API server's discovery cannot be read.
func (e *Engine) ownerGVK(pool contract.Pool) (schema.GroupVersionKind, error) {
	gvk, err := apiutil.GVKForObject(pool, e.c.Scheme())
	if err != nil {
		return gvk, err
	}
	if m, err := e.c.RESTMapper().RESTMapping(gvk.GroupKind()); err == nil {
		return m.GroupVersionKind, nil
	}
	return gvk, nil
}

// instanceCreateKey is the key of the create of the per-instance object of
// instance id in Engine.written.
func instanceCreateKey(s *pass, id string) lastwrite.Key {
	return lastwrite.Key{UID: s.pool.GetUID(), Part: "create " + id}
}

// zoneLabel is the value of contract.ZoneLabel for an instance in zone,
// false when the zone is unknown or is no valid label value.
func zoneLabel(zone string) (string, bool) {
	if zone == "" || len(validation.IsValidLabelValue(zone)) > 0 {
		return "", false
	}
	return zone, true
}

// zoneLabelPatch returns the write that labels obj with its instance's
// zone (contract.ZoneLabel), nil when it carries it already: objects the
// engine created before it labelled them get the label once.
func (e *Engine) zoneLabelPatch(obj contract.InstanceObject, in scalegroup.Instance) func(context.Context) error {
	zone, ok := zoneLabel(in.Zone)
	if !ok || obj.GetLabels()[contract.ZoneLabel] == zone {
		return nil
	}
	return func(ctx context.Context) error {
		return e.patchInstanceMeta(ctx, obj, "labelling the zone of", func(after contract.InstanceObject) {
			after.SetLabels(withEntry(after.GetLabels(), contract.ZoneLabel, zone))
		})
	}
}

// ownerPatch returns the write that turns the controller reference to the
// pool, which objects created by earlier versions carry, into the plain
// owner reference contract.PoolOwner describes (so that Cluster API's
// Machine controller can control the object), nil when there is none.
func (e *Engine) ownerPatch(obj contract.InstanceObject) func(context.Context) error {
	ref := contract.PoolOwner(obj, e.a.Kinds().Pool)
	if ref == nil || !ptr.Deref(ref.Controller, false) {
		return nil
	}
	return func(ctx context.Context) error {
		return e.patchInstanceMeta(ctx, obj, "releasing the controller reference of", func(after contract.InstanceObject) {
			refs := slices.Clone(after.GetOwnerReferences())
			for i := range refs {
				if refs[i].UID == ref.UID {
					refs[i].Controller = nil
				}
			}
			after.SetOwnerReferences(refs)
		})
	}
}

// patchInstanceMeta merge-patches the metadata of the per-instance object
// obj (the cache's, never modified) as mutate changes a copy of it; what
// says what the write does, for its error ("removing the finalizer of").
// An object already gone is not an error.
func (e *Engine) patchInstanceMeta(ctx context.Context, obj contract.InstanceObject, what string, mutate func(contract.InstanceObject)) error {
	after := obj.DeepCopyObject().(contract.InstanceObject)
	mutate(after)
	if err := e.c.Patch(ctx, after, client.MergeFrom(obj)); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("%s %s %s: %w", what, e.a.Kinds().Instance, obj.GetName(), err)
	}
	return nil
}

// withEntry returns m with key set to value: a copy, so that a map shared
// with the cache is never written.
func withEntry(m map[string]string, key, value string) map[string]string {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]string{}
	}
	out[key] = value
	return out
}

// statusKey names the engine's status patches of obj in Engine.written.
func statusKey(obj contract.InstanceObject) lastwrite.Key {
	return lastwrite.Key{UID: obj.GetUID(), Part: "status"}
}

// statusBase is the status obj is taken to have: while the cache has not
// shown the engine's last status patch of it, that patch's answer, as if it
// had (the same status is not written again); otherwise obj.
func (e *Engine) statusBase(obj contract.InstanceObject) contract.InstanceObject {
	if last, ok := e.written.Latest(statusKey(obj), obj.GetResourceVersion()).(contract.InstanceObject); ok {
		return last
	}
	return obj
}

// instanceStatusPatch returns the write that brings obj's status to rep, nil
// when it already matches. obj is the cache's: the desired status is built
// on a shallow copy of its status (the adapter assigns fields, the
// conditions are cloned), and the object is deep-copied only when it must be
// patched. While the cache has not shown the engine's last status patch of
// obj, the patch's answer stands for obj (Engine.written).
func (e *Engine) instanceStatusPatch(s *pass, obj contract.InstanceObject, rep contract.InstanceReport) func(context.Context) error {
	key := statusKey(obj)
	obj = e.statusBase(obj)
	want := e.a.NewInstance()
	copyField(want, obj, "Status")
	e.a.WriteInstanceStatus(want, rep)
	conds := slices.Clone(obj.GetConditions())
	setInstanceConditions(&conds, s, rep, obj.GetGeneration())
	want.SetConditions(conds)
	if equalField(obj, want, "Status") {
		return nil
	}
	before := obj
	after := obj.DeepCopyObject().(contract.InstanceObject)
	// A deep copy: want's status shares the cache's memory, and the
	// patch's answer is decoded into after.
	copyField(after, want.DeepCopyObject().(client.Object), "Status")
	return func(ctx context.Context) error {
		switch sent, err := mergePatch(ctx, e.c, after, before, true); {
		case err == nil && sent:
			e.written.Wrote(key, before.GetResourceVersion(), after)
		case err != nil && !kerrors.IsNotFound(err):
			return fmt.Errorf("updating the status of %s %s: %w", e.a.Kinds().Instance, obj.GetName(), err)
		}
		return nil
	}
}

// setInstanceConditions sets the conditions the engine owns on a
// per-instance object.
func setInstanceConditions(conds *[]metav1.Condition, s *pass, rep contract.InstanceReport, generation int64) {
	c := metav1.Condition{Type: infrav1.InstanceReadyCondition, ObservedGeneration: generation, LastTransitionTime: metav1.NewTime(s.now)}
	switch {
	case rep.JoinTimedOut:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1.NodeStartupTimeoutReason, notJoinedText(s.joinTimeout, rep.InstanceID, rep.Message)
	case rep.Ready:
		c.Status, c.Reason = metav1.ConditionTrue, clusterv1.ReadyReason
	case rep.State == contract.InstanceDeleting:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, clusterv1.DeletingReason, "The instance is being drained and deleted"
	case rep.State == contract.InstanceFailed:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1.InstanceFailedReason, ptr.Deref(rep.FailureMessage, "")
	case rep.State == contract.InstancePending || rep.State == contract.InstanceBooting:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1.InstanceProvisioningReason, "The instance is "+string(rep.State)
	case rep.NodeRef == nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1.WaitingForNodeReason, "The instance runs; its Node has not joined yet"
		if rep.Message != "" {
			c.Message += ": " + rep.Message
		}
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1.NodeNotReadyReason, "Node "+rep.NodeRef.Name+" is not Ready"
	}
	meta.SetStatusCondition(conds, c)

	d, ok := s.drains[rep.InstanceID]
	if !ok {
		return
	}
	c = metav1.Condition{Type: infrav1.DrainingSucceededCondition, ObservedGeneration: generation, LastTransitionTime: metav1.NewTime(s.now)}
	switch {
	case d.err != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1.DrainingFailedReason, d.err.Error()
	case d.result.Done:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, infrav1.DrainedReason, d.result.Message()
	case d.result.TimedOut:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1.DrainTimeoutReason, d.result.Message()
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, infrav1.DrainingReason, d.result.Message()
	}
	meta.SetStatusCondition(conds, c)
}

// releaseInstanceObject finishes a per-instance object whose instance is
// gone: its Node is deleted, then the Machine that controls it (if any),
// then its finalizer removed and the object deleted. Each step is done
// before the one that would lose track of it: a manager stopped between two
// steps finds the object again on its next reconcile and goes on, where
// deleting the object before its Machine left the Machine behind for good
// (nothing names it once the object is gone). Unless force is set, it waits
// while the workload cluster's Nodes are unknown, so that the Node is not
// leaked.
func (e *Engine) releaseInstanceObject(ctx context.Context, s *pass, obj contract.InstanceObject, force bool) error {
	if s.nodesKnown {
		if node := s.nodes[e.a.ReadInstance(obj).ProviderID]; node != nil {
			if err := e.deleteWorkloadNode(ctx, s, node); err != nil {
				return err
			}
		}
	} else if !force {
		return nil
	}
	if err := e.deleteMachineOf(ctx, obj); err != nil {
		return err
	}
	if controllerutil.ContainsFinalizer(obj, e.a.Kinds().InstanceFinalizer) {
		if err := e.patchInstanceMeta(ctx, obj, "removing the finalizer of", func(after contract.InstanceObject) {
			controllerutil.RemoveFinalizer(after, e.a.Kinds().InstanceFinalizer)
		}); err != nil {
			return err
		}
	}
	if obj.GetDeletionTimestamp().IsZero() {
		if err := e.c.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting %s %s: %w", e.a.Kinds().Instance, obj.GetName(), err)
		}
	}
	return nil
}

// deleteMachineOf deletes the Machine that controls obj, if any: under
// Cluster API's own MachinePool controller (ModeProviders) each
// per-instance object has a Machine that controls it, and Cluster API
// leaves deleting it to the infrastructure provider once the instance is
// gone (as CAPA and CAPZ do), so that no Machine outlives its instance.
// mpool's own MachinePool controller removes such Machines itself.
func (e *Engine) deleteMachineOf(ctx context.Context, obj contract.InstanceObject) error {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil || ref.Kind != "Machine" {
		return nil
	}
	if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != clusterv1.GroupVersion.Group {
		return nil
	}
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: ref.Name}}
	if err := e.c.Delete(ctx, m, client.Preconditions{UID: &ref.UID}); err != nil && !kerrors.IsNotFound(err) && !kerrors.IsConflict(err) {
		return fmt.Errorf("deleting Machine %s of %s %s: %w", ref.Name, e.a.Kinds().Instance, obj.GetName(), err)
	}
	return nil
}

// deleteWorkloadNode deletes a Node of the pool's workload cluster, unless
// this process deleted it a moment ago (workload.NodeDeletes): the cache
// shows a deleted Node until its watch event arrives.
func (e *Engine) deleteWorkloadNode(ctx context.Context, s *pass, node *corev1.Node) error {
	return e.nodeDeletes.Delete(node, func() error {
		cs, err := e.clientsets.get(ctx, s.cluster)
		if err != nil {
			return fmt.Errorf("deleting Node %s: %w", node.Name, err)
		}
		return deleteNode(ctx, cs, node.Name)
	})
}

// notJoinedMessage says that inst has not joined within the join timeout
// and is replaced, with what the cloud says about it.
func notJoinedMessage(s *pass, inst scalegroup.Instance) string {
	return notJoinedText(s.joinTimeout, inst.ID, inst.Message)
}

func notJoinedText(timeout time.Duration, id, cloudMessage string) string {
	msg := fmt.Sprintf("Instance %s has no Node in the workload cluster %s after its creation; deleting it so that the group creates a fresh one with the current bootstrap data", id, timeout)
	if cloudMessage != "" {
		msg += ". The cloud says: " + cloudMessage
	}
	return msg
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
