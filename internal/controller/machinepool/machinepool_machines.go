package machinepool

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/api/conditions"
	"github.com/mpool-dev/mpool/internal/capi"
	"github.com/mpool-dev/mpool/internal/condition"
	"github.com/mpool-dev/mpool/internal/events"
	"github.com/mpool-dev/mpool/internal/lastwrite"
)

// reconcileMachines keeps one Machine per infrastructure machine when the
// infrastructure pool reports status.infrastructureMachineKind, and finishes
// the deletion of pool Machines (deleting their infrastructure machines).
// Its writes run once the pool's status is written (writeAfterStatus). The
// creates, and the syncs of Machines not marked for deletion, are bulk
// writes (package priority): a reconcile that may not do them now
// (scope.bulkLater) leaves them to one at low priority (scope.bulkDeferred).
func (r *Reconciler) reconcileMachines(ctx context.Context, s *scope) (ctrl.Result, error) {
	machines, err := r.listPoolMachines(ctx, s.pool)
	if err != nil {
		return ctrl.Result{}, err
	}
	if s.infraMachineKind == "" || s.infra.obj == nil {
		// No per-instance objects (or the infra pool could not be read):
		// only finish deletions already under way.
		s.writeAfterStatus(r.finalizeMachines(s, machines))
		return ctrl.Result{}, nil
	}

	apiVersion := s.infra.obj.GetAPIVersion()
	if err := r.ensureMachineWatch(ctx, apiVersion, s.infraMachineKind); err != nil {
		return ctrl.Result{}, err
	}
	infraMachines, err := r.listInfraMachines(ctx, s.pool, apiVersion, s.infraMachineKind)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.machinesKnown = true

	byName := make(map[string]*clusterv1.Machine, len(machines))
	for i := range machines {
		byName[machines[i].Name] = &machines[i]
	}
	infraByName := make(map[string]*unstructured.Unstructured, len(infraMachines))
	var creates, syncs, marked []write
	for i := range infraMachines {
		im := &infraMachines[i]
		infraByName[im.GetName()] = im
		s.countModel(im)
		m := byName[im.GetName()]
		switch {
		case m == nil && im.GetDeletionTimestamp() == nil:
			if r.written.Pending(machineCreateKey(im), "") {
				continue // created: the cache has not shown it yet
			}
			creates = append(creates, func(ctx context.Context) error { return r.createMachine(ctx, s, im) })
		case m != nil:
			r.written.Forget(machineCreateKey(im))
			if !m.DeletionTimestamp.IsZero() {
				continue
			}
			w := r.syncMachine(s, m, im)
			_, deleteMarked := m.Annotations[clusterv1.DeleteMachineAnnotation]
			switch {
			case w == nil:
			case deleteMarked: // a scale-down may be waiting for it
				marked = append(marked, w)
			default:
				syncs = append(syncs, w)
			}
		}
	}

	// Machines whose infrastructure machine is gone go too.
	var deletes []write
	for i := range machines {
		m := &machines[i]
		if _, ok := infraByName[m.Name]; ok || !m.DeletionTimestamp.IsZero() {
			continue
		}
		deletes = append(deletes, func(ctx context.Context) error {
			if _, err := r.getInfraMachine(ctx, m); err == nil || !apierrors.IsNotFound(err) {
				return nil // it exists but lost its labels, or it cannot be read: keep the Machine
			}
			if err := r.Client.Delete(ctx, m); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting Machine %s: %w", klog.KObj(m), err)
			}
			r.Recorder.Eventf(s.pool, nil, corev1.EventTypeNormal, events.MachineDeleted, events.ActionDelete, "Deleted Machine %s: its infrastructure machine is gone", m.Name)
			return nil
		})
	}
	if len(creates)+len(syncs) > 0 && s.bulkLater {
		s.bulkDeferred = true
		creates, syncs = nil, nil
	}
	// Deletions first: they free capacity and finish what a rollout started.
	s.writeAfterStatus(slices.Concat(r.finalizeMachines(s, machines), deletes, marked, creates, syncs))
	return ctrl.Result{}, nil
}

