package kubeadmconfig

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/api/conditions"
	"github.com/mpool-dev/mpool/internal/bootstrap"
	"github.com/mpool-dev/mpool/internal/events"
)

const (
	// dataValueKey and dataFormatKey are the keys of the data Secret.
	dataValueKey  = "value"
	dataFormatKey = "format"
	// caSecretKey is the certificate key of the "<cluster>-ca" Secret.
	caSecretKey = "tls.crt"
	// ClusterSecretType is the type of the data Secret, as Cluster API sets it.
	ClusterSecretType = clusterv1.ClusterSecretType
	// waitForSecrets is how long to wait before looking again for a missing
	// Secret (the cluster CA, files' contentFrom). The Secrets are watched;
	// this is a safety net for a watch event that mapped to no config.
	waitForSecrets = 10 * time.Second
)

// ClusterCASecretName returns the name of the Secret holding a Cluster's CA.
func ClusterCASecretName(cluster string) string { return cluster + "-ca" }

// observeDataSecret reads the data Secret, if it exists, into s. The cache
// may not have seen a Secret created moments ago: rendering a second time
// would replace the token. The Secret this controller created is taken as
// its create left it while the cache does not show it yet (written); any
// other miss is confirmed with a live read.
func (r *Reconciler) observeDataSecret(ctx context.Context, s *scope) error {
	cfg := s.config
	key := client.ObjectKey{Namespace: cfg.Namespace, Name: cfg.Name}
	secret := &corev1.Secret{}
	err := r.Client.Get(ctx, key, secret)
	if err == nil {
		// The cache shows it: a later miss is a deletion.
		r.written.Forget(dataSecretKey(cfg))
	}
	if apierrors.IsNotFound(err) {
		if created, ok := r.written.Latest(dataSecretKey(cfg), "").(*corev1.Secret); ok {
			secret, err = created, nil
		} else if r.APIReader != nil {
			err = r.APIReader.Get(ctx, key, secret)
		}
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("getting bootstrap data Secret %s: %w", key, err)
	}
	r.markDataSecret(s, secret)
	return nil
}

// reconcileDataSecret renders the data Secret, with a new token, when it does
// not exist. Once it exists, reconcileDataContent renders it again when the
// config or an input changed, keeping its token, and reconcileToken changes
// only the token in it.
func (r *Reconciler) reconcileDataSecret(ctx context.Context, s *scope) (ctrl.Result, error) {
	cfg := s.config
	if s.dataSecret != nil {
		return ctrl.Result{}, r.ensureDataSecretOwner(ctx, cfg, s.dataSecret)
	}
	plan, res, err := r.planRender(ctx, s)
	if err != nil || plan == nil {
		return res, err
	}
	var tokenSecret string
	var tokenExpires time.Time
	if plan.managedToken {
		wl, err := r.workloadClient(ctx, s)
		if err != nil {
			s.data = waiting(conditions.WaitingForWorkloadClusterReason, "Waiting for the workload cluster to create a bootstrap token")
			return ctrl.Result{}, err
		}
		// Tokens left by an earlier attempt that never got into a data
		// Secret are no use to anyone.
		if err := deleteTokens(ctx, wl, cfg, ""); err != nil {
			return ctrl.Result{}, err
		}
		tokenExpires = r.Clock.Now().Add(r.TokenTTL)
		token, name, err := createToken(ctx, wl, cfg, client.ObjectKeyFromObject(s.pool), tokenExpires)
		if err != nil {
			return ctrl.Result{}, err
		}
		plan.setToken(token)
		tokenSecret = name
		ctrl.LoggerFrom(ctx).Info("Created bootstrap token", "tokenSecret", name)
	}
	data, err := bootstrap.RenderCloudInit(plan.input)
	if err != nil {
		s.data = waiting(conditions.DataSecretGenerationFailedReason, "Rendering the bootstrap data failed: %v", err)
		return ctrl.Result{}, errors.Join(fmt.Errorf("rendering bootstrap data: %w", err), r.forgetToken(ctx, s, tokenSecret))
	}
	secret := r.newDataSecret(s, data, tokenSecret)
	if err := r.Client.Create(ctx, secret); err != nil {
		err = fmt.Errorf("creating bootstrap data Secret %s/%s: %w", secret.Namespace, secret.Name, err)
		return ctrl.Result{}, errors.Join(err, r.forgetToken(ctx, s, tokenSecret))
	}
	r.written.Wrote(dataSecretKey(cfg), "", secret.DeepCopy())
	ctrl.LoggerFrom(ctx).Info("Created bootstrap data Secret", "Secret", secret.Name)
	r.Recorder.Eventf(cfg, secret, corev1.EventTypeNormal, events.DataSecretCreated, events.ActionCreate, "Created bootstrap data Secret %s", secret.Name)
	r.markDataSecret(s, secret)
	if tokenSecret != "" {
		// The tokens were just listed (the leftovers deleted) and this one
		// created: that is the look reconcileToken would take next, in this
		// same reconcile.
		r.rememberTokenCheck(s, tokenSecret, tokenExpires, r.Clock.Now())
	}
	return ctrl.Result{}, nil
}

