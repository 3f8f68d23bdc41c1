package kubeadmconfig

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kevents "k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/api/conditions"
	"github.com/mpool-dev/mpool/internal/bootstrap"
	"github.com/mpool-dev/mpool/internal/events"
	"github.com/mpool-dev/mpool/internal/testenv"
	simcloudinit "github.com/mpool-dev/mpool/sim/cloudinit"
)

// updateSpec changes the config's spec the way a user would.
func updateSpec(t *testing.T, key client.ObjectKey, change func(*bootstrapv1.KubeadmConfigSpec)) {
	t.Helper()
	cfg := getConfig(t, key)
	before := cfg.DeepCopy()
	change(&cfg.Spec)
	if err := env.Client.Patch(context.Background(), cfg, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
}

// waitForData waits until the data Secret satisfies cond and returns it.
func waitForData(t *testing.T, key client.ObjectKey, cond func(*corev1.Secret) error) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	testenv.Eventually(t, pollTimeout, func() error {
		if err := env.Client.Get(context.Background(), key, s); err != nil {
			return err
		}
		return cond(s)
	})
	return s
}

// expectUpToDate waits until the config reports its data up to date for its
// current generation.
func expectUpToDate(t *testing.T, key client.ObjectKey) {
	t.Helper()
	expectCondition(t, key, conditions.DataSecretUpToDateCondition, metav1.ConditionTrue, conditions.DataSecretUpToDateReason)
	testenv.Eventually(t, pollTimeout, func() error {
		cfg := getConfig(t, key)
		if cfg.Status.ObservedGeneration != cfg.Generation {
			return fmt.Errorf("observedGeneration %d, generation %d", cfg.Status.ObservedGeneration, cfg.Generation)
		}
		return nil
	})
}

// expectEvent waits for an event with reason whose note contains substr.
func expectEvent(t *testing.T, ns, reason, substr string) {
	t.Helper()
	testenv.Eventually(t, pollTimeout, func() error {
		list := &eventsv1.EventList{}
		if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Reason == reason && strings.Contains(e.Note, substr) {
				return nil
			}
		}
		return fmt.Errorf("no %s event saying %q", reason, substr)
	})
}