// countModel adds im to the pool's UpToDate tally.
func (s *scope) countModel(im *unstructured.Unstructured) {
	if im.GetDeletionTimestamp() != nil {
		return
	}
	s.machinesTotal++
	latest, found, err := nestedBool(im, "status", "latestModelApplied")
	switch {
	case err != nil || !found:
		s.machinesUnknown++
	case !latest:
		s.machinesNotUpToDate++
	}
}

// listPoolMachines lists the Machines labelled as belonging to pool. They
// are the cache's own objects, not copies (a pool of 10,000 copied them all
// on every reconcile): read them, and deep-copy one before changing it.
func (r *Reconciler) listPoolMachines(ctx context.Context, pool *clusterv1.MachinePool) ([]clusterv1.Machine, error) {
	list := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, list, client.InNamespace(pool.Namespace), r.members(pool, ""), client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing the Machines of MachinePool %s: %w", klog.KObj(pool), err)
	}
	return list.Items, nil
}

// listInfraMachines lists the infrastructure machines of pool. They are the
// cache's own objects, not copies (ten thousand of them are tens of MiB per
// list): read them, never modify them.
func (r *Reconciler) listInfraMachines(ctx context.Context, pool *clusterv1.MachinePool, apiVersion, kind string) ([]unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(apiVersion)
	list.SetKind(kind + "List")
	if err := r.reader().List(ctx, list, client.InNamespace(pool.Namespace), r.members(pool, apiVersion+"/"+kind), client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing the %s objects of MachinePool %s: %w", kind, klog.KObj(pool), err)
	}
	return list.Items, nil
}

// members selects pool's members among the Machines (kind "") or the
// infrastructure machines of kind ("<apiVersion>/<kind>"): by
// IndexPoolMember where it is registered, else by their labels.
func (r *Reconciler) members(pool *clusterv1.MachinePool, kind string) client.ListOption {
	indexed := r.fieldIndexer != nil
	if kind != "" {
		r.watchMu.Lock()
		indexed = r.indexed[kind]
		r.watchMu.Unlock()
	}
	if indexed {
		return client.MatchingFields{IndexPoolMember: poolMemberKey(pool)}
	}
	return client.MatchingLabels(poolLabels(pool))
}

func poolLabels(pool *clusterv1.MachinePool) map[string]string {
	return map[string]string{
		clusterv1.MachinePoolNameLabel: capi.LabelValue(pool.Name),
		clusterv1.ClusterNameLabel:     capi.LabelValue(pool.Spec.ClusterName),
	}
}

// getInfraMachine reads the infrastructure machine of m.
func (r *Reconciler) getInfraMachine(ctx context.Context, m *clusterv1.Machine) (*unstructured.Unstructured, error) {
	apiVersion, err := r.refAPIVersion(ctx, m.Spec.InfrastructureRef)
	if err != nil {
		return nil, err
	}
	return r.getExternal(ctx, apiVersion, m.Spec.InfrastructureRef, m.Namespace)
}

// poolMemberIndex is IndexPoolMember's function: the key of an object that
// carries both the cluster-name and the pool-name label.
func poolMemberIndex(o client.Object) []string {
	labels := o.GetLabels()
	pool, ok1 := labels[clusterv1.MachinePoolNameLabel]
	cluster, ok2 := labels[clusterv1.ClusterNameLabel]
	if !ok1 || !ok2 {
		return nil
	}
	return []string{cluster + "/" + pool}
}

// poolMemberKey is the IndexPoolMember key of pool's members: the values of
// the labels poolLabels gives them.
func poolMemberKey(pool *clusterv1.MachinePool) string {
	return capi.LabelValue(pool.Spec.ClusterName) + "/" + capi.LabelValue(pool.Name)
}

