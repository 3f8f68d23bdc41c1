package machinepool

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/internal/capi"
	"github.com/mpool-dev/mpool/internal/events"
)

// reconcileBootstrap reads the bootstrap config, takes ownership of it and
// copies its dataSecretName into the template once it is ready.
//
// dataSecretName semantics (the proposal's): nil waits for a bootstrap
// provider; "" means no bootstrap data is needed; any other value is used.
func (r *Reconciler) reconcileBootstrap(ctx context.Context, s *scope) (ctrl.Result, error) {
	pool := s.pool
	bootstrap := &pool.Spec.Template.Spec.Bootstrap
	if !bootstrap.ConfigRef.IsDefined() {
		s.bootstrapReady = bootstrap.DataSecretName != nil
		return ctrl.Result{}, nil
	}
	s.bootstrap.ref = &bootstrap.ConfigRef
	obj, err := r.readExternal(ctx, s, &s.bootstrap)
	if err != nil || obj == nil {
		return ctrl.Result{}, err
	}
	if err := r.reconcileExternalMetadata(ctx, pool, obj); err != nil {
		return ctrl.Result{}, err
	}
	s.addFailure(obj)

	ready, err := contractReady(obj, "dataSecretCreated")
	if err != nil {
		s.bootstrap.notReadyMessage = err.Error()
		return ctrl.Result{}, nil
	}
	if !ready {
		return ctrl.Result{}, nil
	}
	name, _, err := nestedString(obj, "status", "dataSecretName")
	switch {
	case err != nil:
		s.bootstrap.notReadyMessage = err.Error()
		return ctrl.Result{}, nil
	case name == "":
		s.bootstrap.notReadyMessage = fmt.Sprintf("%s %s is ready but has no status.dataSecretName", obj.GetKind(), obj.GetName())
		return ctrl.Result{}, nil
	}
	s.bootstrap.ready = true
	if ptr.Deref(bootstrap.DataSecretName, "") != name {
		bootstrap.DataSecretName = ptr.To(name)
	}
	s.bootstrapReady = true
	return ctrl.Result{}, nil
}

// reconcileInfrastructure reads the infrastructure pool, takes ownership of
// it, and copies its readiness, replicas and providerIDList.
func (r *Reconciler) reconcileInfrastructure(ctx context.Context, s *scope) (ctrl.Result, error) {
	pool := s.pool
	s.infra.ref = &pool.Spec.Template.Spec.InfrastructureRef
	obj, err := r.readExternal(ctx, s, &s.infra)
	if err != nil || obj == nil {
		pool.Status.Initialization.InfrastructureProvisioned = ptr.To(false)
		return ctrl.Result{}, err
	}
	if err := r.reconcileExternalMetadata(ctx, pool, obj); err != nil {
		return ctrl.Result{}, err
	}
	s.statusWait = r.infraBehind.wait(types.NamespacedName{Namespace: pool.Namespace, Name: pool.Name}, obj, s.now)
	s.addFailure(obj)

	ready, err := contractReady(obj, "provisioned")
	if err != nil {
		s.infra.notReadyMessage = err.Error()
	}
	s.infra.ready = ready
	pool.Status.Initialization.InfrastructureProvisioned = ptr.To(ready)

	replicas, err := nestedInt32(obj, "status", "replicas")
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("reading the replicas of %s %s: %w", obj.GetKind(), klog.KObj(obj), err)
	}
	s.infraReplicas = replicas
	kind, _, err := nestedString(obj, "status", "infrastructureMachineKind")
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("reading the machine kind of %s %s: %w", obj.GetKind(), klog.KObj(obj), err)
	}
	s.infraMachineKind = kind
	if !ready {
		if replicas != nil {
			pool.Status.Replicas = ptr.To(*replicas)
		}
		return ctrl.Result{}, nil
	}

	ids, err := nestedStringSlice(obj, "spec", "providerIDList")
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("reading the providerIDList of %s %s: %w", obj.GetKind(), klog.KObj(obj), err)
	}
	if replicas == nil {
		replicas = ptr.To(int32(len(ids)))
	}
	pool.Status.Replicas = ptr.To(*replicas)
	if len(ids) == 0 && *replicas != 0 {
		// The provider reports instances but not their IDs yet: keep the
		// last list rather than forget every Node.
		ctrl.LoggerFrom(ctx).V(1).Info("Infrastructure pool reports replicas but no providerIDList yet", "replicas", *replicas)
		return ctrl.Result{}, nil
	}
	if !slices.Equal(pool.Spec.ProviderIDList, ids) {
		pool.Spec.ProviderIDList = ids
	}
	s.providerIDsFresh = true
	return ctrl.Result{}, nil
}

