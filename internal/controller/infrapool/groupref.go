package infrapool

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/capi"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// recordedRef returns the group reference a pool carries, or, for adapters
// that need no infrastructure cluster, the one derived from the pool
// alone. ok is false when neither is available yet.
func (e *Engine) recordedRef(pool contract.Pool) (scalegroup.Ref, bool, error) {
	if enc, found := pool.GetAnnotations()[contract.GroupRefAnnotation]; found {
		ref, err := scalegroup.DecodeRef(enc)
		if err != nil {
			return scalegroup.Ref{}, false, fmt.Errorf("annotation %s: %w", contract.GroupRefAnnotation, err)
		}
		return ref, true, nil
	}
	if e.a.NewInfraCluster() != nil {
		return scalegroup.Ref{}, false, nil
	}
	ref, err := e.a.GroupRef(pool, nil)
	return ref, err == nil, err
}

// resolveRef makes sure the pass knows the pool's group reference: the
// recorded one, or one derived from the Cluster's infrastructure object
// (readInfraCluster) and set on the pool for storeBeforeCloud to record
// before anything is created in the cloud.
func (e *Engine) resolveRef(_ context.Context, s *pass) error {
	if s.refKnown {
		return nil
	}
	if s.refErr != nil {
		s.invalid, s.halt = s.refErr, true
		return nil
	}
	infra := s.infra
	ref, err := e.a.GroupRef(s.pool, infra)
	if err != nil {
		s.invalid = fmt.Errorf("placing the scale group from %s %s: %w", e.a.Kinds().InfraCluster, infra.GetName(), err)
		s.halt = true
		return nil
	}
	s.pool.SetAnnotations(withEntry(s.pool.GetAnnotations(), contract.GroupRefAnnotation, ref.Encode()))
	s.group, s.refKnown, s.placed = ref, true, true
	return nil
}

// readInfraCluster reads the Cluster's infrastructure object for adapters
// that have one: every reconcile maps it (AzureCluster: the subnet, the
// tags) and the first places the group with it. It halts the reconcile,
// with a condition, while the Cluster or the object is missing.
func (e *Engine) readInfraCluster(ctx context.Context, s *pass) error {
	if e.a.NewInfraCluster() == nil {
		return nil
	}
	infra, why, err := e.infraCluster(ctx, s.cluster)
	if err != nil {
		return err
	}
	if infra == nil {
		log.FromContext(ctx).V(1).Info("Waiting for the infrastructure cluster", "reason", why)
		s.problem = &problem{reason: infrav1.WaitingForInfrastructureClusterReason, message: why}
		s.requeueAfter(e.timing.Drain)
		s.halt = true
		return nil
	}
	s.infra = infra
	return nil
}

// infraCluster reads the object that places the pools of the named
// Cluster, of the adapter's kind: the Cluster's infrastructureRef, or its
// controlPlaneRef (CAPZ's AKS shape: an AzureManagedCluster as
// infrastructureRef, the AzureManagedControlPlane as controlPlaneRef). It
// returns nil and why when the Cluster or the object is not there (yet).
func (e *Engine) infraCluster(ctx context.Context, cluster types.NamespacedName) (client.Object, string, error) {
	c := &clusterv1.Cluster{}
	switch err := e.c.Get(ctx, cluster, c); {
	case apierrors.IsNotFound(err):
		return nil, fmt.Sprintf("Cluster %s does not exist", cluster.Name), nil
	case err != nil:
		return nil, "", fmt.Errorf("reading Cluster %s: %w", cluster.Name, err)
	}
	want := e.a.Kinds().InfraCluster
	ref, ok := capi.PlacementRef(c, e.placementKind())
	if !ok {
		return nil, fmt.Sprintf("Cluster %s names no %s: %s pools need one (%s) as the Cluster's spec.infrastructureRef or spec.controlPlaneRef; "+
			"its spec.infrastructureRef is %s and its spec.controlPlaneRef is %s",
			cluster.Name, want, e.a.Kinds().Pool, infrav1.GroupVersion.Group, describeRef(c.Spec.InfrastructureRef), describeRef(c.Spec.ControlPlaneRef)), nil
	}
	obj := e.a.NewInfraCluster()
	switch err := e.c.Get(ctx, types.NamespacedName{Namespace: cluster.Namespace, Name: ref.Name}, obj); {
	case apierrors.IsNotFound(err):
		return nil, fmt.Sprintf("%s %s does not exist", want, ref.Name), nil
	case err != nil:
		return nil, "", fmt.Errorf("reading %s %s: %w", want, ref.Name, err)
	}
	return obj, "", nil
}

// placementKind is the group and kind of the adapter's InfraCluster.
func (e *Engine) placementKind() schema.GroupKind {
	return infrav1.GroupVersion.WithKind(e.a.Kinds().InfraCluster).GroupKind()
}

// describeRef names a Cluster's reference in a message.
func describeRef(ref clusterv1.ContractVersionedObjectReference) string {
	if !ref.IsDefined() {
		return "not set"
	}
	return fmt.Sprintf("a %s (%s) %s", ref.Kind, ref.APIGroup, ref.Name)
}