// desiredMachine is the Machine that mirrors infrastructure machine im.
func desiredMachine(pool *clusterv1.MachinePool, im *unstructured.Unstructured) *clusterv1.Machine {
	labels := maps.Clone(pool.Spec.Template.ObjectMeta.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, poolLabels(pool))
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{
			Name:            im.GetName(),
			Namespace:       pool.Namespace,
			Labels:          labels,
			Annotations:     maps.Clone(pool.Spec.Template.ObjectMeta.Annotations),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(pool, clusterv1.GroupVersion.WithKind("MachinePool"))},
			Finalizers:      []string{clusterv1.MachineFinalizer},
		},
		Spec: clusterv1.MachineSpec{
			ClusterName: pool.Spec.ClusterName,
			Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To(ptr.Deref(pool.Spec.Template.Spec.Bootstrap.DataSecretName, ""))},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: im.GroupVersionKind().Group, Kind: im.GetKind(), Name: im.GetName(),
			},
			Version:  pool.Spec.Template.Spec.Version,
			Deletion: clusterv1.MachineDeletionSpec{NodeDeletionTimeoutSeconds: pool.Spec.Template.Spec.Deletion.NodeDeletionTimeoutSeconds},
		},
	}
	if id, _, _ := nestedString(im, "spec", "providerID"); id != "" {
		m.Spec.ProviderID = id
	}
	if fd, _, _ := nestedString(im, "spec", "failureDomain"); fd != "" {
		m.Spec.FailureDomain = fd
	}
	return m
}

// machineCreateKey is the key of the create of the Machine of
// infrastructure machine im in Reconciler.written.
func machineCreateKey(im *unstructured.Unstructured) lastwrite.Key {
	return lastwrite.Key{UID: im.GetUID(), Part: "Machine create"}
}

func (r *Reconciler) createMachine(ctx context.Context, s *scope, im *unstructured.Unstructured) error {
	m := desiredMachine(s.pool, im)
	if err := r.Client.Create(ctx, m); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil // the cache is behind; the next reconcile syncs it
		}
		return fmt.Errorf("creating Machine %s for %s %s: %w", m.Name, im.GetKind(), im.GetName(), err)
	}
	r.written.Wrote(machineCreateKey(im), "", m)
	ctrl.LoggerFrom(ctx).Info("Created a Machine for an infrastructure machine", "Machine", klog.KObj(m), "kind", im.GetKind())
	s.createdMu.Lock()
	s.created = append(s.created, m.Name)
	s.createdMu.Unlock()
	return nil
}

// maxNamesInEvent bounds the Machine names one event lists.
const maxNamesInEvent = 5

// reportCreatedMachines records one event for the Machines the reconcile
// created, naming the first few: an event per Machine was most of a small
// pool's events and a tenth of its API requests, and the event recorder
// drops a burst of them from one pool anyway.
func (r *Reconciler) reportCreatedMachines(s *scope) {
	s.createdMu.Lock()
	names := s.created
	s.created = nil
	s.createdMu.Unlock()
	if len(names) == 0 {
		return
	}
	slices.Sort(names)
	kind := "an infrastructure machine"
	if s.infraMachineKind != "" {
		kind = s.infraMachineKind
	}
	if len(names) == 1 {
		r.Recorder.Eventf(s.pool, nil, corev1.EventTypeNormal, events.MachineCreated, events.ActionCreate, "Created Machine %s for its %s", names[0], kind)
		return
	}
	list := strings.Join(names[:min(len(names), maxNamesInEvent)], ", ")
	if more := len(names) - maxNamesInEvent; more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	r.Recorder.Eventf(s.pool, nil, corev1.EventTypeNormal, events.MachineCreated, events.ActionCreate, "Created %d Machines, one for each new %s: %s", len(names), kind, list)
}

