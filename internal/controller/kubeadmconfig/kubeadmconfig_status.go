package kubeadmconfig

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mpool-dev/mpool/api/conditions"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// condition is an observation a phase makes; the zero value means the phase
// did not get to it.
type condition struct {
	status  metav1.ConditionStatus
	reason  string
	message string
}

func available(reason, format string, args ...any) condition {
	return condition{status: metav1.ConditionTrue, reason: reason, message: fmt.Sprintf(format, args...)}
}

func waiting(reason, format string, args ...any) condition {
	return condition{status: metav1.ConditionFalse, reason: reason, message: fmt.Sprintf(format, args...)}
}

func unknown(reason, format string, args ...any) condition {
	return condition{status: metav1.ConditionUnknown, reason: reason, message: fmt.Sprintf(format, args...)}
}

// setConditions sets every condition the controller owns from what the
// phases observed, and observedGeneration when the reconcile succeeded.
func (r *Reconciler) setConditions(s *scope, succeeded bool) {
	r.setPausedCondition(s.config, false)
	r.setCertificatesAvailableCondition(s)
	r.setDataSecretAvailableCondition(s)
	r.setDataSecretUpToDateCondition(s)
	r.setBootstrapTokenAvailableCondition(s)
	r.setReadyCondition(s)
	if succeeded {
		s.config.Status.ObservedGeneration = s.config.Generation
	}
}

func (r *Reconciler) set(cfg *bootstrapv1.KubeadmConfig, condType string, c condition) {
	if c.status == "" {
		c = unknown(conditions.NotEvaluatedReason, "Not evaluated yet")
	}
	meta.SetStatusCondition(&cfg.Status.Conditions, metav1.Condition{
		Type:               condType,
		Status:             c.status,
		Reason:             c.reason,
		Message:            c.message,
		ObservedGeneration: cfg.Generation,
		LastTransitionTime: metav1.NewTime(r.Clock.Now()),
	})
}

func (r *Reconciler) setPausedCondition(cfg *bootstrapv1.KubeadmConfig, paused bool) {
	if paused {
		r.set(cfg, clusterv1.PausedCondition, available(clusterv1.PausedReason, "Reconciliation is paused"))
		return
	}
	r.set(cfg, clusterv1.PausedCondition, waiting(clusterv1.NotPausedReason, ""))
}

func (r *Reconciler) setCertificatesAvailableCondition(s *scope) {
	c := s.certificates
	if c.status == "" && s.dataSecret != nil {
		// The data was rendered, so the certificates were available then.
		c = available(conditions.CertificatesAvailableReason, "")
	}
	r.set(s.config, bootstrapv1.KubeadmConfigCertificatesAvailableCondition, c)
}

func (r *Reconciler) setDataSecretAvailableCondition(s *scope) {
	c := s.data
	if s.dataSecret != nil {
		c = available(bootstrapv1.KubeadmConfigDataSecretAvailableReason, "")
	}
	r.set(s.config, bootstrapv1.KubeadmConfigDataSecretAvailableCondition, c)
}

// setDataSecretUpToDateCondition: without a data Secret it says what
// DataSecretAvailable says; with one, what reconcileDataContent observed.
func (r *Reconciler) setDataSecretUpToDateCondition(s *scope) {
	c := s.upToDate
	if s.dataSecret == nil {
		c = s.data
	}
	r.set(s.config, conditions.DataSecretUpToDateCondition, c)
}

func (r *Reconciler) setBootstrapTokenAvailableCondition(s *scope) {
	r.set(s.config, conditions.BootstrapTokenAvailableCondition, s.token)
}

// setReadyCondition summarises: ready when the data Secret exists and its
// token is not known to be unusable.
func (r *Reconciler) setReadyCondition(s *scope) {
	data := meta.FindStatusCondition(s.config.Status.Conditions, bootstrapv1.KubeadmConfigDataSecretAvailableCondition)
	token := meta.FindStatusCondition(s.config.Status.Conditions, conditions.BootstrapTokenAvailableCondition)
	switch {
	case data.Status != metav1.ConditionTrue:
		r.set(s.config, bootstrapv1.KubeadmConfigReadyCondition, condition{status: data.Status, reason: data.Reason, message: data.Message})
	case token.Status == metav1.ConditionFalse:
		r.set(s.config, bootstrapv1.KubeadmConfigReadyCondition, condition{status: token.Status, reason: token.Reason, message: token.Message})
	default:
		r.set(s.config, bootstrapv1.KubeadmConfigReadyCondition, available(bootstrapv1.KubeadmConfigReadyReason, ""))
	}
}
