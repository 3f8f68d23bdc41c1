package infrapool

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/events"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// throttled reports whether err is the cloud's throttling and, if so, how
// long to wait: its Retry-After, or Timing.ThrottleRetry when it has none.
func (e *Engine) throttled(err error) (time.Duration, bool) {
	after, ok := scalegroup.IsThrottled(err)
	if ok && after <= 0 {
		after = e.timing.ThrottleRetry
	}
	return after, ok
}

// cloudError records a failed ScaleGroup call on the pass and decides how
// the reconcile ends: throttling requeues after the cloud's Retry-After,
// quota, credential and invalid-spec errors are reported (condition and event) and
// retried slowly or not at all, so that nothing loops hot; other errors
// (transient) are returned, and controller-runtime retries them with
// exponential backoff.
func (e *Engine) cloudError(ctx context.Context, s *pass, action string, err error) error {
	logger := log.FromContext(ctx)
	if after, ok := e.throttled(err); ok {
		logger.V(1).Info("Throttled by the cloud", "retryAfter", after, "error", err.Error())
		s.problem = &problem{reason: infrav1.ThrottledReason, message: err.Error()}
		// The gate is closed (gatedGroup): no call goes to the cloud
		// before then.
		s.requeueAfter(after)
		return nil
	}
	switch {
	case scalegroup.IsQuotaExceeded(err):
		msg := fmt.Sprintf("The cloud's quota does not allow the group's capacity (%v). "+
			"Raise the quota, or lower the MachinePool's spec.replicas (or the rolling update's maxSurge); "+
			"the group keeps its instances and the request is retried every %s", err, e.timing.QuotaRetry)
		s.problem = &problem{reason: infrav1.QuotaExceededReason, message: msg}
		logger.Info("The cloud refused the capacity for quota", "error", err.Error())
		e.rec.Eventf(s.pool, nil, corev1.EventTypeWarning, events.QuotaExceeded, action, "%s", msg)
		s.requeueAfter(e.timing.QuotaRetry)
		return nil
	case scalegroup.IsUnauthorized(err):
		msg := fmt.Sprintf("The cloud refused the credentials of scale group %s (%v). "+
			"Fix the identity the Cluster's infrastructure object names (or the manager's own credentials); "+
			"nothing is changed in the cloud meanwhile and the request is retried every %s", s.group, err, e.timing.QuotaRetry)
		s.problem = &problem{reason: infrav1.CredentialsRejectedReason, message: msg}
		logger.Info("The cloud refused the credentials", "error", err.Error())
		e.rec.Eventf(s.pool, nil, corev1.EventTypeWarning, events.CredentialsRejected, action, "%s", msg)
		s.requeueAfter(e.timing.QuotaRetry)
		return nil
	case scalegroup.IsInvalid(err):
		s.invalid = err
		e.rec.Eventf(s.pool, nil, corev1.EventTypeWarning, events.InvalidSpec, action, "%v", err)
		return nil
	default:
		s.problem = &problem{reason: infrav1.ScaleGroupProvisionFailedReason, message: err.Error()}
		if after := scalegroup.RetryAfter(err); after > 0 {
			s.requeueAfter(after)
			return nil
		}
		return err
	}
}
