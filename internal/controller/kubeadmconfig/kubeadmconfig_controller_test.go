package kubeadmconfig

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/api/conditions"
	"github.com/mpool-dev/mpool/internal/bootstrap"
	"github.com/mpool-dev/mpool/internal/events"
	"github.com/mpool-dev/mpool/internal/testenv"
	simcloudinit "github.com/mpool-dev/mpool/sim/cloudinit"
)

// joinConfig reads the JoinConfiguration out of bootstrap data the way the
// simulated cloud's instances do.
func joinConfig(t *testing.T, data []byte) *simcloudinit.JoinConfig {
	t.Helper()
	cc, err := simcloudinit.Parse(simcloudinit.Render(data, simcloudinit.Metadata{LocalHostname: "node-0"}))
	if err != nil {
		t.Fatalf("parsing bootstrap data: %v", err)
	}
	b, err := cc.JoinConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	jc, err := simcloudinit.ParseJoinConfiguration(b)
	if err != nil {
		t.Fatal(err)
	}
	return jc
}

// caPin computes kubeadm's CA pin from env.CAData independently of
// internal/bootstrap: SHA-256 of the re-marshalled public key.
func caPin(t *testing.T) string {
	t.Helper()
	block, _ := pem.Decode(env.CAData)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	spki, err := x509.MarshalPKIXPublicKey(cert.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(spki)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func getConfig(t *testing.T, key client.ObjectKey) *bootstrapv1.KubeadmConfig {
	t.Helper()
	cfg := &bootstrapv1.KubeadmConfig{}
	if err := env.Client.Get(context.Background(), key, cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func expectCondition(t *testing.T, key client.ObjectKey, condType string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	testenv.Eventually(t, pollTimeout, func() error {
		cfg := &bootstrapv1.KubeadmConfig{}
		if err := env.Client.Get(context.Background(), key, cfg); err != nil {
			return err
		}
		c := meta.FindStatusCondition(cfg.Status.Conditions, condType)
		if c == nil || c.Status != status || c.Reason != reason {
			return fmt.Errorf("condition %s = %+v, want %s/%s", condType, c, status, reason)
		}
		return nil
	})
}

// TestSeedPoolGetsJoinData is the acceptance test: a pool created from a
// seed's KubeadmConfig example gets a data Secret whose cloud-init joins with
// a working token and the right CA pin, and deleting the config deletes the
// token.
func TestSeedPoolGetsJoinData(t *testing.T) {
	tests := []struct {
		name    string
		seed    string
		version string
		wantAPI string
	}{
		{name: "seed 004 AWS", seed: "seed004-aws.kubeadmconfig.yaml", version: "v1.16.8", wantAPI: bootstrap.KubeadmV1Beta3},
		{name: "seed 000 Azure", seed: "seed000-azure.kubeadmconfig.yaml", version: "v1.22.0", wantAPI: bootstrap.KubeadmV1Beta3},
		{name: "seed 004 on v1.31", seed: "seed004-aws.kubeadmconfig.yaml", version: "v1.31.1", wantAPI: bootstrap.KubeadmV1Beta4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.NewNamespace(t)
			startController(t, ns, DefaultTokenTTL)
			f := &fixture{ns: ns, seed: tt.seed, version: tt.version}
			f.create(t)
			key := client.ObjectKeyFromObject(f.config)

			secret := dataSecret(t, key)
			if !metav1.IsControlledBy(secret, f.config) {
				t.Errorf("data Secret is not controlled by the KubeadmConfig: %v", secret.OwnerReferences)
			}
			if secret.Type != ClusterSecretType || secret.Labels[clusterv1.ClusterNameLabel] != clusterName {
				t.Errorf("data Secret type %q labels %v", secret.Type, secret.Labels)
			}
			if string(secret.Data["format"]) != "cloud-config" || !bytes.HasPrefix(secret.Data["value"], []byte(bootstrap.Header)) {
				t.Errorf("data Secret format %q, value starts %q", secret.Data["format"], firstLine(secret.Data["value"]))
			}

			jc := joinConfig(t, secret.Data["value"])
			ep := apiServerEndpoint(t)
			if want := net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port))); jc.APIServerEndpoint != want {
				t.Errorf("apiServerEndpoint = %s, want %s", jc.APIServerEndpoint, want)
			}
			if want := []string{caPin(t)}; !reflect.DeepEqual(jc.CACertHashes, want) {
				t.Errorf("caCertHashes = %v, want %v", jc.CACertHashes, want)
			}
			if jc.APIVersion != tt.wantAPI || jc.NodeName != "node-0" {
				t.Errorf("JoinConfiguration %s for node %q, want %s for node-0", jc.APIVersion, jc.NodeName, tt.wantAPI)
			}
			expectTokenWorks(t, jc.DiscoveryToken)

			tokenName := secret.Annotations[TokenSecretAnnotation]
			if tokenName != bootstrapapi.BootstrapTokenSecretPrefix+jc.DiscoveryToken[:6] {
				t.Errorf("data Secret annotation %s = %q, want the token's Secret", TokenSecretAnnotation, tokenName)
			}
			tok, err := getToken(t, tokenName)
			if err != nil {
				t.Fatal(err)
			}
			if tok.Type != bootstrapapi.SecretTypeBootstrapToken || tok.Labels[TokenConfigUIDLabel] != string(f.config.UID) ||
				string(tok.Data[bootstrapapi.BootstrapTokenUsageSigningKey]) != "true" ||
				!strings.Contains(string(tok.Data[bootstrapapi.BootstrapTokenDescriptionKey]), ns+"/"+f.poolName) {
				t.Errorf("token Secret = type %s labels %v data %v", tok.Type, tok.Labels, tok.Data)
			}
			exp := tokenExpiration(tok)
			if d := time.Until(exp); d < DefaultTokenTTL-time.Minute || d > DefaultTokenTTL+time.Minute {
				t.Errorf("token expires in %s, want about %s", d, DefaultTokenTTL)
			}

			expectCondition(t, key, bootstrapv1.KubeadmConfigDataSecretAvailableCondition, metav1.ConditionTrue, bootstrapv1.KubeadmConfigDataSecretAvailableReason)
			expectCondition(t, key, conditions.BootstrapTokenAvailableCondition, metav1.ConditionTrue, conditions.TokenValidReason)
			cfg := getConfig(t, key)
			if created := ptr.Deref(cfg.Status.Initialization.DataSecretCreated, false); !created || cfg.Status.DataSecretName != secret.Name || cfg.Status.ObservedGeneration != cfg.Generation {
				t.Errorf("status = dataSecretCreated %v dataSecretName %q observedGeneration %d (generation %d)", created, cfg.Status.DataSecretName, cfg.Status.ObservedGeneration, cfg.Generation)
			}
			for _, typ := range []string{bootstrapv1.KubeadmConfigCertificatesAvailableCondition, clusterv1.ReadyCondition} {
				if c := meta.FindStatusCondition(cfg.Status.Conditions, typ); c == nil || c.Status != metav1.ConditionTrue {
					t.Errorf("condition %s = %+v, want True", typ, c)
				}
			}
			if !controllerutil.ContainsFinalizer(cfg, Finalizer) {
				t.Errorf("finalizer %s missing", Finalizer)
			}
			expectNoSecretsLeaked(t, ns, key, jc.DiscoveryToken, secret.Data["value"])

			if err := env.Client.Delete(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			testenv.Eventually(t, pollTimeout, func() error {
				if _, err := getToken(t, tokenName); !apierrors.IsNotFound(err) {
					return fmt.Errorf("token Secret still there (%v)", err)
				}
				if err := env.Client.Get(ctx, key, &bootstrapv1.KubeadmConfig{}); !apierrors.IsNotFound(err) {
					return fmt.Errorf("KubeadmConfig still there (%v)", err)
				}
				return nil
			})
			expectTokenRefused(t, jc.DiscoveryToken)
		})
	}
}

// expectNoSecretsLeaked checks that neither the token nor the data appears in
// the config's status or in the namespace's events.
func expectNoSecretsLeaked(t *testing.T, ns string, key client.ObjectKey, token string, data []byte) {
	t.Helper()
	cfg := getConfig(t, key)
	status := fmt.Sprintf("%+v %+v", cfg.Status, cfg.Annotations)
	secretHalf := token[7:]
	if strings.Contains(status, secretHalf) {
		t.Errorf("KubeadmConfig status or annotations contain the token")
	}
	events := &eventsv1.EventList{}
	testenv.Eventually(t, pollTimeout, func() error {
		if err := env.Client.List(context.Background(), events, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(events.Items) == 0 {
			return errNotYet
		}
		return nil
	})
	for _, e := range events.Items {
		if strings.Contains(e.Note, secretHalf) || strings.Contains(e.Note, "#cloud-config") || bytes.Contains(data, []byte(e.Note)) && len(e.Note) > 40 {
			t.Errorf("event %s/%s leaks a secret: %q", e.Reason, e.Action, e.Note)
		}
	}
}

func firstLine(b []byte) string {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return string(line)
}

// testTTL is the short token TTL (TokenTTL option) of the lifetime tests; the
// fake clock, not real time, decides when the controller acts.
const testTTL = 3 * time.Minute

// TestTokenExtendedWhilePoolJoins: while the pool has instances to join, the
// token is extended in place (the data Secret does not change); an expired
// token is refused by the API server, and extending it makes it work again.
func TestTokenExtendedWhilePoolJoins(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t)
	clk := startController(t, ns, testTTL)
	f := &fixture{ns: ns}
	f.create(t)
	key := client.ObjectKeyFromObject(f.config)
	secret := dataSecret(t, key)
	tokenName := secret.Annotations[TokenSecretAnnotation]
	token := joinConfig(t, secret.Data["value"]).DiscoveryToken
	expectTokenWorks(t, token)
	tok, err := getToken(t, tokenName)
	if err != nil {
		t.Fatal(err)
	}
	firstExpiry := tokenExpiration(tok)

	expectCondition(t, key, conditions.BootstrapTokenAvailableCondition, metav1.ConditionTrue, conditions.TokenValidReason)

	// Less than 5/6 of the TTL left: the next look extends the token.
	clk.Step(testTTL / 3)
	poke(t, key)
	wantExpiry := clk.Now().Add(testTTL).UTC().Truncate(time.Second)
	testenv.Eventually(t, pollTimeout, func() error {
		tok, err := getToken(t, tokenName)
		if err != nil {
			return err
		}
		if got := tokenExpiration(tok); !got.Equal(wantExpiry) {
			return fmt.Errorf("token expires at %s, want %s (was %s)", got, wantExpiry, firstExpiry)
		}
		return nil
	})
	after := &corev1.Secret{}
	if err := env.Client.Get(ctx, key, after); err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != secret.ResourceVersion {
		t.Errorf("extending the token changed the data Secret")
	}

	// An expired token is refused, and kube-controller-manager's token
	// cleaner deletes it; the pool still joins, so the controller puts a new
	// token into the data Secret in place.
	setExpiration(t, tokenName, time.Now().Add(-time.Minute))
	expectTokenRefused(t, token)
	testenv.Eventually(t, pollTimeout, func() error {
		if _, err := getToken(t, tokenName); !apierrors.IsNotFound(err) {
			return fmt.Errorf("expired token Secret not cleaned up yet (%v)", err)
		}
		return nil
	})
	poke(t, key)
	testenv.Eventually(t, pollTimeout, func() error {
		if err := env.Client.Get(ctx, key, after); err != nil {
			return err
		}
		if after.Annotations[TokenSecretAnnotation] == tokenName {
			return fmt.Errorf("expired token not replaced yet")
		}
		return nil
	})
	newToken := joinConfig(t, after.Data["value"]).DiscoveryToken
	expectTokenWorks(t, newToken)
	if !bytes.Equal(bytes.ReplaceAll(after.Data["value"], []byte(newToken), []byte(token)), secret.Data["value"]) {
		t.Errorf("replacing the token changed more than the token")
	}
}

func setExpiration(t *testing.T, name string, at time.Time) {
	t.Helper()
	tok, err := getToken(t, name)
	if err != nil {
		t.Fatal(err)
	}
	before := tok.DeepCopy()
	tok.Data[bootstrapapi.BootstrapTokenExpirationKey] = []byte(at.UTC().Format(time.RFC3339))
	if err := env.Client.Patch(context.Background(), tok, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

// setPoolJoined marks the pool as fully joined: infrastructure ready and a
// Node for every replica.
func setPoolJoined(t *testing.T, pool *clusterv1.MachinePool) {
	t.Helper()
	mp := &clusterv1.MachinePool{}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(pool), mp); err != nil {
		t.Fatal(err)
	}
	before := mp.DeepCopy()
	mp.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	mp.Status.Replicas = ptr.To[int32](1)
	mp.Status.NodeRefs = []corev1.ObjectReference{{APIVersion: "v1", Kind: "Node", Name: "node-0"}}
	mp.Status.Phase = string(clusterv1.MachinePoolPhaseRunning)
	if err := env.Client.Status().Patch(context.Background(), mp, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

// TestTokenRotatedBeforeExpiry: once the pool has joined all its instances,
// the token is rotated before it expires; the data Secret changes only in the
// token, the KubeadmConfig not at all, and the old token stops working.
func TestTokenRotatedBeforeExpiry(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t)
	f := &fixture{ns: ns, seed: "seed000-azure.kubeadmconfig.yaml", version: "v1.31.0"}
	f.create(t)
	setPoolJoined(t, f.pool)
	// Started after the pool is marked joined, the controller never sees it
	// joining, so nothing but the clock decides what happens to the token.
	clk := startController(t, ns, testTTL)
	key := client.ObjectKeyFromObject(f.config)
	old := dataSecret(t, key)
	oldName := old.Annotations[TokenSecretAnnotation]
	oldToken := joinConfig(t, old.Data["value"]).DiscoveryToken
	expectCondition(t, key, conditions.BootstrapTokenAvailableCondition, metav1.ConditionTrue, conditions.TokenValidReason)
	cfgBefore := getConfig(t, key)

	// Less than half of the TTL left (decideTokenAction's threshold): the
	// next look rotates the token.
	clk.Step(testTTL/2 + time.Minute)
	poke(t, key)
	var rotated *corev1.Secret
	testenv.Eventually(t, pollTimeout, func() error {
		rotated = &corev1.Secret{}
		if err := env.Client.Get(ctx, key, rotated); err != nil {
			return err
		}
		if rotated.Annotations[TokenSecretAnnotation] == oldName {
			return fmt.Errorf("token not rotated yet")
		}
		return nil
	})
	newName := rotated.Annotations[TokenSecretAnnotation]
	newToken := joinConfig(t, rotated.Data["value"]).DiscoveryToken
	if newToken == oldToken || newName != bootstrapapi.BootstrapTokenSecretPrefix+newToken[:6] {
		t.Fatalf("rotation gave token Secret %s", newName)
	}

	// The data changed in the token only.
	if !bytes.Equal(bytes.ReplaceAll(rotated.Data["value"], []byte(newToken), []byte(oldToken)), old.Data["value"]) {
		t.Errorf("rotation changed more than the token:\n--- before\n%s\n--- after\n%s", old.Data["value"], rotated.Data["value"])
	}
	if !bytes.Equal(bootstrap.MaskBootstrapTokens(rotated.Data["value"]), bootstrap.MaskBootstrapTokens(old.Data["value"])) {
		t.Errorf("masked data differs after rotation")
	}
	if !reflect.DeepEqual(rotated.OwnerReferences, old.OwnerReferences) || !reflect.DeepEqual(rotated.Labels, old.Labels) ||
		rotated.Type != old.Type || string(rotated.Data["format"]) != string(old.Data["format"]) || rotated.UID != old.UID {
		t.Errorf("rotation changed the data Secret's metadata, type or format")
	}
	cfgAfter := getConfig(t, key)
	if !reflect.DeepEqual(cfgAfter.Spec, cfgBefore.Spec) || cfgAfter.Generation != cfgBefore.Generation {
		t.Errorf("rotation changed the KubeadmConfig spec")
	}

	expectTokenWorks(t, newToken)
	testenv.Eventually(t, pollTimeout, func() error {
		if _, err := getToken(t, oldName); !apierrors.IsNotFound(err) {
			return fmt.Errorf("old token Secret still there (%v)", err)
		}
		return nil
	})
	expectTokenRefused(t, oldToken)
	tok, err := getToken(t, newName)
	if err != nil {
		t.Fatal(err)
	}
	if want := clk.Now().Add(testTTL).UTC().Truncate(time.Second); !tokenExpiration(tok).Equal(want) {
		t.Errorf("new token expires at %s, want %s", tokenExpiration(tok), want)
	}
}

// TestTokenReplacedWhenDeleted: a token deleted behind the controller's back
// is replaced, the data Secret updated in place.
func TestTokenReplacedWhenDeleted(t *testing.T) {
	ns := env.NewNamespace(t)
	startController(t, ns, DefaultTokenTTL)
	f := &fixture{ns: ns}
	f.create(t)
	key := client.ObjectKeyFromObject(f.config)
	old := dataSecret(t, key)
	oldName := old.Annotations[TokenSecretAnnotation]
	if err := env.Client.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: oldName}}); err != nil {
		t.Fatal(err)
	}
	poke(t, key)
	s := &corev1.Secret{}
	testenv.Eventually(t, pollTimeout, func() error {
		if err := env.Client.Get(context.Background(), key, s); err != nil {
			return err
		}
		if s.Annotations[TokenSecretAnnotation] == oldName {
			return errNotYet
		}
		return nil
	})
	expectTokenWorks(t, joinConfig(t, s.Data["value"]).DiscoveryToken)
	expectCondition(t, key, conditions.BootstrapTokenAvailableCondition, metav1.ConditionTrue, conditions.TokenValidReason)
}