// forgetToken deletes a token that did not make it into a data Secret.
func (r *Reconciler) forgetToken(ctx context.Context, s *scope, name string) error {
	if name == "" {
		return nil
	}
	wl, err := r.workloadClient(ctx, s)
	if err != nil {
		return err
	}
	return deleteToken(ctx, wl, name)
}

func (r *Reconciler) markDataSecret(s *scope, secret *corev1.Secret) {
	s.dataSecret = secret
	s.config.Status.Initialization.DataSecretCreated = ptr.To(true)
	s.config.Status.DataSecretName = secret.Name
}

// ensureDataSecretOwner makes cfg the controller of its data Secret (a Secret
// restored from a backup or moved between clusters may have lost it).
func (r *Reconciler) ensureDataSecretOwner(ctx context.Context, cfg *bootstrapv1.KubeadmConfig, secret *corev1.Secret) error {
	if metav1.IsControlledBy(secret, cfg) {
		return nil
	}
	before := secret.DeepCopy()
	if owner := metav1.GetControllerOf(secret); owner != nil {
		if owner.Kind != "KubeadmConfig" || owner.Name != cfg.Name || apiGroup(owner.APIVersion) != bootstrapv1.GroupVersion.Group {
			return reconcile.TerminalError(fmt.Errorf("bootstrap data Secret %s/%s is controlled by %s %s, not by this KubeadmConfig", secret.Namespace, secret.Name, owner.Kind, owner.Name))
		}
		// This config under an older UID (moved or restored): take over.
		refs := secret.OwnerReferences[:0:0]
		for _, ref := range secret.OwnerReferences {
			if ref.UID != owner.UID {
				refs = append(refs, ref)
			}
		}
		secret.OwnerReferences = refs
	}
	if err := controllerutil.SetControllerReference(cfg, secret, r.Client.Scheme()); err != nil {
		return fmt.Errorf("setting the owner of bootstrap data Secret %s/%s: %w", secret.Namespace, secret.Name, err)
	}
	if err := r.Client.Patch(ctx, secret, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("setting the owner of bootstrap data Secret %s/%s: %w", secret.Namespace, secret.Name, err)
	}
	return nil
}

func (r *Reconciler) newDataSecret(s *scope, data []byte, tokenSecret string) *corev1.Secret {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:      s.config.Name,
			Namespace: s.config.Namespace,
			Labels:    map[string]string{clusterv1.ClusterNameLabel: s.cluster.Name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         bootstrapv1.GroupVersion.String(),
				Kind:               "KubeadmConfig",
				Name:               s.config.Name,
				UID:                s.config.UID,
				Controller:         ptr.To(true),
				BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Type: ClusterSecretType,
		Data: map[string][]byte{
			dataValueKey:  data,
			dataFormatKey: []byte(bootstrapv1.CloudConfig),
		},
	}
	if tokenSecret != "" {
		secret.Annotations = map[string]string{TokenSecretAnnotation: tokenSecret}
	}
	return secret
}

