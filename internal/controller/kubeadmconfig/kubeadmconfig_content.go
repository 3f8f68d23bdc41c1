package kubeadmconfig

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"

	"github.com/mpool-dev/mpool/api/conditions"
	"github.com/mpool-dev/mpool/internal/bootstrap"
	"github.com/mpool-dev/mpool/internal/events"
)

// reconcileDataContent keeps an existing data Secret's content what the
// config renders to now: after a change of the spec (files, kubelet
// arguments, commands, JoinConfiguration, ...), of a Secret it references, of
// the Cluster's endpoint or CA, or of the pool's Kubernetes version, the data
// is rendered again and the Secret updated in place.
//
// The token the data carries is kept: rendering again never creates, rotates
// or extends a token (reconcileToken does). A token mpool manages is read
// back from the data, by the token Secret TokenSecretAnnotation names; a
// token the spec sets is the spec's. The fresh rendering is compared with the
// Secret byte for byte, so a config that did not change writes nothing.
//
// While the data cannot be rendered (an input is missing, the spec is
// invalid, no token can be kept) the Secret keeps the data rendered earlier
// and DataSecretUpToDate says why.
func (r *Reconciler) reconcileDataContent(ctx context.Context, s *scope) (ctrl.Result, error) {
	secret := s.dataSecret
	plan, res, err := r.planRender(ctx, s)
	if plan == nil {
		s.upToDate = s.data
		if s.upToDate.status == "" {
			s.upToDate = unknown(conditions.NotEvaluatedReason, "Could not render the bootstrap data again: %v", err)
		}
		if errors.Is(err, reconcile.TerminalError(nil)) {
			// Recorded in the conditions; retrying cannot fix it, and the
			// token must still be looked after on its own schedule.
			return res, nil
		}
		return res, err
	}

	tokenSecret := ""
	if plan.managedToken {
		tokenSecret = secret.Annotations[TokenSecretAnnotation]
		if tokenSecret == "" {
			s.upToDate = waiting(conditions.NoTokenToKeepReason, "Bootstrap data Secret %s carries no bootstrap token mpool manages, and rendering it again must not create one; delete the Secret to have it rendered with a new token", secret.Name)
			return ctrl.Result{}, nil
		}
		token, ok := carriedToken(secret.Data[dataValueKey], tokenSecret)
		if !ok {
			s.upToDate = waiting(conditions.NoTokenToKeepReason, "Bootstrap data Secret %s does not carry the token of Secret %s it is annotated with; it is rendered again with a new token when the token is next rotated", secret.Name, tokenSecret)
			return ctrl.Result{}, nil
		}
		plan.setToken(token)
	}
	data, err := bootstrap.RenderCloudInit(plan.input)
	if err != nil {
		s.upToDate = waiting(conditions.DataSecretGenerationFailedReason, "Rendering the bootstrap data failed: %v", err)
		return ctrl.Result{}, fmt.Errorf("rendering bootstrap data: %w", err)
	}
	old := secret.Data[dataValueKey]
	if bytes.Equal(old, data) && string(secret.Data[dataFormatKey]) == string(bootstrapv1.CloudConfig) &&
		secret.Annotations[TokenSecretAnnotation] == tokenSecret {
		s.upToDate = available(conditions.DataSecretUpToDateReason, "")
		return ctrl.Result{}, nil
	}

	contentChanged := !bootstrap.SameContent(old, data)
	before := secret.DeepCopy()
	if secret.Data == nil {
		secret.Data = map[string][]byte{}
	}
	secret.Data[dataValueKey] = data
	secret.Data[dataFormatKey] = []byte(bootstrapv1.CloudConfig)
	if tokenSecret == "" {
		// The spec sets its own token or discovers the cluster from a file:
		// the data carries no managed token any more. The tokens it carried
		// expire on their own and go with the config.
		delete(secret.Annotations, TokenSecretAnnotation)
	}
	if err := r.Client.Patch(ctx, secret, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		s.dataSecret = before
		s.upToDate = unknown(conditions.NotEvaluatedReason, "Updating bootstrap data Secret %s failed", secret.Name)
		return ctrl.Result{}, fmt.Errorf("updating bootstrap data Secret %s/%s: %w", secret.Namespace, secret.Name, err)
	}
	s.upToDate = available(conditions.DataSecretUpToDateReason, "")

	var what string
	switch {
	case contentChanged:
		what = "its content changed"
	case !bytes.Equal(old, data):
		what = "only the bootstrap token the KubeadmConfig sets changed"
	default:
		what = "its format or token annotation was out of date"
	}
	ctrl.LoggerFrom(ctx).Info("Rendered bootstrap data Secret again", "Secret", secret.Name, "generation", s.config.Generation, "contentChanged", contentChanged)
	r.Recorder.Eventf(s.config, secret, corev1.EventTypeNormal, events.DataSecretUpdated, events.ActionRender,
		"Bootstrap data Secret %s rendered again for generation %d: %s", secret.Name, s.config.Generation, what)
	return ctrl.Result{}, nil
}
