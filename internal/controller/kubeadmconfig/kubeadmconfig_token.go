package kubeadmconfig

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/api/conditions"
	"github.com/mpool-dev/mpool/internal/bootstrap"
	"github.com/mpool-dev/mpool/internal/events"
)

// poolJoining reports whether a pool may still have instances joining with
// the token in its data: its infrastructure is not ready yet, or fewer of its
// instances have a Node than it wants.
func poolJoining(mp *clusterv1.MachinePool) bool {
	return !ptr.Deref(mp.Status.Initialization.InfrastructureProvisioned, false) || int32(len(mp.Status.NodeRefs)) < ptr.Deref(mp.Spec.Replicas, 1)
}

// reconcileToken keeps the managed token of an existing data Secret valid:
// extended while the pool is joining instances, rotated before it expires
// otherwise, replaced when it disappeared. Tokens the data no longer carries
// are deleted once no instance can be joining with them.
func (r *Reconciler) reconcileToken(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	current := s.dataSecret.Annotations[TokenSecretAnnotation]
	if current == "" {
		if s.token.status == "" {
			s.token = available(conditions.TokenProvidedReason, "The bootstrap data carries no token managed by mpool")
		}
		return ctrl.Result{}, nil
	}
	now := r.Clock.Now()
	joining := poolJoining(s.pool)
	touch := configTouch(s.config)
	if v, ok := r.tokenChecks.Load(s.config.UID); ok {
		c := v.(tokenCheck)
		if wait, fresh := c.stillHolds(current, now, r.TokenTTL, joining); fresh && c.touch == touch {
			s.token = available(conditions.TokenValidReason, "Bootstrap token Secret %s/%s expires at %s",
				metav1.NamespaceSystem, current, c.expiration.UTC().Format(time.RFC3339))
			return ctrl.Result{RequeueAfter: wait}, nil
		}
	}
	r.tokenChecks.Delete(s.config.UID)
	wl, err := r.workloadClient(ctx, s)
	if err != nil {
		s.token = unknown(conditions.WaitingForWorkloadClusterReason, "Cannot reach the workload cluster to check bootstrap token Secret %s", current)
		return ctrl.Result{}, err
	}
	tokens, err := listTokens(ctx, wl, s.config)
	if err != nil {
		s.token = unknown(conditions.WaitingForWorkloadClusterReason, "Cannot list the bootstrap tokens in the workload cluster")
		return ctrl.Result{}, err
	}
	var cur *corev1.Secret
	for i := range tokens {
		if tokens[i].Name == current {
			cur = &tokens[i]
		}
	}

	var expiration time.Time
	switch {
	case cur == nil:
		name, exp, err := r.rotateToken(ctx, s, wl, current)
		if err != nil {
			s.token = waiting(conditions.DataSecretGenerationFailedReason, "Bootstrap token Secret %s is gone and replacing it failed", current)
			return ctrl.Result{}, err
		}
		log.Info("Replaced missing bootstrap token", "oldTokenSecret", current, "tokenSecret", name)
		r.Recorder.Eventf(s.config, s.dataSecret, corev1.EventTypeWarning, events.BootstrapTokenReplaced, events.ActionRotate,
			"Bootstrap token Secret %s disappeared from the workload cluster; the data now carries %s", current, name)
		current, expiration = name, exp
	default:
		expiration = tokenExpiration(cur)
		switch decideTokenAction(now, expiration, r.TokenTTL, joining) {
		case tokenExtend:
			expiration = now.Add(r.TokenTTL)
			if err := extendToken(ctx, wl, cur, expiration); err != nil {
				return ctrl.Result{}, err
			}
			log.V(1).Info("Extended bootstrap token while the pool is joining instances", "tokenSecret", current, "expiration", expiration.UTC().Format(time.RFC3339))
		case tokenRotate:
			name, exp, err := r.rotateToken(ctx, s, wl, current)
			if err != nil {
				return ctrl.Result{}, err
			}
			log.Info("Rotated bootstrap token", "oldTokenSecret", current, "tokenSecret", name)
			r.Recorder.Eventf(s.config, s.dataSecret, corev1.EventTypeNormal, events.BootstrapTokenRotated, events.ActionRotate,
				"Bootstrap data switched from token Secret %s to %s", current, name)
			current, expiration = name, exp
		}
	}

	var errs []error
	kept := false
	for _, t := range tokens {
		if t.Name == current {
			continue
		}
		if joining && tokenExpiration(&t).After(now) {
			kept = true
			continue
		}
		if err := deleteToken(ctx, wl, t.Name); err != nil {
			errs = append(errs, err)
			continue
		}
		log.Info("Deleted bootstrap token the data no longer carries", "tokenSecret", t.Name)
	}
	s.token = available(conditions.TokenValidReason, "Bootstrap token Secret %s/%s expires at %s",
		metav1.NamespaceSystem, current, expiration.UTC().Format(time.RFC3339))
	if err := errors.Join(errs...); err != nil {
		return ctrl.Result{}, err
	}
	if !kept {
		r.rememberTokenCheck(s, current, expiration, now)
	}
	return ctrl.Result{RequeueAfter: tokenCheckInterval(r.TokenTTL)}, nil
}