// TestWaitsForClusterCAAndEndpoint: without the cluster CA or a control plane
// endpoint the config waits, says why, creates no token; it renders once
// both exist.
func TestWaitsForClusterCAAndEndpoint(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t)
	startController(t, ns, DefaultTokenTTL)
	f := &fixture{ns: ns, noCA: true, noEP: true}
	f.create(t)
	key := client.ObjectKeyFromObject(f.config)

	expectCondition(t, key, bootstrapv1.KubeadmConfigCertificatesAvailableCondition, metav1.ConditionFalse, conditions.WaitingForClusterCAReason)
	expectCondition(t, key, bootstrapv1.KubeadmConfigDataSecretAvailableCondition, metav1.ConditionFalse, conditions.WaitingForClusterCAReason)
	c := meta.FindStatusCondition(getConfig(t, key).Status.Conditions, bootstrapv1.KubeadmConfigDataSecretAvailableCondition)
	if !strings.Contains(c.Message, clusterName+"-ca") {
		t.Errorf("condition message %q does not name the CA Secret", c.Message)
	}

	createCA(t, ns)
	poke(t, key)
	expectCondition(t, key, bootstrapv1.KubeadmConfigCertificatesAvailableCondition, metav1.ConditionTrue, conditions.CertificatesAvailableReason)
	expectCondition(t, key, bootstrapv1.KubeadmConfigDataSecretAvailableCondition, metav1.ConditionFalse, conditions.WaitingForControlPlaneEndpointReason)
	tokens, err := listTokens(ctx, env.Client, f.config)
	if err != nil || len(tokens) != 0 {
		t.Errorf("waiting config created tokens: %d (%v)", len(tokens), err)
	}
	if err := env.Client.Get(ctx, key, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("data Secret exists while waiting (%v)", err)
	}

	cluster := &clusterv1.Cluster{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(f.cluster), cluster); err != nil {
		t.Fatal(err)
	}
	before := cluster.DeepCopy()
	cluster.Spec.ControlPlaneEndpoint = apiServerEndpoint(t)
	if err := env.Client.Patch(ctx, cluster, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	secret := dataSecret(t, key) // the Cluster is watched: no poke needed
	expectTokenWorks(t, joinConfig(t, secret.Data["value"]).DiscoveryToken)
}

