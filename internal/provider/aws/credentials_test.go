package aws_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/aws"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// credentialsReader is the manager's client of cluster identities, their
// Secrets and namespaces, holding objs.
func credentialsReader(t testing.TB, objs ...client.Object) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := infrav1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
}

// staticIdentity is the AWSClusterStaticIdentity name, whose access key is
// in identitySecret(name, ...).
func staticIdentity(name string, allowed *infrav1.AllowedNamespaces) *infrav1.AWSClusterStaticIdentity {
	return &infrav1.AWSClusterStaticIdentity{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       infrav1.AWSClusterStaticIdentitySpec{SecretRef: name + "-secret", AllowedNamespaces: allowed},
	}
}

// identitySecret is the Secret of staticIdentity(name) in the manager's
// namespace, holding data.
func identitySecret(name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "mpool-system", Name: name + "-secret"}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func TestIdentityCredentials(t *testing.T) {
	keys := map[string]string{infrav1.AWSAccessKeyIDKey: "AKID", infrav1.AWSSecretAccessKeyKey: "SECRET", infrav1.AWSSessionTokenKey: "TOKEN"}
	reader := credentialsReader(t,
		staticIdentity("all", &infrav1.AllowedNamespaces{}), identitySecret("all", keys),
		staticIdentity("none", nil), identitySecret("none", keys),
		staticIdentity("listed", &infrav1.AllowedNamespaces{NamespaceList: []string{"team-a"}}), identitySecret("listed", keys),
		staticIdentity("labelled", &infrav1.AllowedNamespaces{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"aws": "yes"}}}), identitySecret("labelled", keys),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b", Labels: map[string]string{"aws": "yes"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-c"}},
		staticIdentity("nosecret", &infrav1.AllowedNamespaces{}),
		staticIdentity("badsecret", &infrav1.AllowedNamespaces{}), identitySecret("badsecret", map[string]string{infrav1.AWSAccessKeyIDKey: "AKID"}),
	)
	def := aws.NewStaticCredentials("DEFAULT", "x", "")
	c := &aws.IdentityCredentials{Reader: reader, Namespace: "mpool-system", Default: def}
	for _, tc := range []struct {
		name, creds, namespace string
		reason                 scalegroup.Reason
		mentions               string
	}{
		{name: "no identity: the manager's own", namespace: "team-a"},
		{name: "an identity allowing every namespace", creds: "AWSClusterStaticIdentity/all", namespace: "team-a"},
		{name: "an identity without allowedNamespaces allows none", creds: "AWSClusterStaticIdentity/none", namespace: "team-a", reason: scalegroup.ReasonUnauthorized, mentions: "allowedNamespaces"},
		{name: "a listed namespace", creds: "AWSClusterStaticIdentity/listed", namespace: "team-a"},
		{name: "an unlisted namespace", creds: "AWSClusterStaticIdentity/listed", namespace: "team-b", reason: scalegroup.ReasonUnauthorized, mentions: "team-b"},
		{name: "a namespace matching the selector", creds: "AWSClusterStaticIdentity/labelled", namespace: "team-b"},
		{name: "a namespace not matching the selector", creds: "AWSClusterStaticIdentity/labelled", namespace: "team-c", reason: scalegroup.ReasonUnauthorized},
		{name: "a missing identity", creds: "AWSClusterStaticIdentity/missing", namespace: "team-a", reason: scalegroup.ReasonUnauthorized, mentions: "does not exist"},
		{name: "a missing Secret says where it is looked for", creds: "AWSClusterStaticIdentity/nosecret", namespace: "team-a", reason: scalegroup.ReasonUnauthorized, mentions: "mpool-system"},
		{name: "a Secret without the secret key", creds: "AWSClusterStaticIdentity/badsecret", namespace: "team-a", reason: scalegroup.ReasonUnauthorized, mentions: infrav1.AWSSecretAccessKeyKey},
		{name: "a malformed reference", creds: "ns/name", namespace: "team-a", reason: scalegroup.ReasonInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := c.CredentialsProvider(context.Background(), scalegroup.Ref{Name: "g", Credentials: tc.creds, Namespace: tc.namespace})
			if tc.reason != "" {
				if scalegroup.ReasonOf(err) != tc.reason || !strings.Contains(errString(err), tc.mentions) {
					t.Errorf("error %v, want %s mentioning %q", err, tc.reason, tc.mentions)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			v, err := p.Retrieve(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			want := "AKID"
			if tc.creds == "" {
				want = "DEFAULT"
			}
			if v.AccessKeyID != want || (tc.creds != "" && v.SessionToken != "TOKEN") {
				t.Errorf("credentials %s/%s, want %s", v.AccessKeyID, v.SessionToken, want)
			}
		})
	}

	// The same identity and Secret: the same provider (its clients are
	// cached by it).
	ref := scalegroup.Ref{Name: "g", Credentials: "AWSClusterStaticIdentity/all", Namespace: "x"}
	p1, _ := c.CredentialsProvider(context.Background(), ref)
	p2, _ := c.CredentialsProvider(context.Background(), ref)
	if p1 != p2 {
		t.Errorf("an unchanged identity gave another provider")
	}

	none := &aws.IdentityCredentials{Reader: reader, Namespace: "mpool-system"}
	if _, err := none.CredentialsProvider(context.Background(), scalegroup.Ref{Name: "g"}); !scalegroup.IsUnauthorized(err) || !strings.Contains(err.Error(), "identityRef") {
		t.Errorf("no identity and no default: %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