// renderPlan is a bootstrap.Input whose discovery is complete except,
// when managedToken, for the token.
type renderPlan struct {
	input        bootstrap.Input
	managedToken bool
}

func (p *renderPlan) setToken(token string) {
	p.input.JoinConfiguration.Discovery.BootstrapToken.Token = token
}

// planRender gathers everything rendering needs: the discovery (endpoint and
// CA pins), the content of referenced Secrets and the Kubernetes version. It
// returns a nil plan, with the reason in s's conditions, while something is
// missing.
func (r *Reconciler) planRender(ctx context.Context, s *scope) (*renderPlan, ctrl.Result, error) {
	cfg := s.config
	if cfg.Spec.Format != "" && cfg.Spec.Format != bootstrapv1.CloudConfig {
		s.data = waiting(conditions.UnsupportedFormatReason, "Format %s is not supported yet; use %s", cfg.Spec.Format, bootstrapv1.CloudConfig)
		if !hasConditionReason(cfg, conditions.UnsupportedFormatReason, bootstrapv1.KubeadmConfigDataSecretAvailableCondition, conditions.DataSecretUpToDateCondition) {
			r.Recorder.Eventf(cfg, nil, corev1.EventTypeWarning, events.UnsupportedFormat, events.ActionRender, "Format %s is not supported yet", cfg.Spec.Format)
		}
		return nil, ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("KubeadmConfig %s: format %s: %w", client.ObjectKeyFromObject(cfg), cfg.Spec.Format, bootstrap.ErrUnsupportedFormat))
	}
	jc := cfg.Spec.JoinConfiguration.DeepCopy()
	plan := &renderPlan{input: bootstrap.Input{Spec: &cfg.Spec, JoinConfiguration: jc, KubernetesVersion: s.pool.Spec.Template.Spec.Version}}

	var wait []condition
	if jc.Discovery.File.IsDefined() {
		s.certificates = available(conditions.CACertHashesProvidedReason, "Discovery uses a kubeconfig file")
		s.token = available(conditions.FileDiscoveryReason, "Discovery uses a kubeconfig file; no bootstrap token is needed")
	} else {
		bt := &jc.Discovery.BootstrapToken
		if len(bt.CACertHashes) > 0 || ptr.Deref(bt.UnsafeSkipCAVerification, false) {
			s.certificates = available(conditions.CACertHashesProvidedReason, "")
		} else {
			hashes, c, err := r.clusterCAHashes(ctx, s.cluster)
			if err != nil {
				return nil, ctrl.Result{}, err
			}
			s.certificates = c
			if c.status != metav1.ConditionTrue {
				wait = append(wait, c)
			}
			bt.CACertHashes = hashes
		}
		if bt.APIServerEndpoint == "" {
			ep := s.cluster.Spec.ControlPlaneEndpoint
			if ep.Host == "" || ep.Port == 0 {
				wait = append(wait, waiting(conditions.WaitingForControlPlaneEndpointReason, "Waiting for Cluster %s to have spec.controlPlaneEndpoint", s.cluster.Name))
			} else {
				bt.APIServerEndpoint = net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port)))
			}
		}
		if bt.Token == "" {
			plan.managedToken = true
		} else {
			s.token = available(conditions.TokenProvidedReason, "The KubeadmConfig sets its own bootstrap token; mpool does not manage it")
		}
	}

	data, c, err := r.resolveSecrets(ctx, cfg)
	if err != nil {
		return nil, ctrl.Result{}, err
	}
	if c.status != "" {
		wait = append(wait, c)
	}
	plan.input.SecretData = data

	if len(wait) > 0 {
		s.data = wait[0]
		var res ctrl.Result
		for _, w := range wait {
			// A Cluster change always comes as an event.
			if w.reason != conditions.WaitingForControlPlaneEndpointReason {
				res.RequeueAfter = waitForSecrets
			}
		}
		return nil, res, nil
	}
	if _, err := bootstrap.KubeadmAPIVersion(plan.input.KubernetesVersion); err != nil {
		s.data = waiting(conditions.DataSecretGenerationFailedReason, "MachinePool %s has an invalid version: %v", s.pool.Name, err)
		return nil, ctrl.Result{}, reconcile.TerminalError(err)
	}
	return plan, ctrl.Result{}, nil
}