// TestContentFromAndUserToken: files' contentFrom is resolved (waiting for
// the Secret when missing), and a token the user sets is used as is and not
// managed.
func TestContentFromAndUserToken(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t)
	startController(t, ns, DefaultTokenTTL)
	const userToken = "abcdef.0123456789abcdef"
	f := &fixture{ns: ns, mutate: func(cfg *bootstrapv1.KubeadmConfig) {
		cfg.Spec.Files = []bootstrapv1.File{{
			Path: "/etc/kubernetes/azure.json", Owner: "root:root", Permissions: "0644",
			ContentFrom: bootstrapv1.FileSource{Secret: bootstrapv1.SecretFileSource{Name: "azure-json", Key: "worker-node-azure.json"}},
		}}
		cfg.Spec.JoinConfiguration.Discovery.BootstrapToken = bootstrapv1.BootstrapTokenDiscovery{Token: userToken}
	}}
	f.create(t)
	key := client.ObjectKeyFromObject(f.config)
	expectCondition(t, key, bootstrapv1.KubeadmConfigDataSecretAvailableCondition, metav1.ConditionFalse, conditions.WaitingForSecretReason)

	mustCreate(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "azure-json", Namespace: ns},
		Data:       map[string][]byte{"worker-node-azure.json": []byte(`{"cloud":"AzurePublicCloud"}`)},
	})
	poke(t, key)
	secret := dataSecret(t, key)
	cc, err := simcloudinit.Parse(secret.Data["value"])
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := cc.File("/etc/kubernetes/azure.json"); !ok || f.Content != `{"cloud":"AzurePublicCloud"}` || f.Permissions != "0644" {
		t.Errorf("azure.json written as %+v", f)
	}
	if jc := joinConfig(t, secret.Data["value"]); jc.DiscoveryToken != userToken || len(jc.CACertHashes) != 1 {
		t.Errorf("join configuration token/hashes = %v", jc.CACertHashes)
	}
	if _, ok := secret.Annotations[TokenSecretAnnotation]; ok {
		t.Errorf("a user token is annotated as managed")
	}
	expectCondition(t, key, conditions.BootstrapTokenAvailableCondition, metav1.ConditionTrue, conditions.TokenProvidedReason)
	if tokens, err := listTokens(ctx, env.Client, f.config); err != nil || len(tokens) != 0 {
		t.Errorf("controller created %d tokens for a config with its own token (%v)", len(tokens), err)
	}
}

