package webhookcert_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/mpool-dev/mpool/config/crd"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/internal/webhookcert"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }

// kc reads Secrets and CRDs (mpool's scheme, env.Client's, has no
// apiextensions); set by setup.
var kc client.Client

func setup(t *testing.T) {
	t.Helper()
	s := runtime.NewScheme()
	if err := errors.Join(corev1.AddToScheme(s), apiextensionsv1.AddToScheme(s)); err != nil {
		t.Fatal(err)
	}
	var err error
	if kc, err = client.New(env.Config, client.Options{Scheme: s}); err != nil {
		t.Fatal(err)
	}
}

const (
	secretName  = "mpool-webhook-cert"
	serviceName = "mpool-webhook-service"
	year        = 365 * 24 * time.Hour
)

// convertedCRDs names the CRDs the webhook converts, and restores their
// caBundle (the embedded control plane's, which its loopback conversion
// webhook needs) when t ends.
func convertedCRDs(t *testing.T) []string {
	t.Helper()
	crds, err := crd.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range crds {
		if crd.Converted(c) {
			names = append(names, c.Name)
		}
	}
	if len(names) == 0 {
		t.Fatal("no converted CRDs")
	}
	saved := map[string][]byte{}
	for _, n := range names {
		c := getCRD(t, n)
		saved[n] = c.Spec.Conversion.Webhook.ClientConfig.CABundle
	}
	t.Cleanup(func() {
		for n, b := range saved {
			c := getCRD(t, n)
			base := c.DeepCopy()
			c.Spec.Conversion.Webhook.ClientConfig.CABundle = b
			if err := kc.Patch(context.Background(), c, client.MergeFrom(base)); err != nil {
				t.Errorf("restoring the caBundle of %s: %v", n, err)
			}
		}
	})
	return names
}

func getCRD(t *testing.T, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	c := &apiextensionsv1.CustomResourceDefinition{}
	if err := kc.Get(context.Background(), client.ObjectKey{Name: name}, c); err != nil {
		t.Fatal(err)
	}
	return c
}

func getSecret(t *testing.T, ns string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := kc.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: secretName}, s); err != nil {
		t.Fatal(err)
	}
	return s
}

func certs(t *testing.T, b []byte) []*x509.Certificate {
	t.Helper()
	var out []*x509.Certificate
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return out
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
}

func pool(t *testing.T, bundle []byte) *x509.CertPool {
	t.Helper()
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM(bundle) {
		t.Fatal("bundle holds no certificate")
	}
	return p
}

// crdsTrust returns an error unless every CRD of names has bundle as its
// caBundle.
func crdsTrust(names []string, bundle []byte) error {
	for _, n := range names {
		c := &apiextensionsv1.CustomResourceDefinition{}
		if err := kc.Get(context.Background(), client.ObjectKey{Name: n}, c); err != nil {
			return err
		}
		if got := c.Spec.Conversion.Webhook.ClientConfig.CABundle; !bytes.Equal(got, bundle) {
			return fmt.Errorf("CRD %s caBundle holds %d certificates, not the Secret's bundle", n, bytes.Count(got, []byte("BEGIN CERTIFICATE")))
		}
	}
	return nil
}

// serve runs controller-runtime's webhook server, as the manager does, from
// the files in dir, and returns its address.
func serve(t *testing.T, ctx context.Context, dir string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	srv := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: dir})
	srv.Register("/ping", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "pong") }))
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	t.Cleanup(func() {
		if err := <-done; err != nil {
			t.Errorf("webhook server: %v", err)
		}
	})
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// get makes a fresh TLS connection to addr, verifying the server as the API
// server would (roots: bundle; name: the Service's), at the fake time now,
// and returns the certificate served.
func get(addr string, roots *x509.CertPool, dnsName string, now func() time.Time) (*x509.Certificate, error) {
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		TLSClientConfig:   &tls.Config{RootCAs: roots, ServerName: dnsName, Time: now, MinVersion: tls.VersionTLS12},
	}}
	resp, err := c.Get("https://" + addr + "/ping")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "pong" {
		return nil, fmt.Errorf("got %q", b)
	}
	return resp.TLS.PeerCertificates[0], nil
}

