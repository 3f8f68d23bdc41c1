package infrapool

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/internal/capi"
	"github.com/mpool-dev/mpool/internal/events"
	"github.com/mpool-dev/mpool/internal/preview"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// BootstrapDataKey is the key of the bootstrap data in the Secret named by a
// MachinePool's spec.template.spec.bootstrap.dataSecretName.
const BootstrapDataKey = "value"

// observe reads everything a plan is made from: the owner MachinePool and its
// bootstrap data, the group (one ScaleGroup.Get), the per-instance objects,
// their Machines and the instances' Nodes.
func (e *Engine) observe(ctx context.Context, s *pass) error {
	owner, err := e.ownerOf(ctx, s.pool)
	if err != nil {
		return err
	}
	if owner == nil {
		log.FromContext(ctx).V(1).Info("Waiting for the owner MachinePool to set an ownerReference")
		s.halt = true
		if age := s.now.Sub(s.pool.GetCreationTimestamp().Time); age >= 0 && age < ownerQuiet && len(s.pool.GetConditions()) == 0 {
			s.quiet = true
			s.requeueAfter(ownerQuiet - age)
		}
		return nil
	}
	s.cluster = types.NamespacedName{Namespace: owner.Namespace, Name: owner.Spec.ClusterName}
	if err := e.readInfraCluster(ctx, s); err != nil || s.halt {
		return err
	}
	if err := e.readOwner(ctx, s, owner); err != nil {
		return err
	}
	if s.halt {
		return nil
	}
	e.recordRevision(ctx, s)
	if err := e.resolveRef(ctx, s); err != nil || s.halt {
		return err
	}
	if err := e.storeBeforeCloud(ctx, s); err != nil {
		return err
	}
	if err := e.observeCloud(ctx, s); err != nil || s.halt {
		return err
	}
	e.externalReplicas(s)
	return e.observeObjects(ctx, s)
}

// ownerQuiet is how long a new pool that never reported waits for its owner
// MachinePool's ownerReference without writing its status. Cluster API's
// MachinePool controller sets it moments after both are created, and the
// "waiting for the owner" status a pool wrote meanwhile was replaced a
// second later: a write of every pool's status, to no one's use, in a burst
// of new pools. A pool still without an owner after this says so.
const ownerQuiet = 10 * time.Second

// clusterPaused reports whether the Cluster of pool's owner MachinePool is
// paused: spec.paused, or the cluster.x-k8s.io/paused annotation, as the
// core controllers read it. A pool without an owner, or whose Cluster is
// gone, is not paused.
func (e *Engine) clusterPaused(ctx context.Context, pool contract.Pool) (bool, error) {
	owner, err := e.ownerOf(ctx, pool)
	if err != nil || owner == nil {
		return false, err
	}
	cluster := &clusterv1.Cluster{}
	err = e.c.Get(ctx, types.NamespacedName{Namespace: owner.Namespace, Name: owner.Spec.ClusterName}, cluster)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("reading Cluster %s: %w", owner.Spec.ClusterName, err)
	}
	return ptr.Deref(cluster.Spec.Paused, false) || preview.HasAnnotation(cluster.Annotations, clusterv1.PausedAnnotation), nil
}