// expectOneToken checks that the config has exactly the token Secret name in
// the workload cluster: rendering again created none.
func expectOneToken(t *testing.T, cfg *bootstrapv1.KubeadmConfig, name string) {
	t.Helper()
	tokens, err := listTokens(context.Background(), env.Client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(tokens) != 1 || tokens[0].Name != name {
		var names []string
		for _, tok := range tokens {
			names = append(names, tok.Name)
		}
		t.Errorf("workload tokens = %v, want only %s", names, name)
	}
}

// TestSpecChangeRerendersData: changing a config's files, kubelet arguments
// and commands renders its data Secret again in place with the same token;
// the masked data changes, so the pool's instance model does.
func TestSpecChangeRerendersData(t *testing.T) {
	ns := env.NewNamespace(t)
	startController(t, ns, DefaultTokenTTL)
	f := &fixture{ns: ns}
	f.create(t)
	key := client.ObjectKeyFromObject(f.config)
	old := dataSecret(t, key)
	tokenName := old.Annotations[TokenSecretAnnotation]
	token := joinConfig(t, old.Data["value"]).DiscoveryToken
	expectUpToDate(t, key)

	updateSpec(t, key, func(s *bootstrapv1.KubeadmConfigSpec) {
		s.Files = append(s.Files, bootstrapv1.File{Path: "/etc/mpool/extra.conf", Owner: "root:root", Permissions: "0644", Content: "answer = 42\n"})
		s.JoinConfiguration.NodeRegistration.KubeletExtraArgs = append(s.JoinConfiguration.NodeRegistration.KubeletExtraArgs, bootstrapv1.Arg{Name: "max-pods", Value: ptr.To("42")})
		s.PreKubeadmCommands = append(s.PreKubeadmCommands, "echo pre")
	})
	updated := waitForData(t, key, func(s *corev1.Secret) error {
		if bytes.Equal(s.Data["value"], old.Data["value"]) {
			return errNotYet
		}
		return nil
	})

	cc, err := simcloudinit.Parse(updated.Data["value"])
	if err != nil {
		t.Fatal(err)
	}
	if wf, ok := cc.File("/etc/mpool/extra.conf"); !ok || wf.Content != "answer = 42\n" {
		t.Errorf("new file written as %+v (%v)", wf, ok)
	}
	if len(cc.RunCmd) == 0 || cc.RunCmd[0] != "echo pre" {
		t.Errorf("runcmd = %q, want the new pre-kubeadm command first", cc.RunCmd)
	}
	jc := joinConfig(t, updated.Data["value"])
	if want := map[string]string{"cloud-provider": "aws", "max-pods": "42"}; !reflect.DeepEqual(jc.KubeletExtraArgs, want) {
		t.Errorf("kubeletExtraArgs = %v, want %v", jc.KubeletExtraArgs, want)
	}
	if jc.DiscoveryToken != token || updated.Annotations[TokenSecretAnnotation] != tokenName {
		t.Errorf("rendering again changed the token (Secret %s -> %s)", tokenName, updated.Annotations[TokenSecretAnnotation])
	}
	if bytes.Equal(bootstrap.MaskBootstrapTokens(updated.Data["value"]), bootstrap.MaskBootstrapTokens(old.Data["value"])) {
		t.Errorf("the masked data did not change")
	}
	if updated.UID != old.UID || !reflect.DeepEqual(updated.OwnerReferences, old.OwnerReferences) ||
		!reflect.DeepEqual(updated.Labels, old.Labels) || updated.Type != old.Type || string(updated.Data["format"]) != "cloud-config" {
		t.Errorf("the data Secret was replaced or its metadata changed")
	}
	expectOneToken(t, f.config, tokenName)
	expectTokenWorks(t, token)
	expectUpToDate(t, key)
	expectEvent(t, ns, events.DataSecretUpdated, "content changed")
	expectNoSecretsLeaked(t, ns, key, token, updated.Data["value"])
}

// directFixture creates a config of its own in a new namespace, for a test
// that reconciles it directly, and returns a context, the fixture and the
// config's key.
func directFixture(t *testing.T) (context.Context, *fixture, client.ObjectKey) {
	t.Helper()
	f := &fixture{ns: env.NewNamespace(t)}
	f.create(t)
	return ctrl.LoggerInto(context.Background(), ctrl.Log), f, client.ObjectKeyFromObject(f.config)
}

// directReconciler returns a Reconciler for direct reconciles, reading
// through c and, live, reader, with a fake clock at the current time.
func directReconciler(c client.Client, reader client.Reader, rec kevents.EventRecorder) *Reconciler {
	return &Reconciler{
		Client:    c,
		APIReader: reader,
		Workload:  kubeconfigClients{},
		Clock:     clocktesting.NewFakeClock(time.Now()),
		Recorder:  rec,
		TokenTTL:  DefaultTokenTTL,
	}
}

// laggingSecrets is a cache that has not seen the Secret named name: its Gets
// of it find nothing.
type laggingSecrets struct {
	client.Client
	name string
}

func (c laggingSecrets) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.Secret); ok && key.Name == c.name {
		return apierrors.NewNotFound(corev1.Resource("secrets"), key.Name)
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// countingReader counts its Gets.
type countingReader struct {
	client.Reader
	gets *atomic.Int32
}

func (r countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.gets.Add(1)
	return r.Reader.Get(ctx, key, obj, opts...)
}

// TestOwnDataSecretIsTrustedWhileTheCacheLags: while the cache has not seen
// the data Secret the controller just created, its reconciles take the
// Secret as the create left it — no live read, and no second render (which
// would replace the token) — and a miss the controller cannot explain is
// still confirmed with a live read. Against the API server.
func TestOwnDataSecretIsTrustedWhileTheCacheLags(t *testing.T) {
	ctx, f, key := directFixture(t)
	live := &atomic.Int32{}
	r := directReconciler(laggingSecrets{Client: env.Client, name: key.Name}, countingReader{Reader: env.Client, gets: live}, kevents.NewFakeRecorder(100))
	for i := range 6 { // finalizer, render, status, and three more
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
			t.Fatalf("Reconcile %d: %v", i, err)
		}
	}
	secret := dataSecret(t, key)
	token := secret.Annotations[TokenSecretAnnotation]
	expectOneToken(t, f.config, token)
	if n := live.Load(); n != 1 {
		t.Errorf("live reads of the data Secret: %d, want 1 (the miss before it was created)", n)
	}

	// Another controller (a restart) knows of no create: it reads live.
	r2 := directReconciler(r.Client, r.APIReader, r.Recorder)
	if _, err := r2.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
		t.Fatal(err)
	}
	if n := live.Load(); n != 2 {
		t.Errorf("live reads after a reconcile of a new controller: %d, want 2", n)
	}
	if got := dataSecret(t, key); got.ResourceVersion != secret.ResourceVersion {
		t.Errorf("the data Secret was written again (resourceVersion %s -> %s)", secret.ResourceVersion, got.ResourceVersion)
	}
	expectOneToken(t, f.config, token)
}

