package kubeenv

import (
	"context"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestControlPlaneRestartKeepsDataAndAuthenticatesBootstrapTokens starts a
// control plane on a data directory, proves the bootstrap-token authenticator
// is on (a token Secret authenticates as system:bootstrap:<id>), and restarts
// it on the same directory: same address, same credentials, same objects.
func TestControlPlaneRestartKeepsDataAndAuthenticatesBootstrapTokens(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	dir := t.TempDir()
	cp, err := Start(ctx, Options{DataDir: dir, Progress: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	cs := kubernetes.NewForConfigOrDie(cp.RESTConfig())

	_, err = cs.CoreV1().Secrets("kube-system").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-abcdef", Namespace: "kube-system"},
		Type:       corev1.SecretTypeBootstrapToken,
		StringData: map[string]string{
			"token-id": "abcdef", "token-secret": "0123456789abcdef",
			"usage-bootstrap-authentication": "true",
			"expiration":                     time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tokenCfg := &rest.Config{Host: cp.Host(), BearerToken: "abcdef.0123456789abcdef", TLSClientConfig: rest.TLSClientConfig{CAData: cp.CAData()}}
	review, err := kubernetes.NewForConfigOrDie(tokenCfg).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("authenticating with a bootstrap token: %v", err)
	}
	if got := review.Status.UserInfo.Username; got != "system:bootstrap:abcdef" {
		t.Errorf("bootstrap token user = %q, want system:bootstrap:abcdef", got)
	}

	host := cp.Host()
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keep"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cp.Stop(); err != nil {
		t.Fatalf("stopping: %v", err)
	}
	cp2, err := Start(ctx, Options{DataDir: dir})
	if err != nil {
		t.Fatalf("restarting: %v", err)
	}
	defer cp2.Stop()
	if cp2.Host() != host {
		t.Errorf("address changed across restart: %s -> %s", host, cp2.Host())
	}
	if _, err := kubernetes.NewForConfigOrDie(cp2.RESTConfig()).CoreV1().ConfigMaps("default").Get(ctx, "keep", metav1.GetOptions{}); err != nil {
		t.Errorf("object lost across restart: %v", err)
	}
	if _, err := Start(ctx, Options{DataDir: dir}); err == nil {
		t.Error("a second control plane on the same data directory was allowed")
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }
