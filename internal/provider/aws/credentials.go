package aws

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/kit"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// IdentityCredentials resolves an Auto Scaling Group's credentials: the
// AWSClusterStaticIdentity its AWSCluster names (an access key in a Secret
// of the manager's namespace), or the manager's own when it names none (or
// names AWSClusterControllerIdentity). A static identity's provider is
// built once and rebuilt when the identity or its Secret changes.
type IdentityCredentials struct {
	// Reader reads AWSClusterStaticIdentities, Secrets and Namespaces (the
	// manager's cached client).
	Reader client.Reader
	// Namespace is the manager's namespace, where the identities' Secrets
	// live.
	Namespace string
	// Default is the manager's own credentials, nil when it has none
	// (NewDefaultCredentials builds them from the SDK's default chain,
	// NewStaticCredentials from flags).
	Default aws.CredentialsProvider

	cache kit.CredentialCache[aws.CredentialsProvider]
}

var _ Credentials = (*IdentityCredentials)(nil)

// CredentialsPrefix prefixes the name of an AWSClusterStaticIdentity in a
// Ref's Credentials.
const CredentialsPrefix = infrav1.AWSClusterStaticIdentityKind + "/"

// CredentialsProvider implements Credentials.
func (c *IdentityCredentials) CredentialsProvider(ctx context.Context, ref scalegroup.Ref) (aws.CredentialsProvider, error) {
	if ref.Credentials == "" {
		return kit.OwnCredentials(c.Default, "the AWSCluster names no identityRef and the manager has no AWS credentials of its own: "+
			"set the AWSCluster's spec.identityRef to an AWSClusterStaticIdentity, or give the manager "+
			"AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or a shared config profile)")
	}
	name, ok := strings.CutPrefix(ref.Credentials, CredentialsPrefix)
	if !ok || name == "" || strings.Contains(name, "/") {
		return nil, scalegroup.NewInvalid(fmt.Sprintf("credentials %q are not %s<name>", ref.Credentials, CredentialsPrefix))
	}
	id := &infrav1.AWSClusterStaticIdentity{}
	if err := kit.ReadCredentialsObject(ctx, c.Reader, types.NamespacedName{Name: name}, id, "AWSClusterStaticIdentity "+name,
		fmt.Sprintf("AWSClusterStaticIdentity %s does not exist: create it, or fix the AWSCluster's spec.identityRef", name)); err != nil {
		return nil, err
	}
	if err := kit.CheckAllowedNamespace(ctx, c.Reader, id.Spec.AllowedNamespaces, "AWSClusterStaticIdentity "+id.Name, ref.Namespace); err != nil {
		return nil, err
	}
	if id.Spec.SecretRef == "" {
		return nil, scalegroup.NewUnauthorized(fmt.Sprintf("AWSClusterStaticIdentity %s has no spec.secretRef: name the Secret (in namespace %s) that holds its access key", name, c.Namespace), nil)
	}
	secretRef := types.NamespacedName{Namespace: c.Namespace, Name: id.Spec.SecretRef}
	secret := &corev1.Secret{}
	if err := kit.ReadCredentialsObject(ctx, c.Reader, secretRef, secret, "the Secret of AWSClusterStaticIdentity "+name,
		fmt.Sprintf("Secret %s of AWSClusterStaticIdentity %s does not exist: create it in the manager's namespace %s with keys %s and %s",
			secretRef, name, c.Namespace, infrav1.AWSAccessKeyIDKey, infrav1.AWSSecretAccessKeyKey)); err != nil {
		return nil, err
	}
	keyID, secretKey := secret.Data[infrav1.AWSAccessKeyIDKey], secret.Data[infrav1.AWSSecretAccessKeyKey]
	if len(keyID) == 0 || len(secretKey) == 0 {
		return nil, scalegroup.NewUnauthorized(fmt.Sprintf("Secret %s of AWSClusterStaticIdentity %s needs the keys %s and %s",
			secretRef, name, infrav1.AWSAccessKeyIDKey, infrav1.AWSSecretAccessKeyKey), nil)
	}

	return c.cache.Get(name, id.ResourceVersion+"/"+secret.ResourceVersion, func() (aws.CredentialsProvider, error) {
		return NewStaticCredentials(string(keyID), string(secretKey), string(secret.Data[infrav1.AWSSessionTokenKey])), nil
	})
}

// NewStaticCredentials returns the credentials of an access key (and
// session token, "" for none), for the manager's own credentials given as
// flags and for AWSClusterStaticIdentities. The provider is a pointer, so
// that the SDK clients built for it are cached with it.
func NewStaticCredentials(accessKeyID, secretAccessKey, sessionToken string) aws.CredentialsProvider {
	return aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(accessKeyID, secretAccessKey, sessionToken))
}

// NewDefaultCredentials returns the manager's own credentials from the
// SDK's default chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, the
// shared config and credentials files and their profiles, web identity,
// the container and instance metadata endpoints), cached, and the region
// that chain names ("" when none). It does not contact AWS: credentials
// that cannot be retrieved fail the calls that need them, as Unauthorized.
// The chain's own requests use the SDK's HTTP client (which honours
// AWS_CA_BUNDLE).
func NewDefaultCredentials(ctx context.Context) (aws.CredentialsProvider, string, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("loading the manager's AWS configuration: %w", err)
	}
	return cfg.Credentials, cfg.Region, nil
}