// TestSteadyConfigWritesNothing reconciles directly, against the API server,
// so that every reconcile is known to have run: once the data is rendered,
// reconciling again writes neither the data Secret nor the config, and a
// spec change writes the Secret once.
func TestSteadyConfigWritesNothing(t *testing.T) {
	ctx, f, key := directFixture(t)
	recorder := kevents.NewFakeRecorder(100)
	r := directReconciler(env.Client, env.Client, recorder)
	reconcile := func() ctrl.Result {
		t.Helper()
		res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key})
		if err != nil {
			t.Fatalf("Reconcile: %v", err)
		}
		return res
	}
	versions := func() (string, string) {
		t.Helper()
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, key, s); err != nil {
			t.Fatal(err)
		}
		return s.ResourceVersion, getConfig(t, key).ResourceVersion
	}
	expectSteady := func(what string) {
		t.Helper()
		// One reconcile to settle the status of the last change.
		reconcile()
		secretRV, configRV := versions()
		for i := range 3 {
			if res := reconcile(); res.RequeueAfter != tokenCheckInterval(DefaultTokenTTL) {
				t.Errorf("%s, reconcile %d: result %+v, want the token check interval", what, i, res)
			}
			if s, c := versions(); s != secretRV || c != configRV {
				t.Errorf("%s, reconcile %d: data Secret version %s -> %s, KubeadmConfig version %s -> %s", what, i, secretRV, s, configRV, c)
			}
		}
	}

	for range 3 { // finalizer, render, status
		reconcile()
	}
	dataSecret(t, key)
	expectSteady("after rendering")
	recorded := drain(recorder)
	if len(recorded) != 1 || !strings.Contains(recorded[0], events.DataSecretCreated) {
		t.Errorf("events = %q, want one %s", recorded, events.DataSecretCreated)
	}

	// Changes to what the config does not render from write nothing either.
	cluster := &clusterv1.Cluster{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(f.cluster), cluster); err != nil {
		t.Fatal(err)
	}
	before := cluster.DeepCopy()
	cluster.Labels = map[string]string{"team": "a"}
	if err := env.Client.Patch(ctx, cluster, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	poke(t, key)
	expectSteady("after unrelated changes")

	secretRV, _ := versions()
	updateSpec(t, key, func(s *bootstrapv1.KubeadmConfigSpec) {
		s.JoinConfiguration.NodeRegistration.KubeletExtraArgs = append(s.JoinConfiguration.NodeRegistration.KubeletExtraArgs, bootstrapv1.Arg{Name: "max-pods", Value: ptr.To("42")})
	})
	reconcile()
	if s, _ := versions(); s == secretRV {
		t.Fatalf("a spec change did not update the data Secret")
	}
	expectSteady("after a spec change")
	recorded = drain(recorder)
	if len(recorded) != 1 || !strings.Contains(recorded[0], events.DataSecretUpdated) {
		t.Errorf("events = %q, want one %s", recorded, events.DataSecretUpdated)
	}
	cfg := getConfig(t, key)
	if cfg.Status.ObservedGeneration != cfg.Generation {
		t.Errorf("observedGeneration %d, generation %d", cfg.Status.ObservedGeneration, cfg.Generation)
	}
}

// TestStaleReadWritesNothingTwice: a reconcile that reads the config as it
// was before this controller's last writes (a cache that has not caught up)
// works from what those writes left, and writes neither the finalizer nor
// the status again. Against the API server.
func TestStaleReadWritesNothingTwice(t *testing.T) {
	ctx, _, key := directFixture(t)
	stale := getConfig(t, key)
	r := directReconciler(testenv.StaleClient{Client: env.Client, Stale: stale}, env.Client, kevents.NewFakeRecorder(100))
	clk := r.Clock.(*clocktesting.FakeClock)
	reconcile := func() {
		t.Helper()
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
			t.Fatalf("Reconcile: %v", err)
		}
	}
	// The first pass reads the config as created: finalizer, data, status.
	reconcile()
	written := getConfig(t, key)
	if !ptr.Deref(written.Status.Initialization.DataSecretCreated, false) || written.ResourceVersion == stale.ResourceVersion {
		t.Fatalf("the first pass wrote no status (dataSecretCreated %v)", ptr.Deref(written.Status.Initialization.DataSecretCreated, false))
	}
	// The next reads the same copy again, a second later.
	clk.Step(time.Second)
	reconcile()
	if got := getConfig(t, key); got.ResourceVersion != written.ResourceVersion {
		t.Errorf("a pass that read the config from before the last writes wrote it again (version %s -> %s): conditions %+v",
			written.ResourceVersion, got.ResourceVersion, got.Status.Conditions)
	}
}

// drain returns the events recorded so far.
func drain(r *kevents.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// newCA returns a self-signed CA certificate (PEM) and its kubeadm pin.
func newCA(t *testing.T) ([]byte, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "rotated-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	spki, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(spki)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), "sha256:" + hex.EncodeToString(sum[:])
}

// TestInputChangesRerenderData: the data follows what the config renders
// from besides its spec, each change arriving as a watch event (no poke): the
// Cluster's endpoint, its CA and a Secret a file's contentFrom references.
// The token stays.
func TestInputChangesRerenderData(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t)
	startController(t, ns, DefaultTokenTTL)
	mustCreate(t, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "cloud-json", Namespace: ns},
		Data:       map[string][]byte{"json": []byte(`{"v":1}`)},
	})
	f := &fixture{ns: ns, mutate: func(cfg *bootstrapv1.KubeadmConfig) {
		cfg.Spec.Files = []bootstrapv1.File{{
			Path:        "/etc/kubernetes/cloud.json",
			ContentFrom: bootstrapv1.FileSource{Secret: bootstrapv1.SecretFileSource{Name: "cloud-json", Key: "json"}},
		}}
	}}
	f.create(t)
	key := client.ObjectKeyFromObject(f.config)
	old := dataSecret(t, key)
	tokenName := old.Annotations[TokenSecretAnnotation]
	token := joinConfig(t, old.Data["value"]).DiscoveryToken
	expectUpToDate(t, key)

	t.Run("endpoint", func(t *testing.T) {
		cluster := &clusterv1.Cluster{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(f.cluster), cluster); err != nil {
			t.Fatal(err)
		}
		before := cluster.DeepCopy()
		cluster.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: "cp.example.com", Port: 443}
		if err := env.Client.Patch(ctx, cluster, client.MergeFrom(before)); err != nil {
			t.Fatal(err)
		}
		want := net.JoinHostPort("cp.example.com", strconv.Itoa(443))
		s := waitForData(t, key, func(s *corev1.Secret) error {
			if got := joinConfig(t, s.Data["value"]).APIServerEndpoint; got != want {
				return fmt.Errorf("apiServerEndpoint %s, want %s", got, want)
			}
			return nil
		})
		if joinConfig(t, s.Data["value"]).DiscoveryToken != token {
			t.Errorf("the token changed")
		}
	})

	t.Run("CA", func(t *testing.T) {
		ca, pin := newCA(t)
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ClusterCASecretName(clusterName)}, s); err != nil {
			t.Fatal(err)
		}
		before := s.DeepCopy()
		s.Data["tls.crt"] = ca
		if err := env.Client.Patch(ctx, s, client.MergeFrom(before)); err != nil {
			t.Fatal(err)
		}
		s = waitForData(t, key, func(s *corev1.Secret) error {
			if got := joinConfig(t, s.Data["value"]).CACertHashes; !reflect.DeepEqual(got, []string{pin}) {
				return fmt.Errorf("caCertHashes %v, want [%s]", got, pin)
			}
			return nil
		})
		if joinConfig(t, s.Data["value"]).DiscoveryToken != token {
			t.Errorf("the token changed")
		}
	})

	t.Run("contentFrom", func(t *testing.T) {
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cloud-json"}, s); err != nil {
			t.Fatal(err)
		}
		before := s.DeepCopy()
		s.Data["json"] = []byte(`{"v":2}`)
		if err := env.Client.Patch(ctx, s, client.MergeFrom(before)); err != nil {
			t.Fatal(err)
		}
		s = waitForData(t, key, func(s *corev1.Secret) error {
			cc, err := simcloudinit.Parse(s.Data["value"])
			if err != nil {
				return err
			}
			if wf, _ := cc.File("/etc/kubernetes/cloud.json"); wf.Content != `{"v":2}` {
				return fmt.Errorf("cloud.json = %q", wf.Content)
			}
			return nil
		})
		if joinConfig(t, s.Data["value"]).DiscoveryToken != token {
			t.Errorf("the token changed")
		}
	})

	updated := dataSecret(t, key)
	if updated.UID != old.UID || updated.Annotations[TokenSecretAnnotation] != tokenName {
		t.Errorf("the data Secret was replaced or switched tokens")
	}
	expectOneToken(t, f.config, tokenName)
	expectUpToDate(t, key)
}

// TestUserTokenChangeRerendersData: a token the spec sets is the spec's:
// changing it renders the data again with the new token, and since only the
// token changed the masked data stays the same.
func TestUserTokenChangeRerendersData(t *testing.T) {
	ns := env.NewNamespace(t)
	startController(t, ns, DefaultTokenTTL)
	const first, second = "abcdef.0123456789abcdef", "ghijkl.0123456789abcdef"
	f := &fixture{ns: ns, mutate: func(cfg *bootstrapv1.KubeadmConfig) {
		cfg.Spec.JoinConfiguration.Discovery.BootstrapToken = bootstrapv1.BootstrapTokenDiscovery{Token: first}
	}}
	f.create(t)
	key := client.ObjectKeyFromObject(f.config)
	old := dataSecret(t, key)
	expectUpToDate(t, key)

	updateSpec(t, key, func(s *bootstrapv1.KubeadmConfigSpec) {
		s.JoinConfiguration.Discovery.BootstrapToken.Token = second
	})
	updated := waitForData(t, key, func(s *corev1.Secret) error {
		if joinConfig(t, s.Data["value"]).DiscoveryToken != second {
			return fmt.Errorf("the data does not carry the new token yet")
		}
		return nil
	})
	if !bytes.Equal(bootstrap.MaskBootstrapTokens(updated.Data["value"]), bootstrap.MaskBootstrapTokens(old.Data["value"])) {
		t.Errorf("the masked data changed although only the token did")
	}
	expectEvent(t, ns, events.DataSecretUpdated, "only the bootstrap token")
	expectUpToDate(t, key)
}

// TestBlockedRerenderKeepsData: while a changed config cannot be rendered the
// data Secret keeps what it held, stays available, and says why it is not up
// to date; once it can be rendered, it is.
func TestBlockedRerenderKeepsData(t *testing.T) {
	ns := env.NewNamespace(t)
	startController(t, ns, DefaultTokenTTL)
	f := &fixture{ns: ns}
	f.create(t)
	key := client.ObjectKeyFromObject(f.config)
	old := dataSecret(t, key)
	expectUpToDate(t, key)

	updateSpec(t, key, func(s *bootstrapv1.KubeadmConfigSpec) {
		s.Files = append(s.Files, bootstrapv1.File{
			Path:        "/etc/late.conf",
			ContentFrom: bootstrapv1.FileSource{Secret: bootstrapv1.SecretFileSource{Name: "late", Key: "conf"}},
		})
	})
	expectCondition(t, key, conditions.DataSecretUpToDateCondition, metav1.ConditionFalse, conditions.WaitingForSecretReason)
	expectCondition(t, key, bootstrapv1.KubeadmConfigDataSecretAvailableCondition, metav1.ConditionTrue, bootstrapv1.KubeadmConfigDataSecretAvailableReason)
	expectCondition(t, key, clusterv1.ReadyCondition, metav1.ConditionTrue, clusterv1.ReadyReason)
	expectCondition(t, key, conditions.BootstrapTokenAvailableCondition, metav1.ConditionTrue, conditions.TokenValidReason)
	if s := dataSecret(t, key); s.ResourceVersion != old.ResourceVersion {
		t.Errorf("the data Secret changed while the config could not be rendered")
	}

	mustCreate(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "late", Namespace: ns}, Data: map[string][]byte{"conf": []byte("late = true\n")}})
	waitForData(t, key, func(s *corev1.Secret) error {
		cc, err := simcloudinit.Parse(s.Data["value"])
		if err != nil {
			return err
		}
		if _, ok := cc.File("/etc/late.conf"); !ok {
			return errNotYet
		}
		return nil
	})
	expectUpToDate(t, key)
}