// TestEnsureRotatesWithoutUntrustedCertificates runs the every-replica loop and
// the leader's CRD patcher against a real API server and a real webhook
// server, moving a fake clock through serving and CA rotations, and checks
// after each that a client trusting only the CRDs' caBundle accepts what is
// served.
func TestEnsureRotatesWithoutUntrustedCertificates(t *testing.T) {
	setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := env.NewNamespace(t)
	names := convertedCRDs(t)
	t0 := time.Now()
	fc := testingclock.NewFakeClock(t0)
	dir := t.TempDir()
	m, err := webhookcert.New(env.Config, webhookcert.Options{Namespace: ns, SecretName: secretName, ServiceName: serviceName,
		Dir: dir, Clock: fc, Interval: 50 * time.Millisecond, RetryInterval: 50 * time.Millisecond, Log: testr.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	dns := serviceName + "." + ns + ".svc"
	if got := m.DNSNames(); len(got) != 2 || got[0] != dns || got[1] != dns+".cluster.local" {
		t.Fatalf("DNSNames = %v", got)
	}

	// First start: the Secret is created, the files written, the CRDs patched.
	if err := m.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	sec := getSecret(t, ns)
	if sec.Type != corev1.SecretTypeTLS {
		t.Errorf("Secret type = %s", sec.Type)
	}
	bundle := sec.Data[webhookcert.KeyCABundle]
	ca1 := certs(t, bundle)
	if len(ca1) != 1 || !ca1[0].IsCA || ca1[0].NotAfter.Sub(t0) < 9*year {
		t.Fatalf("bundle = %d certificates, want one 10-year CA", len(ca1))
	}
	serving := certs(t, sec.Data[corev1.TLSCertKey])[0]
	if d := serving.NotAfter.Sub(t0); d < year-time.Minute || d > year+time.Minute {
		t.Errorf("serving certificate lives %s, want a year", d)
	}
	for _, name := range []string{dns, dns + ".cluster.local"} {
		if _, err := serving.Verify(x509.VerifyOptions{Roots: pool(t, bundle), DNSName: name, CurrentTime: t0}); err != nil {
			t.Errorf("serving certificate for %s: %v", name, err)
		}
	}
	for _, f := range []string{webhookcert.CertName, webhookcert.KeyName} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		want := sec.Data[corev1.TLSCertKey]
		if f == webhookcert.KeyName {
			want = sec.Data[corev1.TLSPrivateKeyKey]
		}
		if !bytes.Equal(b, want) {
			t.Errorf("%s differs from the Secret's", f)
		}
	}
	if err := m.PatchCRDs(ctx); err != nil {
		t.Fatal(err)
	}
	if err := crdsTrust(names, bundle); err != nil {
		t.Fatal(err)
	}
	// Ensure again changes nothing.
	rv := sec.ResourceVersion
	if err := m.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if getSecret(t, ns).ResourceVersion != rv {
		t.Error("a second Ensure rewrote the Secret")
	}

	addr := serve(t, ctx, dir)
	var last *x509.Certificate
	testenv.Eventually(t, 30*time.Second, func() error {
		last, err = get(addr, pool(t, bundle), dns, fc.Now)
		return err
	})
	if !last.Equal(serving) {
		t.Fatal("the server does not serve the Secret's certificate")
	}
	if _, err := get(addr, x509.NewCertPool(), dns, fc.Now); err == nil {
		t.Fatal("a client trusting nothing accepted the server")
	}

	go func() { _ = m.Start(ctx) }()
	go func() { _ = m.CRDPatcher().Start(ctx) }()

	// step moves the clock and waits for the Secret, the CRDs and the server
	// to agree; check judges the result.
	step := func(name string, to time.Time, check func(sec *corev1.Secret, served *x509.Certificate)) {
		t.Helper()
		old := getSecret(t, ns).Data[corev1.TLSCertKey]
		fc.SetTime(to)
		var sec *corev1.Secret
		var served *x509.Certificate
		testenv.Eventually(t, 30*time.Second, func() error {
			s := &corev1.Secret{}
			if err := kc.Get(ctx, client.ObjectKey{Namespace: ns, Name: secretName}, s); err != nil {
				return err
			}
			if bytes.Equal(s.Data[corev1.TLSCertKey], old) {
				return errors.New("serving certificate not renewed yet")
			}
			if err := crdsTrust(names, s.Data[webhookcert.KeyCABundle]); err != nil {
				return err
			}
			// A client trusting only the bundle (what the CRDs say) is
			// served the new certificate.
			c, err := get(addr, pool(t, s.Data[webhookcert.KeyCABundle]), dns, fc.Now)
			if err != nil {
				return err
			}
			if !bytes.Equal(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}), s.Data[corev1.TLSCertKey]) {
				return errors.New("server still serves the previous certificate")
			}
			sec, served = s, c
			return nil
		})
		t.Logf("%s: served serial %s, issued by %s", name, served.SerialNumber.Text(16), served.Issuer.CommonName)
		check(sec, served)
	}
	issuedBy := func(c, ca *x509.Certificate) bool { return c.CheckSignatureFrom(ca) == nil }

	// 1. Two thirds of the serving certificate's life gone: a new one, same CA.
	step("serving rotation", t0.Add(year*7/10), func(sec *corev1.Secret, served *x509.Certificate) {
		if b := sec.Data[webhookcert.KeyCABundle]; !bytes.Equal(b, bundle) {
			t.Error("the bundle changed on a serving rotation")
		}
		if !issuedBy(served, ca1[0]) {
			t.Error("the renewed serving certificate is not from the same CA")
		}
	})
	// 2. The CA near its end: a successor joins the bundle; the serving
	// certificate (expired by now) still comes from the old CA, which every
	// CRD already trusts.
	var ca2 *x509.Certificate
	step("CA successor", t0.Add(7*year), func(sec *corev1.Secret, served *x509.Certificate) {
		b := certs(t, sec.Data[webhookcert.KeyCABundle])
		if len(b) != 2 || !b[0].Equal(ca1[0]) {
			t.Fatalf("bundle holds %d CAs, want the old and a new one", len(b))
		}
		ca2 = b[1]
		if !issuedBy(served, ca1[0]) {
			t.Error("served a certificate of the successor CA before the CRDs could trust it")
		}
	})
	// 3. After PromoteAfter, with every CRD trusting it, the successor signs
	// (at the next serving rotation); the old CA stays trusted.
	var fromCA1 = certs(t, getSecret(t, ns).Data[corev1.TLSCertKey])[0]
	fc.SetTime(t0.Add(7*year + webhookcert.DefaultPromoteAfter + time.Hour))
	testenv.Eventually(t, 30*time.Second, func() error {
		s := &corev1.Secret{}
		if err := kc.Get(ctx, client.ObjectKey{Namespace: ns, Name: secretName}, s); err != nil {
			return err
		}
		if !certs(t, s.Data[webhookcert.KeyCACert])[0].Equal(ca2) {
			return errors.New("successor CA not promoted yet")
		}
		return nil
	})
	step("serving rotation from the successor CA", t0.Add(7*year+year*7/10), func(sec *corev1.Secret, served *x509.Certificate) {
		if !issuedBy(served, ca2) {
			t.Error("the serving certificate is not from the successor CA")
		}
		b := sec.Data[webhookcert.KeyCABundle]
		if n := len(certs(t, b)); n != 2 {
			t.Errorf("bundle holds %d CAs, want both until the old one expires", n)
		}
		// Both generations verify against the bundle: a replica that still
		// serves the old CA's certificate is trusted too.
		for _, c := range []*x509.Certificate{fromCA1, served} {
			if _, err := c.Verify(x509.VerifyOptions{Roots: pool(t, b), DNSName: dns, CurrentTime: fc.Now()}); err != nil {
				t.Errorf("certificate from %s: %v", c.Issuer.CommonName, err)
			}
		}
	})
	// 4. The old CA expired: it leaves the bundle and the CRDs.
	step("old CA expired", t0.Add(10*year+24*time.Hour), func(sec *corev1.Secret, served *x509.Certificate) {
		b := certs(t, sec.Data[webhookcert.KeyCABundle])
		if len(b) != 1 || !b[0].Equal(ca2) {
			t.Errorf("bundle holds %d CAs, want the successor only", len(b))
		}
		if !issuedBy(served, ca2) {
			t.Error("the serving certificate is not from the successor CA")
		}
	})
}