// tokenCheck is what a config's last look at its tokens in the workload
// cluster found: its current token's Secret and expiration, no other token
// left, when, whether the pool was joining instances, and the config's
// configTouch then.
type tokenCheck struct {
	name       string
	expiration time.Time
	at         time.Time
	joining    bool
	touch      string
}

// rememberTokenCheck records a look at s's config's tokens taken at: its
// token Secret name, valid until expiration, and no other token left.
func (r *Reconciler) rememberTokenCheck(s *scope, name string, expiration, at time.Time) {
	r.tokenChecks.Store(s.config.UID, tokenCheck{name: name, expiration: expiration, at: at,
		joining: poolJoining(s.pool), touch: configTouch(s.config)})
}

// configTouch is what a user changes to make a config look at its tokens
// again: its spec (generation) or its annotations (as any annotation
// written to it does).
func configTouch(cfg *bootstrapv1.KubeadmConfig) string {
	keys := slices.Sorted(maps.Keys(cfg.Annotations))
	var b strings.Builder
	b.WriteString(strconv.FormatInt(cfg.Generation, 10))
	for _, k := range keys {
		b.WriteString("\x00" + k + "=" + cfg.Annotations[k])
	}
	return b.String()
}

// stillHolds reports whether c answers for a config carrying token Secret
// current at now without looking again, and how long until the next look:
// the same token, the pool not started joining since (a scale-up makes sure
// its instances' token is still there), no action due (decideTokenAction),
// and a look no older than tokenCheckInterval. A pool that stopped joining
// needs no look: a check is only kept when no other token was left, so
// there is nothing to delete, and the token's expiry is judged here. A
// config is reconciled for many reasons (its own status writes, its pool's,
// its Secrets'), and each look is a request to the workload cluster; a
// token Secret deleted there by hand is replaced at the next look, or at
// once when the config is touched (configTouch).
func (c tokenCheck) stillHolds(current string, now time.Time, ttl time.Duration, joining bool) (time.Duration, bool) {
	wait := c.at.Add(tokenCheckInterval(ttl)).Sub(now)
	if c.name != current || (joining && !c.joining) || wait <= 0 || now.Before(c.at) ||
		decideTokenAction(now, c.expiration, ttl, joining) != tokenKeep {
		return 0, false
	}
	return wait, true
}

// rotateToken creates a new token, switches the data Secret to it in place
// (only the token string changes) and returns the new token's Secret name and
// expiration. The old token is left for reconcileToken to delete.
func (r *Reconciler) rotateToken(ctx context.Context, s *scope, wl client.Client, oldName string) (string, time.Time, error) {
	expiration := r.Clock.Now().Add(r.TokenTTL)
	token, name, err := createToken(ctx, wl, s.config, client.ObjectKeyFromObject(s.pool), expiration)
	if err != nil {
		return "", time.Time{}, err
	}
	data, swapped := swapToken(s.dataSecret.Data[dataValueKey], oldName, token)
	if !swapped {
		// The data does not carry the token it is annotated with: render it
		// again rather than guess.
		data, err = r.rerender(ctx, s, token)
		if err != nil {
			return "", time.Time{}, errors.Join(err, deleteToken(ctx, wl, name))
		}
		r.Recorder.Eventf(s.config, s.dataSecret, corev1.EventTypeWarning, events.DataSecretRerendered, events.ActionRender,
			"Bootstrap data did not carry token Secret %s it was annotated with and was rendered again", oldName)
	}
	secret := s.dataSecret
	before := secret.DeepCopy()
	secret.Data[dataValueKey] = data
	if secret.Annotations == nil {
		secret.Annotations = map[string]string{}
	}
	secret.Annotations[TokenSecretAnnotation] = name
	if err := r.Client.Patch(ctx, secret, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		err = fmt.Errorf("switching bootstrap data Secret %s/%s to a new token: %w", secret.Namespace, secret.Name, err)
		return "", time.Time{}, errors.Join(err, deleteToken(ctx, wl, name))
	}
	if !swapped {
		s.upToDate = available(conditions.DataSecretUpToDateReason, "")
	}
	return name, expiration, nil
}

// rerender renders the data again with token.
func (r *Reconciler) rerender(ctx context.Context, s *scope, token string) ([]byte, error) {
	plan, _, err := r.planRender(ctx, s)
	if err != nil {
		return nil, err
	}
	if plan == nil {
		return nil, fmt.Errorf("rendering bootstrap data again: %s", s.data.message)
	}
	plan.setToken(token)
	data, err := bootstrap.RenderCloudInit(plan.input)
	if err != nil {
		return nil, fmt.Errorf("rendering bootstrap data again: %w", err)
	}
	return data, nil
}

// deleteTokens deletes every token cfg created in the workload cluster except
// the one whose Secret is keep.
func deleteTokens(ctx context.Context, wl client.Client, cfg *bootstrapv1.KubeadmConfig, keep string) error {
	tokens, err := listTokens(ctx, wl, cfg)
	if err != nil {
		return err
	}
	var errs []error
	for _, t := range tokens {
		if t.Name != keep {
			errs = append(errs, deleteToken(ctx, wl, t.Name))
		}
	}
	return errors.Join(errs...)
}