// externalReplicas takes the desired replicas from the group when the
// MachinePool's replicas are managed by an external actor (Cluster API's
// cluster.x-k8s.io/replicas-managed-by, honoured as CAPZ and CAPA do): that
// actor scales the cloud's group itself, so the engine never changes the
// group's capacity from spec.replicas. The core MachinePool controller then
// copies the replicas the engine reports (status.replicas, the group's live
// instances) into spec.replicas.
//
// The replicas are the group's capacity, less what the engine itself added
// to it: while it surges to replace stale instances, or victims still
// drain, the capacity is above the replicas. The engine records the
// capacity it left the group at and the replicas it planned for
// (preview.ManagedCapacityAnnotation, and in memory while the cache lags): as long
// as the group still has that capacity the recorded replicas hold; any
// other capacity is the external actor's and becomes the replicas. Stale
// instances are still replaced, within maxSurge and maxUnavailable around
// those replicas. A group that does not exist yet is created with
// spec.replicas. The cloud sends no event when the actor scales the group:
// such a pool is looked at every Timing.ExternalReplicas.
func (e *Engine) externalReplicas(s *pass) {
	if !capi.ReplicasManagedExternally(s.owner) || s.cloud == nil {
		return
	}
	s.managedBy = s.owner.Annotations[clusterv1.ReplicasManagedByAnnotation]
	if s.managedBy == "" {
		s.managedBy = "an external autoscaler"
	}
	rec, ok := e.managed.get(s.pool.GetUID())
	if !ok {
		rec, ok = preview.ParseManagedCapacity(s.pool.GetAnnotations()[preview.ManagedCapacityAnnotation])
	}
	if ok && rec.Capacity == s.cloud.Capacity {
		s.replicas = rec.Replicas
	} else {
		s.replicas = s.cloud.Capacity
	}
	if r := s.desired.ReplicaRange; r != nil {
		s.replicas = min(max(s.replicas, r[0]), r[1])
	}
}

// readOwner fills the pass from the owner MachinePool and maps the pool
// through the adapter.
func (e *Engine) readOwner(ctx context.Context, s *pass, owner *clusterv1.MachinePool) error {
	s.owner = owner
	s.replicas = ptr.Deref(owner.Spec.Replicas, 1)
	s.paused = owner.Annotations[preview.RolloutPausedAnnotation] == "true" || s.pool.GetAnnotations()[preview.RolloutPausedAnnotation] == "true"

	data, err := e.bootstrapData(ctx, owner)
	if err != nil {
		return err
	}
	s.bootstrap = data != nil || e.a.Kinds().SelfBootstrapping
	d, err := e.a.Desired(s.pool, contract.Owner{MachinePool: owner, Version: owner.Spec.Template.Spec.Version, BootstrapData: data, InfraCluster: s.infra})
	if err != nil {
		s.invalid = fmt.Errorf("mapping the %s spec: %w", e.a.Kinds().Pool, err)
		s.halt = true
		return nil
	}
	if mrs := owner.Spec.Template.Spec.MinReadySeconds; mrs != nil {
		// The MachinePool's minReadySeconds wins over what the adapter
		// mapped from its own kind (AWS's refreshPreferences.instanceWarmup).
		d.Strategy.MinReadySeconds = *mrs
	}
	s.desired = d
	if s.modelHash, err = contract.ModelHash(d.Model); err == nil {
		s.specHash, err = specHash(d.Model, s.modelHash)
	}
	if err != nil {
		s.invalid = fmt.Errorf("hashing the %s model: %w", e.a.Kinds().Pool, err)
		s.halt = true
	}
	return nil
}

// observeCloud reads the group.
func (e *Engine) observeCloud(ctx context.Context, s *pass) error {
	s.cloudRollouts = e.cloudRollouts()
	getCtx := ctx
	if view, err := e.a.ReadPool(s.pool); err == nil && view.Operation != nil {
		getCtx = scalegroup.WithRecordedOperation(ctx, *view.Operation)
	}
	g, err := e.sg.Get(getCtx, s.group)
	switch {
	case scalegroup.IsNotFound(err):
		s.cloud = nil
	case err != nil:
		s.halt = true
		return e.cloudError(ctx, s, events.ActionObserve, fmt.Errorf("reading scale group %s: %w", s.group, err))
	default:
		s.cloud = g
	}
	s.observed = true
	return nil
}