// TestIgnitionNotSupported: format ignition is reported, not rendered.
func TestIgnitionNotSupported(t *testing.T) {
	ns := env.NewNamespace(t)
	startController(t, ns, DefaultTokenTTL)
	f := &fixture{ns: ns, mutate: func(cfg *bootstrapv1.KubeadmConfig) { cfg.Spec.Format = bootstrapv1.Ignition }}
	f.create(t)
	key := client.ObjectKeyFromObject(f.config)
	expectCondition(t, key, bootstrapv1.KubeadmConfigDataSecretAvailableCondition, metav1.ConditionFalse, conditions.UnsupportedFormatReason)
	if err := env.Client.Get(context.Background(), key, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("data Secret rendered for ignition (%v)", err)
	}
	if tokens, err := listTokens(context.Background(), env.Client, f.config); err != nil || len(tokens) != 0 {
		t.Errorf("controller created %d tokens for an ignition config (%v)", len(tokens), err)
	}
}

// TestDeleteWhenClusterGone: deleting a config whose Cluster and workload
// cluster are gone does not hang on the finalizer.
func TestDeleteWhenClusterGone(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t)
	startController(t, ns, DefaultTokenTTL)
	f := &fixture{ns: ns}
	f.create(t)
	key := client.ObjectKeyFromObject(f.config)
	secret := dataSecret(t, key)
	tokenName := secret.Annotations[TokenSecretAnnotation]
	t.Cleanup(func() { _ = deleteToken(ctx, env.Client, tokenName) })

	for _, obj := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: clusterName + "-kubeconfig"}},
		f.cluster,
		f.config,
	} {
		if err := env.Client.Delete(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, pollTimeout, func() error {
		if err := env.Client.Get(ctx, key, &bootstrapv1.KubeadmConfig{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("KubeadmConfig still there (%v)", err)
		}
		list := &eventsv1.EventList{}
		if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Reason == events.BootstrapTokenCleanupSkipped {
				return nil
			}
		}
		return fmt.Errorf("no %s event", events.BootstrapTokenCleanupSkipped)
	})
}

