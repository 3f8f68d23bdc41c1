package kubeadmconfig

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
)

// Token bookkeeping.
const (
	// TokenSecretAnnotation on the data Secret names the workload-cluster
	// Secret (kube-system/bootstrap-token-<id>) of the token the data carries.
	TokenSecretAnnotation = "bootstrap.cluster.x-k8s.io/bootstrap-token-secret"
	// TokenConfigUIDLabel on a workload-cluster token Secret is the UID of the
	// KubeadmConfig that created it.
	TokenConfigUIDLabel = "bootstrap.cluster.x-k8s.io/kubeadmconfig-uid"
	// NodeTokenGroup is the extra group of pool tokens; kubeadm's RBAC lets it
	// bootstrap a kubelet.
	NodeTokenGroup = "system:bootstrappers:kubeadm:default-node-token"
	// DefaultTokenTTL is how long a bootstrap token is valid.
	DefaultTokenTTL = 15 * time.Minute
)

// tokenAction is what a token needs now.
type tokenAction int

const (
	tokenKeep tokenAction = iota
	tokenExtend
	tokenRotate
)

func (a tokenAction) String() string {
	switch a {
	case tokenExtend:
		return "extend"
	case tokenRotate:
		return "rotate"
	default:
		return "keep"
	}
}

// decideTokenAction is the token lifetime policy, taken from Cluster API's
// kubeadm bootstrap provider. While the pool is joining instances the token
// is extended once less than 5/6 of ttl is left (checked every ttl/3, so two
// checks can fail before it expires). Otherwise it is rotated once less than
// ttl/2 is left, so the data always carries a token that a scale-up can use.
func decideTokenAction(now, expiration time.Time, ttl time.Duration, joining bool) tokenAction {
	remaining := expiration.Sub(now)
	if joining {
		if remaining < ttl*5/6 {
			return tokenExtend
		}
		return tokenKeep
	}
	if remaining < ttl/2 {
		return tokenRotate
	}
	return tokenKeep
}

// tokenCheckInterval is how often a managed token is looked at.
func tokenCheckInterval(ttl time.Duration) time.Duration { return ttl / 3 }

// tokenExpiration returns the expiration of a token Secret. A missing or
// unparsable expiration reads as already expired, so that it is rewritten.
func tokenExpiration(s *corev1.Secret) time.Time {
	t, err := time.Parse(time.RFC3339, string(s.Data[bootstrapapi.BootstrapTokenExpirationKey]))
	if err != nil {
		return time.Time{}
	}
	return t
}

// createToken creates a new bootstrap token in the workload cluster for cfg,
// valid until expiration, and returns the token and its Secret's name.
func createToken(ctx context.Context, wl client.Client, cfg *bootstrapv1.KubeadmConfig, pool types.NamespacedName, expiration time.Time) (token, secretName string, err error) {
	token, err = bootstraputil.GenerateBootstrapToken()
	if err != nil {
		return "", "", fmt.Errorf("generating a bootstrap token: %w", err)
	}
	m := bootstraputil.BootstrapTokenRegexp.FindStringSubmatch(token)
	if len(m) != 3 {
		return "", "", fmt.Errorf("generated bootstrap token does not match %s", bootstrapapi.BootstrapTokenPattern)
	}
	id, secret := m[1], m[2]
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:      bootstraputil.BootstrapTokenSecretName(id),
			Namespace: metav1.NamespaceSystem,
			Labels:    map[string]string{TokenConfigUIDLabel: string(cfg.UID)},
		},
		Type: bootstrapapi.SecretTypeBootstrapToken,
		Data: map[string][]byte{
			bootstrapapi.BootstrapTokenIDKey:               []byte(id),
			bootstrapapi.BootstrapTokenSecretKey:           []byte(secret),
			bootstrapapi.BootstrapTokenExpirationKey:       []byte(expiration.UTC().Format(time.RFC3339)),
			bootstrapapi.BootstrapTokenUsageAuthentication: []byte("true"),
			bootstrapapi.BootstrapTokenUsageSigningKey:     []byte("true"),
			bootstrapapi.BootstrapTokenExtraGroupsKey:      []byte(NodeTokenGroup),
			bootstrapapi.BootstrapTokenDescriptionKey: []byte(fmt.Sprintf(
				"Bootstrap token of MachinePool %s, created by mpool for KubeadmConfig %s", pool, client.ObjectKeyFromObject(cfg))),
		},
	}
	if err := wl.Create(ctx, s); err != nil {
		return "", "", fmt.Errorf("creating bootstrap token Secret %s/%s in the workload cluster: %w", s.Namespace, s.Name, err)
	}
	return token, s.Name, nil
}

// listTokens returns the token Secrets cfg created in the workload cluster.
func listTokens(ctx context.Context, wl client.Client, cfg *bootstrapv1.KubeadmConfig) ([]corev1.Secret, error) {
	list := &corev1.SecretList{}
	if err := wl.List(ctx, list, client.InNamespace(metav1.NamespaceSystem), client.MatchingLabels{TokenConfigUIDLabel: string(cfg.UID)}); err != nil {
		return nil, fmt.Errorf("listing the bootstrap tokens of KubeadmConfig %s in the workload cluster: %w", client.ObjectKeyFromObject(cfg), err)
	}
	return list.Items, nil
}

// extendToken sets a token Secret's expiration.
func extendToken(ctx context.Context, wl client.Client, s *corev1.Secret, expiration time.Time) error {
	before := s.DeepCopy()
	s.Data[bootstrapapi.BootstrapTokenExpirationKey] = []byte(expiration.UTC().Format(time.RFC3339))
	if err := wl.Patch(ctx, s, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("extending bootstrap token Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	return nil
}

// deleteToken deletes a token Secret; one that is already gone is fine.
func deleteToken(ctx context.Context, wl client.Client, name string) error {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceSystem}}
	if err := wl.Delete(ctx, s); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting bootstrap token Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	return nil
}

// carriedTokenRE matches, with its neighbouring bytes in groups 1 and 3, the
// token in bootstrap data whose workload-cluster Secret is secretName
// (bootstrap-token-<id>). It returns false for a name that is not a token
// Secret's.
func carriedTokenRE(secretName string) (*regexp.Regexp, bool) {
	id, ok := strings.CutPrefix(secretName, bootstrapapi.BootstrapTokenSecretPrefix)
	if !ok || !bootstraputil.BootstrapTokenIDRegexp.MatchString(id) {
		return nil, false
	}
	return regexp.MustCompile(`(^|[^a-z0-9])(` + id + `\.[a-z0-9]{16})($|[^a-z0-9])`), true
}

// carriedToken returns the token whose Secret is secretName as data carries
// it, and false when data carries no such token.
func carriedToken(data []byte, secretName string) (string, bool) {
	re, ok := carriedTokenRE(secretName)
	if !ok {
		return "", false
	}
	m := re.FindSubmatch(data)
	if m == nil {
		return "", false
	}
	return string(m[2]), true
}

// swapToken returns data with the token whose Secret is oldSecretName
// replaced by newToken, and false when data carries no such token.
func swapToken(data []byte, oldSecretName, newToken string) ([]byte, bool) {
	re, ok := carriedTokenRE(oldSecretName)
	if !ok || !re.Match(data) {
		return nil, false
	}
	return re.ReplaceAll(data, []byte("${1}"+newToken+"${3}")), true
}
