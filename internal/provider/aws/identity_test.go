package aws_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/aws"
	"github.com/mpool-dev/mpool/internal/scalegroup"
	"github.com/mpool-dev/mpool/sim/face/awsface"
)

// TestStaticIdentities reaches the simulated AWS with the access keys of
// AWSClusterStaticIdentities, as the manager does: each identity's key,
// its account's groups, and a wrong key refused as Unauthorized.
func TestStaticIdentities(t *testing.T) {
	e := startAWS(t)
	other := awsface.AWSKey{AccessKeyID: "AKIAOTHERACCOUNT0001", SecretAccessKey: "other-secret", AccountID: "000000000002"}
	if err := awsface.AWSSetKey(e.Srv.Cloud(), other); err != nil {
		t.Fatal(err)
	}
	keys := func(id, secret string) map[string]string {
		return map[string]string{infrav1.AWSAccessKeyIDKey: id, infrav1.AWSSecretAccessKeyKey: secret}
	}
	c := credentialsReader(t,
		staticIdentity("default-account", &infrav1.AllowedNamespaces{}), identitySecret("default-account", keys(awsface.AWSDefaultAccessKeyID, awsface.AWSDefaultSecretAccessKey)),
		staticIdentity("other-account", &infrav1.AllowedNamespaces{}), identitySecret("other-account", keys(other.AccessKeyID, other.SecretAccessKey)),
	)
	sg, err := aws.New(aws.Options{Endpoint: e.FaceURL(), HTTPClient: &http.Client{Timeout: 30 * time.Second},
		Credentials: &aws.IdentityCredentials{Reader: c, Namespace: "mpool-system"}, Region: awsface.AWSDefaultRegion, Clock: e.Clk})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	at := func(identity string) scalegroup.Ref {
		r := ref("pool0")
		r.Credentials = aws.CredentialsPrefix + identity
		return r
	}

	if _, err := sg.Apply(ctx, at("default-account"), spec(1, "h1", token1)); err != nil {
		t.Fatal(err)
	}
	if _, err := sg.Get(ctx, at("default-account")); err != nil {
		t.Fatalf("the default account's group: %v", err)
	}
	if _, err := sg.Get(ctx, at("other-account")); !scalegroup.IsNotFound(err) {
		t.Fatalf("another account has no such group: %v", err)
	}

	// The Secret is changed to a wrong secret: the new key is used at once.
	var sec corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: "mpool-system", Name: "other-account-secret"}, &sec); err != nil {
		t.Fatal(err)
	}
	sec.Data[infrav1.AWSSecretAccessKeyKey] = []byte("wrong")
	if err := c.Update(ctx, &sec); err != nil {
		t.Fatal(err)
	}
	if _, err := sg.Get(ctx, at("other-account")); !scalegroup.IsUnauthorized(err) || !strings.Contains(err.Error(), "AWSClusterStaticIdentity/other-account") {
		t.Fatalf("a wrong secret: %v", err)
	}
}