// TestAdoptsExistingDataSecret: a data Secret that already exists (restored
// from a backup, moved between clusters) is adopted and not rendered again.
func TestAdoptsExistingDataSecret(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t)
	existing := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "capa-mp-0", Namespace: ns, Labels: map[string]string{clusterv1.ClusterNameLabel: clusterName}},
		Type:       ClusterSecretType,
		Data:       map[string][]byte{"value": []byte("#cloud-config\n"), "format": []byte("cloud-config")},
	}
	f := &fixture{ns: ns}
	// The first status already names the adopted Secret: the reconcile
	// that writes the finalizer keeps what it observed before.
	first := firstStatus(t, ns, func() {
		startController(t, ns, DefaultTokenTTL)
		mustCreate(t, existing)
		f.create(t)
	})
	if !ptr.Deref(first.Status.Initialization.DataSecretCreated, false) || first.Status.DataSecretName != existing.Name {
		t.Errorf("first status: dataSecretCreated %v dataSecretName %q, want true and %q", ptr.Deref(first.Status.Initialization.DataSecretCreated, false), first.Status.DataSecretName, existing.Name)
	}
	key := client.ObjectKeyFromObject(f.config)
	testenv.Eventually(t, pollTimeout, func() error {
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, key, s); err != nil {
			return err
		}
		if !metav1.IsControlledBy(s, f.config) {
			return fmt.Errorf("data Secret not adopted: %v", s.OwnerReferences)
		}
		if string(s.Data["value"]) != "#cloud-config\n" {
			return fmt.Errorf("existing data Secret rendered again")
		}
		return nil
	})
	expectCondition(t, key, bootstrapv1.KubeadmConfigDataSecretAvailableCondition, metav1.ConditionTrue, bootstrapv1.KubeadmConfigDataSecretAvailableReason)
	if cfg := getConfig(t, key); !ptr.Deref(cfg.Status.Initialization.DataSecretCreated, false) || cfg.Status.DataSecretName != existing.Name {
		t.Errorf("status dataSecretCreated %v dataSecretName %q", ptr.Deref(cfg.Status.Initialization.DataSecretCreated, false), cfg.Status.DataSecretName)
	}
	if tokens, err := listTokens(ctx, env.Client, f.config); err != nil || len(tokens) != 0 {
		t.Errorf("adopting created %d tokens (%v)", len(tokens), err)
	}
}

// TestFinalizerThenDataInOnePass: the reconcile that writes a pool config's
// finalizer goes on to render its data, so the config's first status already
// names its data Secret (no status write in between to wait for).
func TestFinalizerThenDataInOnePass(t *testing.T) {
	ns := env.NewNamespace(t)
	cfg := firstStatus(t, ns, func() {
		startController(t, ns, DefaultTokenTTL)
		(&fixture{ns: ns}).create(t)
	})
	if cfg.Status.DataSecretName == "" {
		t.Fatalf("the first status has no data Secret: %+v", cfg.Status.Conditions)
	}
	if !controllerutil.ContainsFinalizer(cfg, Finalizer) {
		t.Fatalf("the first status came before the finalizer: %v", cfg.Finalizers)
	}
}

// firstStatus runs create and returns the first version of a KubeadmConfig
// of namespace ns with conditions, from a watch started before.
func firstStatus(t *testing.T, ns string, create func()) *bootstrapv1.KubeadmConfig {
	t.Helper()
	ctx := context.Background()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	list := &bootstrapv1.KubeadmConfigList{}
	if err := wc.List(ctx, list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	w, err := wc.Watch(ctx, &bootstrapv1.KubeadmConfigList{}, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	create()
	timeout := time.After(pollTimeout)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the watch ended")
			}
			if cfg, ok := ev.Object.(*bootstrapv1.KubeadmConfig); ok && len(cfg.Status.Conditions) > 0 {
				return cfg
			}
		case <-timeout:
			t.Fatalf("no status within %s", pollTimeout)
		}
	}
}
