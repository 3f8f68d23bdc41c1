package aws_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

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
	s := runtime.NewScheme()
	if err := infrav1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	secret := func(name, key, value string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "mpool-system", Name: name},
			Data: map[string][]byte{infrav1.AWSAccessKeyIDKey: []byte(key), infrav1.AWSSecretAccessKeyKey: []byte(value)}}
	}
	identity := func(name string) *infrav1.AWSClusterStaticIdentity {
		return &infrav1.AWSClusterStaticIdentity{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: infrav1.AWSClusterStaticIdentitySpec{SecretRef: name, AllowedNamespaces: &infrav1.AllowedNamespaces{}}}
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(
		identity("default-account"), secret("default-account", awsface.AWSDefaultAccessKeyID, awsface.AWSDefaultSecretAccessKey),
		identity("other-account"), secret("other-account", other.AccessKeyID, other.SecretAccessKey),
	).Build()
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
	if err := c.Get(ctx, client.ObjectKey{Namespace: "mpool-system", Name: "other-account"}, &sec); err != nil {
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