// syncMachine returns the writes that bring an existing pool Machine in
// line with its infrastructure machine — metadata and spec, status, and the
// delete-machine annotation (carried to the infrastructure machine) — or nil
// when it is in line.
func (r *Reconciler) syncMachine(s *scope, m *clusterv1.Machine, im *unstructured.Unstructured) write {
	statusKey := lastwrite.Key{UID: m.UID, Part: "Machine status"}
	if last, ok := r.written.Latest(statusKey, m.ResourceVersion).(*clusterv1.Machine); ok {
		// The cache has not shown this controller's last status patch:
		// work from its answer, as if it had (the same status is not
		// written again, a new one is locked on the answer's version).
		m = last
	}
	cachedRV := m.ResourceVersion
	want := desiredMachine(s.pool, im)
	updated := m.DeepCopy()
	if updated.Labels == nil {
		updated.Labels = map[string]string{}
	}
	maps.Copy(updated.Labels, want.Labels)
	if len(want.Annotations) > 0 {
		if updated.Annotations == nil {
			updated.Annotations = map[string]string{}
		}
		maps.Copy(updated.Annotations, want.Annotations)
	}
	refs, refErr := withControllerRef(updated.OwnerReferences, s.pool)
	if refErr != nil {
		return func(context.Context) error { return fmt.Errorf("Machine %s: %w", klog.KObj(m), refErr) }
	}
	updated.OwnerReferences = refs
	controllerutil.AddFinalizer(updated, clusterv1.MachineFinalizer)
	updated.Spec.InfrastructureRef = want.Spec.InfrastructureRef
	updated.Spec.Version = want.Spec.Version
	updated.Spec.Deletion.NodeDeletionTimeoutSeconds = want.Spec.Deletion.NodeDeletionTimeoutSeconds
	if want.Spec.ProviderID != "" {
		updated.Spec.ProviderID = want.Spec.ProviderID
	}
	if want.Spec.FailureDomain != "" {
		updated.Spec.FailureDomain = want.Spec.FailureDomain
	}
	if !updated.Spec.Bootstrap.ConfigRef.IsDefined() {
		updated.Spec.Bootstrap.DataSecretName = want.Spec.Bootstrap.DataSecretName
	}
	r.setMachineStatus(s, updated, im)

	patchSpec := !equality.Semantic.DeepEqual(m.ObjectMeta, updated.ObjectMeta) || !equality.Semantic.DeepEqual(m.Spec, updated.Spec)
	patchStatus := !equality.Semantic.DeepEqual(m.Status, updated.Status)
	mark, marked := m.Annotations[clusterv1.DeleteMachineAnnotation]
	carried, ok := im.GetAnnotations()[clusterv1.DeleteMachineAnnotation]
	carry := marked && (!ok || carried != mark)
	if !patchSpec && !patchStatus && !carry {
		return nil
	}
	return func(ctx context.Context) error {
		var errs []error
		if patchSpec {
			patched := updated.DeepCopy()
			patched.Status = *m.Status.DeepCopy()
			if err := r.Client.Patch(ctx, patched, client.MergeFrom(m)); err != nil {
				errs = append(errs, fmt.Errorf("patching Machine %s: %w", klog.KObj(m), err))
			} else {
				updated.ResourceVersion = patched.ResourceVersion // the status patch below is locked on it
			}
		}
		if patchStatus {
			base := m.DeepCopy()
			base.ObjectMeta = *updated.ObjectMeta.DeepCopy()
			base.Spec = *updated.Spec.DeepCopy()
			answer := updated.DeepCopy()
			if err := r.Client.Status().Patch(ctx, answer,
				client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
				errs = append(errs, fmt.Errorf("patching the status of Machine %s: %w", klog.KObj(m), err))
			} else {
				r.written.Wrote(statusKey, cachedRV, answer)
			}
		}
		if carry {
			if err := r.carryDeleteAnnotation(ctx, m, im); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
}

// carryDeleteAnnotation sets the delete-machine annotation of m on im.
func (r *Reconciler) carryDeleteAnnotation(ctx context.Context, m *clusterv1.Machine, im *unstructured.Unstructured) error {
	v := m.Annotations[clusterv1.DeleteMachineAnnotation]
	if got, ok := im.GetAnnotations()[clusterv1.DeleteMachineAnnotation]; ok && got == v {
		return nil
	}
	orig := im.DeepCopy()
	patched := im.DeepCopy()
	a := maps.Clone(patched.GetAnnotations())
	if a == nil {
		a = map[string]string{}
	}
	a[clusterv1.DeleteMachineAnnotation] = v
	patched.SetAnnotations(a)
	if err := r.Client.Patch(ctx, patched, client.MergeFrom(orig)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("marking %s %s for deletion: %w", im.GetKind(), im.GetName(), err)
	}
	return nil
}

// setMachineStatus sets the status of pool Machine m from its
// infrastructure machine and its Node.
func (r *Reconciler) setMachineStatus(s *scope, m *clusterv1.Machine, im *unstructured.Unstructured) {
	now := s.now
	gen := m.Generation
	infraReady, _, _ := nestedBool(im, "status", "ready")
	m.Status.Initialization.InfrastructureProvisioned = ptr.To(infraReady)
	m.Status.Initialization.BootstrapDataSecretCreated = ptr.To(s.bootstrapReady)
	m.Status.ObservedGeneration = gen
	if s.nodesKnown {
		m.Status.NodeRef = clusterv1.MachineNodeReference{}
		if n := s.nodes[m.Spec.ProviderID]; n != nil {
			m.Status.NodeRef = clusterv1.MachineNodeReference{Name: n.Name}
			if n.Status.NodeInfo.KubeletVersion != "" {
				m.Status.NodeInfo = &corev1.NodeSystemInfo{KubeletVersion: n.Status.NodeInfo.KubeletVersion}
			}
		}
	}
	switch {
	case m.Status.NodeRef.IsDefined():
		m.Status.Phase = string(clusterv1.MachinePhaseRunning)
	case infraReady:
		m.Status.Phase = string(clusterv1.MachinePhaseProvisioned)
	default:
		m.Status.Phase = string(clusterv1.MachinePhaseProvisioning)
	}

	if infraReady {
		condition.Set(m, condition.New(clusterv1.InfrastructureReadyCondition, metav1.ConditionTrue, clusterv1.ReadyReason, "", gen), now)
	} else {
		condition.Set(m, condition.New(clusterv1.InfrastructureReadyCondition, metav1.ConditionFalse, conditions.WaitingForInfrastructureReason,
			fmt.Sprintf("%s %s is not ready", im.GetKind(), im.GetName()), gen), now)
	}
	setMachineReadiness(s, m, infraReady, now)
	latest, found, err := nestedBool(im, "status", "latestModelApplied")
	switch {
	case err != nil:
		condition.Set(m, condition.New(conditions.UpToDateCondition, metav1.ConditionUnknown, conditions.UpToDateUnknownReason, err.Error(), gen), now)
	case !found:
		condition.Set(m, condition.New(conditions.UpToDateCondition, metav1.ConditionUnknown, conditions.UpToDateUnknownReason,
			fmt.Sprintf("%s %s does not report status.latestModelApplied", im.GetKind(), im.GetName()), gen), now)
	case latest:
		condition.Set(m, condition.New(conditions.UpToDateCondition, metav1.ConditionTrue, conditions.UpToDateReason, "", gen), now)
	default:
		condition.Set(m, condition.New(conditions.UpToDateCondition, metav1.ConditionFalse, conditions.NotUpToDateReason,
			fmt.Sprintf("%s %s does not run the pool's latest model", im.GetKind(), im.GetName()), gen), now)
	}
}

// finalizeMachines returns the writes that finish the deletion of pool
// Machines: the infrastructure machine is deleted first, then the finalizer
// removed.
func (r *Reconciler) finalizeMachines(s *scope, machines []clusterv1.Machine) []write {
	var writes []write
	for i := range machines {
		m := &machines[i]
		if m.DeletionTimestamp.IsZero() || !controllerutil.ContainsFinalizer(m, clusterv1.MachineFinalizer) {
			continue
		}
		writes = append(writes, func(ctx context.Context) error { return r.finalizeMachine(ctx, s, m) })
	}
	return writes
}

func (r *Reconciler) finalizeMachine(ctx context.Context, s *scope, m *clusterv1.Machine) error {
	im, err := r.getInfraMachine(ctx, m)
	switch {
	case err == nil:
		if im.GetDeletionTimestamp() != nil {
			return nil // being deleted: its delete event brings the pool back
		}
		if _, marked := m.Annotations[clusterv1.DeleteMachineAnnotation]; marked {
			if err := r.carryDeleteAnnotation(ctx, m, im); err != nil {
				return err
			}
		}
		if err := r.Client.Delete(ctx, im); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s %s of Machine %s: %w", im.GetKind(), im.GetName(), klog.KObj(m), err)
		}
		ctrl.LoggerFrom(ctx).Info("Deleted the infrastructure machine of a deleted Machine", "Machine", klog.KObj(m), "kind", im.GetKind())
		r.Recorder.Eventf(s.pool, nil, corev1.EventTypeNormal, events.InfrastructureMachineDeleted, events.ActionDelete,
			"Deleted %s %s of deleted Machine %s", im.GetKind(), im.GetName(), m.Name)
		return nil
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("reading the infrastructure machine of Machine %s: %w", klog.KObj(m), err)
	}
	orig := m // the cache's own object: patch a copy
	m = m.DeepCopy()
	controllerutil.RemoveFinalizer(m, clusterv1.MachineFinalizer)
	if err := r.Client.Patch(ctx, m, client.MergeFrom(orig)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing the finalizer of Machine %s: %w", klog.KObj(m), err)
	}
	r.Recorder.Eventf(s.pool, nil, corev1.EventTypeNormal, events.MachineDeleted, events.ActionDelete, "Machine %s deleted with its infrastructure machine", m.Name)
	return nil
}

// setMachineReadiness sets the readiness conditions upstream's Machine
// controller sets and clusterctl shows: NodeReady from the Machine's Node,
// Ready when the infrastructure, the bootstrap data and the Node are ready
// and the Machine is not being deleted, and Available when it has been Ready
// for the pool's minReadySeconds.
func setMachineReadiness(s *scope, m *clusterv1.Machine, infraReady bool, now time.Time) {
	gen := m.Generation
	if !s.nodesKnown {
		return // the workload cluster was not read: keep what is known
	}
	var since time.Time
	nodeReady := false
	n := s.nodes[m.Spec.ProviderID]
	switch {
	case n == nil:
		condition.Set(m, condition.New(clusterv1.MachineNodeReadyCondition, metav1.ConditionFalse, clusterv1.MachineNodeDoesNotExistReason,
			"Waiting for the instance's Node to register", gen), now)
	default:
		since, nodeReady = readySince(n)
		if nodeReady {
			condition.Set(m, condition.New(clusterv1.MachineNodeReadyCondition, metav1.ConditionTrue, clusterv1.MachineNodeReadyReason, "", gen), now)
		} else {
			condition.Set(m, condition.New(clusterv1.MachineNodeReadyCondition, metav1.ConditionFalse, clusterv1.MachineNodeNotReadyReason,
				fmt.Sprintf("Node %s is not Ready", n.Name), gen), now)
		}
	}
	var why string
	switch {
	case !m.DeletionTimestamp.IsZero():
		why = "The Machine is being deleted"
	case !infraReady:
		why = "The infrastructure machine is not ready"
	case !s.bootstrapReady:
		why = "The bootstrap data is not ready"
	case !nodeReady:
		why = "The Node is not Ready"
	}
	if why != "" {
		condition.Set(m, condition.New(clusterv1.MachineReadyCondition, metav1.ConditionFalse, clusterv1.MachineNotReadyReason, why, gen), now)
		condition.Set(m, condition.New(clusterv1.MachineAvailableCondition, metav1.ConditionFalse, clusterv1.MachineNotReadyReason, why, gen), now)
		return
	}
	condition.Set(m, condition.New(clusterv1.MachineReadyCondition, metav1.ConditionTrue, clusterv1.MachineReadyReason, "", gen), now)
	if wait := minReady(s.pool.Spec.Template.Spec.MinReadySeconds); now.Before(since.Add(wait)) {
		condition.Set(m, condition.New(clusterv1.MachineAvailableCondition, metav1.ConditionFalse, clusterv1.MachineWaitingForMinReadySecondsReason,
			fmt.Sprintf("Ready for less than %s", wait), gen), now)
		return
	}
	condition.Set(m, condition.New(clusterv1.MachineAvailableCondition, metav1.ConditionTrue, clusterv1.MachineAvailableReason, "", gen), now)
}