// hasConditionReason reports whether one of cfg's conditions of the given
// types has reason, so that a warning is recorded once and not on every
// reconcile.
func hasConditionReason(cfg *bootstrapv1.KubeadmConfig, reason string, types ...string) bool {
	for _, t := range types {
		if c := meta.FindStatusCondition(cfg.Status.Conditions, t); c != nil && c.Reason == reason {
			return true
		}
	}
	return false
}

// clusterCAHashes reads the pins of the Cluster's CA from "<cluster>-ca".
func (r *Reconciler) clusterCAHashes(ctx context.Context, cluster *clusterv1.Cluster) ([]string, condition, error) {
	name := ClusterCASecretName(cluster.Name)
	secret := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, waiting(conditions.WaitingForClusterCAReason, "Waiting for Secret %s with the cluster CA", name), nil
		}
		return nil, condition{}, fmt.Errorf("getting cluster CA Secret %s/%s: %w", cluster.Namespace, name, err)
	}
	hashes, err := bootstrap.CACertHashes(secret.Data[caSecretKey])
	if err != nil {
		return nil, waiting(conditions.InvalidClusterCAReason, "Secret %s key %s holds no usable CA certificate: %v", name, caSecretKey, err), nil
	}
	return hashes, available(conditions.CertificatesAvailableReason, ""), nil
}

// resolveSecrets reads every Secret key the spec's files and users reference.
func (r *Reconciler) resolveSecrets(ctx context.Context, cfg *bootstrapv1.KubeadmConfig) (map[bootstrap.SecretKey][]byte, condition, error) {
	keys := bootstrap.SecretKeys(&cfg.Spec)
	if len(keys) == 0 {
		return nil, condition{}, nil
	}
	data := make(map[bootstrap.SecretKey][]byte, len(keys))
	secrets := map[string]*corev1.Secret{}
	for _, k := range keys {
		secret, ok := secrets[k.Name]
		if !ok {
			secret = &corev1.Secret{}
			if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cfg.Namespace, Name: k.Name}, secret); err != nil {
				if apierrors.IsNotFound(err) {
					return nil, waiting(conditions.WaitingForSecretReason, "Waiting for Secret %s referenced by spec.files or spec.users", k.Name), nil
				}
				return nil, condition{}, fmt.Errorf("getting Secret %s/%s: %w", cfg.Namespace, k.Name, err)
			}
			secrets[k.Name] = secret
		}
		v, ok := secret.Data[k.Key]
		if !ok {
			return nil, waiting(conditions.WaitingForSecretReason, "Waiting for key %s in Secret %s referenced by spec.files or spec.users", k.Key, k.Name), nil
		}
		data[k] = v
	}
	return data, condition{}, nil
}

// workloadClient returns a client for the Cluster's workload cluster.
func (r *Reconciler) workloadClient(ctx context.Context, s *scope) (client.Client, error) {
	key := types.NamespacedName{Namespace: s.config.Namespace, Name: s.cluster.Name}
	wl, err := r.Workload.Client(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("connecting to the workload cluster of Cluster %s: %w", key, err)
	}
	return wl, nil
}