// observeObjects reads the per-instance objects, their Machines and the
// Nodes of the instances.
func (e *Engine) observeObjects(ctx context.Context, s *pass) error {
	objects, err := e.instanceObjects(ctx, s.pool)
	if err != nil {
		return err
	}
	s.objects = objects

	// Read-only: the cache's objects are shared, not copied.
	machines := &clusterv1.MachineList{}
	if err := e.c.List(ctx, machines, client.InNamespace(s.pool.GetNamespace()), client.UnsafeDisableDeepCopy,
		client.MatchingFields{e.machineIndex(): capi.LabelValue(s.owner.Name)}); err != nil {
		return fmt.Errorf("listing the Machines of MachinePool %s: %w", s.owner.Name, err)
	}
	s.machines = make(map[string]*clusterv1.Machine, len(machines.Items))
	for i := range machines.Items {
		m := &machines.Items[i] // the index holds only Machines of the adapter's instance kind
		s.machines[m.Spec.InfrastructureRef.Name] = m
	}

	ids := make([]string, 0, len(s.objects))
	if s.cloud != nil {
		for _, in := range s.cloud.Instances {
			ids = append(ids, in.ProviderID)
		}
	}
	for _, obj := range s.objects {
		ids = append(ids, e.a.ReadInstance(obj).ProviderID)
	}
	nodes, err := e.w.NodesByProviderIDs(ctx, s.cluster, ids)
	if err != nil {
		// Without Nodes nothing is known to be Ready: the plan must not act
		// on that (see rolloutInput).
		log.FromContext(ctx).Info("Cannot read the workload cluster's Nodes", "cluster", s.cluster, "error", err.Error())
		s.nodesErr = err
		return nil
	}
	s.nodes, s.nodesKnown = nodes, true
	return nil
}

// instanceObjects returns the per-instance objects controlled by pool, by
// instance ID, from the pool-owner index. The objects are the cache's own:
// read them, and deep-copy before changing anything.
func (e *Engine) instanceObjects(ctx context.Context, pool contract.Pool) (map[string]contract.InstanceObject, error) {
	list := e.a.NewInstanceList()
	if err := e.c.List(ctx, list, client.InNamespace(pool.GetNamespace()),
		client.MatchingFields{e.poolOwnerIndex(): pool.GetName()}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing %s objects: %w", e.a.Kinds().Instance, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, fmt.Errorf("reading the %s list: %w", e.a.Kinds().Instance, err)
	}
	out := make(map[string]contract.InstanceObject, len(items))
	for _, it := range items {
		obj, ok := it.(contract.InstanceObject)
		if !ok {
			continue
		}
		if ref := contract.PoolOwner(obj, e.a.Kinds().Pool); ref == nil || ref.UID != pool.GetUID() {
			continue
		}
		out[e.a.ReadInstance(obj).InstanceID] = obj
	}
	return out, nil
}

// ownerOf returns the MachinePool named by pool's ownerReferences, nil when
// there is none yet (the core controller sets it) or it is gone.
func (e *Engine) ownerOf(ctx context.Context, pool contract.Pool) (*clusterv1.MachinePool, error) {
	for _, ref := range pool.GetOwnerReferences() {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil || gv.Group != clusterv1.GroupVersion.Group || ref.Kind != "MachinePool" {
			continue
		}
		mp := &clusterv1.MachinePool{}
		err = e.c.Get(ctx, types.NamespacedName{Namespace: pool.GetNamespace(), Name: ref.Name}, mp)
		switch {
		case apierrors.IsNotFound(err):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("reading the owner MachinePool %s: %w", ref.Name, err)
		}
		return mp, nil
	}
	return nil, nil
}

// bootstrapData returns the MachinePool's bootstrap data, nil when the
// bootstrap provider has not produced it yet.
func (e *Engine) bootstrapData(ctx context.Context, mp *clusterv1.MachinePool) ([]byte, error) {
	name := ptr.Deref(mp.Spec.Template.Spec.Bootstrap.DataSecretName, "")
	if name == "" {
		return nil, nil
	}
	secret := &corev1.Secret{}
	err := e.c.Get(ctx, types.NamespacedName{Namespace: mp.Namespace, Name: name}, secret)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading the bootstrap data secret %s: %w", name, err)
	}
	data := secret.Data[BootstrapDataKey]
	if len(data) == 0 {
		return nil, nil
	}
	return data, nil
}