// TestCreateRace starts several replicas at once on a namespace without the
// Secret: one creates it, the others use theirs, so all serve the same.
func TestCreateRace(t *testing.T) {
	setup(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	const replicas = 4
	dirs := make([]string, replicas)
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	for i := range replicas {
		dirs[i] = t.TempDir()
		m, err := webhookcert.New(env.Config, webhookcert.Options{Namespace: ns, SecretName: secretName, ServiceName: serviceName,
			Dir: dirs[i], CRDNames: []string{}})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { errs[i] = m.Ensure(ctx) })
	}
	wg.Wait()
	want := getSecret(t, ns).Data[corev1.TLSCertKey]
	for i := range replicas {
		if errs[i] != nil {
			t.Errorf("replica %d: %v", i, errs[i])
			continue
		}
		got, err := os.ReadFile(filepath.Join(dirs[i], webhookcert.CertName))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("replica %d serves a certificate that is not the Secret's", i)
		}
	}
}

// TestSuccessorWaitsForTheCRDs: a successor CA does not sign while any
// converted CRD's caBundle lacks it, however long it has been bundled.
func TestSuccessorWaitsForTheCRDs(t *testing.T) {
	setup(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	names := convertedCRDs(t)
	t0 := time.Now()
	fc := testingclock.NewFakeClock(t0)
	m, err := webhookcert.New(env.Config, webhookcert.Options{Namespace: ns, SecretName: secretName, ServiceName: serviceName,
		Dir: t.TempDir(), Clock: fc, CRDNames: names})
	if err != nil {
		t.Fatal(err)
	}
	ensure := func() *corev1.Secret {
		t.Helper()
		if err := m.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
		return getSecret(t, ns)
	}
	ca1 := ensure().Data[webhookcert.KeyCACert]
	if err := m.PatchCRDs(ctx); err != nil {
		t.Fatal(err)
	}
	fc.SetTime(t0.Add(7 * year))
	if n := len(certs(t, ensure().Data[webhookcert.KeyCABundle])); n != 2 {
		t.Fatalf("bundle holds %d CAs, want 2", n)
	}
	fc.SetTime(t0.Add(8 * year))
	if !bytes.Equal(ensure().Data[webhookcert.KeyCACert], ca1) {
		t.Fatal("the successor CA signs though no CRD trusts it")
	}
	if err := m.PatchCRDs(ctx); err != nil {
		t.Fatal(err)
	}
	sec := ensure()
	if bytes.Equal(sec.Data[webhookcert.KeyCACert], ca1) {
		t.Fatal("the successor CA was not promoted once every CRD trusts it")
	}
	// Promotion does not change what is trusted.
	if err := crdsTrust(names, sec.Data[webhookcert.KeyCABundle]); err != nil {
		t.Error(err)
	}
}