// readExternal reads the object of st.ref, recording not-found and errors in
// st. It returns nil (and no error) when the object does not exist.
func (r *Reconciler) readExternal(ctx context.Context, s *scope, st *externalState) (*unstructured.Unstructured, error) {
	apiVersion, err := r.refAPIVersion(ctx, *st.ref)
	if err != nil {
		st.err = err
		return nil, err
	}
	if err := r.ensureWatch(ctx, apiVersion, st.ref.Kind, r.externalToMachinePools); err != nil {
		st.err = err
		return nil, err
	}
	obj, err := r.getExternal(ctx, apiVersion, *st.ref, s.pool.Namespace)
	if err != nil {
		if isNotFound(err) {
			st.notFound = true
			return nil, nil
		}
		st.err = err
		return nil, err
	}
	st.obj = obj
	return obj, nil
}

// addFailure records the failure obj reports, if any.
func (s *scope) addFailure(obj *unstructured.Unstructured) {
	reason, message := failureOf(obj)
	if reason != "" && s.failureReason == nil {
		s.failureReason = ptr.To(reason)
	}
	if message != "" && s.failureMessage == nil {
		s.failureMessage = ptr.To(fmt.Sprintf("Failure detected from referenced resource %s with name %q: %s",
			obj.GroupVersionKind().GroupKind(), obj.GetName(), message))
	}
}

// reconcileReplicas defaults spec.replicas, or takes it from the
// infrastructure pool when an external actor manages replicas.
func (r *Reconciler) reconcileReplicas(ctx context.Context, s *scope) (ctrl.Result, error) {
	pool := s.pool
	if capi.ReplicasManagedExternally(pool) && s.infraReplicas != nil {
		if pool.Spec.Replicas == nil || *pool.Spec.Replicas != *s.infraReplicas {
			r.Recorder.Eventf(pool, nil, corev1.EventTypeNormal, events.ReplicasSynced, events.ActionScale,
				"Replicas are managed by %q: took %d from the infrastructure pool", pool.Annotations[clusterv1.ReplicasManagedByAnnotation], *s.infraReplicas)
			pool.Spec.Replicas = ptr.To(*s.infraReplicas)
		}
		return ctrl.Result{}, nil
	}
	if pool.Spec.Replicas != nil {
		return ctrl.Result{}, nil
	}
	n, why, err := defaultReplicas(pool.Annotations, ptr.Deref(pool.Status.Replicas, 0))
	if err != nil {
		ctrl.LoggerFrom(ctx).Info("Ignoring invalid autoscaler annotations", "error", err.Error())
	}
	pool.Spec.Replicas = ptr.To(n)
	r.Recorder.Eventf(pool, nil, corev1.EventTypeNormal, events.ReplicasDefaulted, events.ActionScale, "Defaulted replicas to %d (%s)", n, why)
	return ctrl.Result{}, nil
}

// defaultReplicas returns the replicas of a pool whose spec.replicas is
// unset: with valid cluster-autoscaler min/max size annotations, the minimum
// for a new pool (no instances observed) and the observed count clamped to
// [min, max] otherwise; without them, 1. Invalid annotations are reported
// and ignored.
func defaultReplicas(annotations map[string]string, observed int32) (int32, string, error) {
	minS, hasMin := annotations[clusterv1.AutoscalerMinSizeAnnotation]
	maxS, hasMax := annotations[clusterv1.AutoscalerMaxSizeAnnotation]
	if !hasMin && !hasMax {
		return 1, "no autoscaler annotations", nil
	}
	if !hasMin || !hasMax {
		return 1, "incomplete autoscaler annotations", fmt.Errorf("both %s and %s must be set",
			clusterv1.AutoscalerMinSizeAnnotation, clusterv1.AutoscalerMaxSizeAnnotation)
	}
	lo, err1 := strconv.ParseInt(minS, 10, 32)
	hi, err2 := strconv.ParseInt(maxS, 10, 32)
	switch {
	case err1 != nil || err2 != nil:
		return 1, "invalid autoscaler annotations", fmt.Errorf("autoscaler min %q / max %q: not integers", minS, maxS)
	case lo < 0 || hi < lo:
		return 1, "invalid autoscaler annotations", fmt.Errorf("autoscaler min %d / max %d: want 0 <= min <= max", lo, hi)
	}
	switch {
	case observed == 0:
		return int32(lo), "autoscaler minimum size", nil
	case int64(observed) < lo:
		return int32(lo), "observed replicas raised to the autoscaler minimum size", nil
	case int64(observed) > hi:
		return int32(hi), "observed replicas lowered to the autoscaler maximum size", nil
	default:
		return observed, "observed replicas, within the autoscaler bounds", nil
	}
}

// contractReady reads whether a referenced provider object is ready, on
// either Cluster API contract: v1beta2's status.initialization.<field>, else
// v1beta1's status.ready.
func contractReady(obj *unstructured.Unstructured, field string) (bool, error) {
	ready, found, err := nestedBool(obj, "status", "initialization", field)
	if err != nil || found {
		return ready, err
	}
	ready, _, err = nestedBool(obj, "status", "ready")
	return ready, err
}
