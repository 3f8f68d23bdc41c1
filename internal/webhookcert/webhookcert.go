// Package webhookcert gives the deployed manager's conversion webhook its TLS
// certificates without anything else installed (no cert-manager): a CA and a
// serving certificate kept in one Secret of the manager's namespace, shared by
// every replica, rotated before they expire, and the CA bundle written into
// the conversion stanza of every CRD the webhook converts.
//
// Every replica runs Certs (Ensure on start, then every Interval): it creates
// the Secret when missing (when replicas race, the loser reads the winner's),
// renews what is due and writes the serving certificate and key into Dir,
// where controller-runtime's webhook server (its certwatcher) reloads them.
// Only the leader runs CRDPatcher, which points the CRDs' caBundle at the
// Secret's bundle.
//
// Rotation never serves a certificate the API server does not trust:
//   - the serving certificate (one year) is replaced, from the same CA, when
//     less than a third of its lifetime is left;
//   - the CA (ten years), when less than a third of its lifetime is left, gets
//     a successor that only joins the bundle at first (the bundle holds both);
//     the successor signs serving certificates only once PromoteAfter has
//     passed and every converted CRD's caBundle holds it; the old CA stays in
//     the bundle until it expires.
//
// Key material is never logged.
package webhookcert

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/mpool-dev/mpool/config/crd"
)

// Lifetimes and intervals Options default to.
const (
	DefaultCALifetime      = 10 * 365 * 24 * time.Hour
	DefaultServingLifetime = 365 * 24 * time.Hour
	DefaultPromoteAfter    = 24 * time.Hour
	DefaultInterval        = time.Hour
	DefaultRetryInterval   = 10 * time.Second
)

// Names of the files Ensure writes into Options.Dir (controller-runtime's
// webhook server reads these names by default).
const (
	CertName = "tls.crt"
	KeyName  = "tls.key"
)

// Keys of the Secret's data.
const (
	// KeyCABundle holds every CA the API server must trust (PEM): the
	// signing CA, its successor while one exists, and predecessors until
	// they expire. It is what the CRDs' caBundle names.
	KeyCABundle = "ca-bundle.crt"
	// KeyCACert is the CA that signs serving certificates (PEM).
	KeyCACert   = "ca.crt"
	keyCAKey    = "ca.key"
	keyNextCert = "next-ca.crt"
	keyNextKey  = "next-ca.key"
)

// Options configure Certs.
type Options struct {
	// Namespace holds the Secret and the webhook's Service.
	Namespace string
	// SecretName names the Secret (kustomize: "<namePrefix>webhook-cert").
	SecretName string
	// ServiceName names the webhook's Service; the serving certificate is for
	// <ServiceName>.<Namespace>.svc and its .cluster.local form.
	ServiceName string
	// Dir receives CertName and KeyName (the serving certificate and key).
	Dir string
	// CRDNames are the CRDs whose caBundle CRDPatcher sets; nil means every
	// CRD of config/crd that crd.Converted reports and whose API group
	// Groups keeps.
	CRDNames []string
	// ValidatingWebhooks name the ValidatingWebhookConfigurations whose
	// webhooks' caBundle CRDPatcher sets too (the manager's own, installed
	// from config/manager).
	ValidatingWebhooks []string
	// Groups, when set, keeps the API groups whose CRDs the webhook
	// converts (nil: every group); a manager beside upstream Cluster API
	// converts only its own infrastructure kinds.
	Groups func(group string) bool
	// CALifetime and ServingLifetime are the new certificates' lifetimes.
	CALifetime, ServingLifetime time.Duration
	// PromoteAfter is how long a successor CA is only trusted before it
	// signs serving certificates.
	PromoteAfter time.Duration
	// Interval is how often the Secret and the CRDs are checked;
	// RetryInterval is how soon a failed check is retried.
	Interval, RetryInterval time.Duration
	// Clock is the time the certificates are judged and issued by (nil:
	// the real clock); Interval is always real time.
	Clock clock.PassiveClock
	// Log receives what changed (serial numbers and dates, never keys).
	Log logr.Logger
}

// Certs keeps the webhook's certificates; see the package documentation.
type Certs struct {
	c        client.Client
	o        Options
	dnsNames []string
	changed  chan struct{}
}

// New returns Certs for o, reading and writing the API server of cfg
// directly (no cache: Ensure runs before a manager's caches start). It needs
// Secrets in o.Namespace (get, create, update) and CRDs (get, patch).
func New(cfg *rest.Config, o Options) (*Certs, error) {
	s := runtime.NewScheme()
	if err := errors.Join(corev1.AddToScheme(s), apiextensionsv1.AddToScheme(s), admissionregistrationv1.AddToScheme(s)); err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, fmt.Errorf("creating the webhook certificates' client: %w", err)
	}
	if o.Namespace == "" || o.SecretName == "" || o.ServiceName == "" || o.Dir == "" {
		return nil, errors.New("webhookcert: Namespace, SecretName, ServiceName and Dir are required")
	}
	if o.CALifetime <= 0 {
		o.CALifetime = DefaultCALifetime
	}
	if o.ServingLifetime <= 0 {
		o.ServingLifetime = DefaultServingLifetime
	}
	if o.PromoteAfter <= 0 {
		o.PromoteAfter = DefaultPromoteAfter
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.RetryInterval <= 0 {
		o.RetryInterval = min(DefaultRetryInterval, o.Interval)
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.CRDNames == nil {
		crds, err := crd.CRDs()
		if err != nil {
			return nil, err
		}
		for _, c := range crds {
			if crd.Converted(c) && (o.Groups == nil || o.Groups(c.Spec.Group)) {
				o.CRDNames = append(o.CRDNames, c.Name)
			}
		}
	}
	svc := o.ServiceName + "." + o.Namespace + ".svc"
	return &Certs{c: c, o: o, dnsNames: []string{svc, svc + ".cluster.local"}, changed: make(chan struct{}, 1)}, nil
}

// DNSNames are the names the serving certificate is for.
func (m *Certs) DNSNames() []string { return slices.Clone(m.dnsNames) }

// state is what the Secret holds, parsed; a part that is missing or does not
// parse is nil (and is replaced).
type state struct {
	ca, next, serving *keyPair
	bundle            []*x509.Certificate
}

func decode(s *corev1.Secret) *state {
	st := &state{}
	if s == nil {
		return st
	}
	st.ca, _ = parseKeyPair(s.Data[KeyCACert], s.Data[keyCAKey])
	if st.ca != nil && !st.ca.cert.IsCA {
		st.ca = nil
	}
	st.next, _ = parseKeyPair(s.Data[keyNextCert], s.Data[keyNextKey])
	if st.next != nil && !st.next.cert.IsCA {
		st.next = nil
	}
	st.serving, _ = parseKeyPair(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey])
	st.bundle, _ = parseCerts(s.Data[KeyCABundle])
	return st
}

func (st *state) data() map[string][]byte {
	d := map[string][]byte{
		KeyCACert:               st.ca.certPEM,
		keyCAKey:                st.ca.keyPEM,
		corev1.TLSCertKey:       st.serving.certPEM,
		corev1.TLSPrivateKeyKey: st.serving.keyPEM,
		KeyCABundle:             encodeCerts(st.bundle),
	}
	if st.next != nil {
		d[keyNextCert] = st.next.certPEM
		d[keyNextKey] = st.next.keyPEM
	}
	return d
}

// plan returns what the Secret should hold at now, given what it holds, and
// what changed (for the log). trusted reports whether every converted CRD
// trusts a CA already.
func (m *Certs) plan(ctx context.Context, old *state, now time.Time, trusted func(context.Context, *x509.Certificate) (bool, error)) (*state, []string, error) {
	st := *old
	var why []string
	var err error
	if st.ca != nil && !now.Before(st.ca.cert.NotAfter) {
		if st.next != nil {
			st.ca, st.next = st.next, nil
			why = append(why, "the signing CA expired: its successor signs now")
		} else {
			st.ca = nil
		}
	}
	if st.ca == nil {
		if st.ca, err = newCA(now, m.o.CALifetime); err != nil {
			return nil, nil, err
		}
		st.next = nil
		why = append(why, "created a CA")
	}
	// A successor signs once it has been trusted long enough, everywhere.
	if st.next != nil && !now.Before(st.next.cert.NotBefore.Add(backdate+m.o.PromoteAfter)) {
		ok, err := trusted(ctx, st.next.cert)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			st.ca, st.next = st.next, nil
			why = append(why, "the successor CA signs now")
		}
	}
	if st.next == nil && due(st.ca.cert, now) {
		if st.next, err = newCA(now, m.o.CALifetime); err != nil {
			return nil, nil, err
		}
		why = append(why, "created a successor CA, trusted alongside the signing one")
	}
	// The bundle: the signing CA, its successor, and any other CA until it
	// expires, oldest first.
	var bundle []*x509.Certificate
	for _, c := range append(slices.Clone(st.bundle), st.ca.cert) {
		if now.Before(c.NotAfter) && !containsCert(bundle, c) {
			bundle = append(bundle, c)
		}
	}
	if st.next != nil && !containsCert(bundle, st.next.cert) {
		bundle = append(bundle, st.next.cert)
	}
	sort.SliceStable(bundle, func(i, j int) bool { return bundle[i].NotBefore.Before(bundle[j].NotBefore) })
	if !bytes.Equal(encodeCerts(bundle), encodeCerts(st.bundle)) {
		why = append(why, fmt.Sprintf("the CA bundle holds %d CAs", len(bundle)))
	}
	st.bundle = bundle
	if s := st.serving; s == nil || !slices.Equal(s.cert.DNSNames, m.dnsNames) || due(s.cert, now) || !verifies(s.cert, bundle, m.dnsNames[0], now) {
		if st.serving, err = newServing(st.ca, m.dnsNames, now, m.o.ServingLifetime); err != nil {
			return nil, nil, err
		}
		why = append(why, "issued a serving certificate")
	}
	return &st, why, nil
}

// Ensure makes the Secret hold valid certificates (creating or renewing them
// as due) and writes the serving certificate and key into Options.Dir.
func (m *Certs) Ensure(ctx context.Context) error {
	key := client.ObjectKey{Namespace: m.o.Namespace, Name: m.o.SecretName}
	for attempt := 0; attempt < 5; attempt++ {
		sec := &corev1.Secret{}
		err := m.c.Get(ctx, key, sec)
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading Secret %s: %w", key, err)
		}
		found := err == nil
		if !found {
			sec = nil
		}
		old := decode(sec)
		st, why, err := m.plan(ctx, old, m.o.Clock.Now(), m.trusted)
		if err != nil {
			return err
		}
		data := st.data()
		switch {
		case !found:
			sec = &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
					Labels: map[string]string{"app.kubernetes.io/managed-by": "mpool"}},
				Type: corev1.SecretTypeTLS,
				Data: data,
			}
			err = m.c.Create(ctx, sec)
			if apierrors.IsAlreadyExists(err) {
				continue // another replica won: use theirs
			}
		case !maps.EqualFunc(sec.Data, data, bytes.Equal):
			sec.Data = data
			err = m.c.Update(ctx, sec)
			if apierrors.IsConflict(err) {
				continue // another replica wrote it: judge theirs
			}
		default:
			why = nil
		}
		if err != nil {
			return fmt.Errorf("writing Secret %s: %w", key, err)
		}
		if len(why) > 0 {
			m.o.Log.Info("Webhook certificates changed", "secret", key.String(), "changes", why,
				"servingSerial", st.serving.cert.SerialNumber.Text(16), "servingNotAfter", st.serving.cert.NotAfter,
				"caSerial", st.ca.cert.SerialNumber.Text(16), "caNotAfter", st.ca.cert.NotAfter, "bundledCAs", len(st.bundle))
			select {
			case m.changed <- struct{}{}:
			default:
			}
		}
		return m.writeFiles(st.serving)
	}
	return fmt.Errorf("writing Secret %s: kept conflicting with other writers", key)
}

// writeFiles writes the serving key and certificate into Options.Dir, each by
// rename (so a reader never sees half a file), key first, and leaves files
// that already hold the same bytes alone (no needless reload).
func (m *Certs) writeFiles(s *keyPair) error {
	for _, f := range []struct {
		name string
		data []byte
	}{{KeyName, s.keyPEM}, {CertName, s.certPEM}} {
		p := filepath.Join(m.o.Dir, f.name)
		if cur, err := os.ReadFile(p); err == nil && bytes.Equal(cur, f.data) {
			continue
		}
		tmp, err := os.CreateTemp(m.o.Dir, "."+f.name+"-*")
		if err != nil {
			return fmt.Errorf("writing the webhook certificate: %w", err)
		}
		_, werr := tmp.Write(f.data)
		cerr := tmp.Close()
		if err := errors.Join(werr, cerr); err != nil {
			_ = os.Remove(tmp.Name())
			return fmt.Errorf("writing the webhook certificate: %w", err)
		}
		if err := os.Rename(tmp.Name(), p); err != nil {
			_ = os.Remove(tmp.Name())
			return fmt.Errorf("writing the webhook certificate: %w", err)
		}
	}
	return nil
}

// trusted reports whether every converted CRD that exists trusts ca.
func (m *Certs) trusted(ctx context.Context, ca *x509.Certificate) (bool, error) {
	for _, name := range m.o.CRDNames {
		c := &apiextensionsv1.CustomResourceDefinition{}
		if err := m.c.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return false, fmt.Errorf("reading CustomResourceDefinition %s: %w", name, err)
		}
		cc := clientConfig(c)
		if cc == nil {
			continue // converted by no webhook: nothing to trust
		}
		certs, err := parseCerts(cc.CABundle)
		if err != nil || !containsCert(certs, ca) {
			return false, nil
		}
	}
	return true, nil
}

func clientConfig(c *apiextensionsv1.CustomResourceDefinition) *apiextensionsv1.WebhookClientConfig {
	if c.Spec.Conversion == nil || c.Spec.Conversion.Strategy != apiextensionsv1.WebhookConverter || c.Spec.Conversion.Webhook == nil {
		return nil
	}
	return c.Spec.Conversion.Webhook.ClientConfig
}

// PatchCRDs sets the caBundle of every converted CRD's conversion webhook to
// the Secret's bundle. CRDs that are not installed are skipped; a converted
// CRD without a webhook conversion stanza is an error (the CRDs were installed
// without config/crd's patch).
func (m *Certs) PatchCRDs(ctx context.Context) error {
	sec := &corev1.Secret{}
	key := client.ObjectKey{Namespace: m.o.Namespace, Name: m.o.SecretName}
	if err := m.c.Get(ctx, key, sec); err != nil {
		return fmt.Errorf("reading Secret %s: %w", key, err)
	}
	bundle := sec.Data[KeyCABundle]
	if _, err := parseCerts(bundle); err != nil {
		return fmt.Errorf("Secret %s holds no CA bundle: %w", key, err)
	}
	var errs []error
	for _, name := range m.o.CRDNames {
		c := &apiextensionsv1.CustomResourceDefinition{}
		if err := m.c.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
			if !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("reading CustomResourceDefinition %s: %w", name, err))
			}
			continue
		}
		if !crd.Converted(c) {
			continue
		}
		cc := clientConfig(c)
		if cc == nil {
			errs = append(errs, fmt.Errorf("CustomResourceDefinition %s serves %d versions but converts through no webhook", name, len(c.Spec.Versions)))
			continue
		}
		if bytes.Equal(cc.CABundle, bundle) {
			continue
		}
		base := c.DeepCopy()
		cc.CABundle = bundle
		if err := m.c.Patch(ctx, c, client.MergeFrom(base)); err != nil {
			errs = append(errs, fmt.Errorf("patching the caBundle of CustomResourceDefinition %s: %w", name, err))
			continue
		}
		m.o.Log.Info("Patched the conversion webhook's caBundle", "crd", name)
	}
	for _, name := range m.o.ValidatingWebhooks {
		errs = append(errs, m.patchValidating(ctx, name, bundle))
	}
	return errors.Join(errs...)
}

// patchValidating sets the caBundle of every webhook of the
// ValidatingWebhookConfiguration name to bundle; one that is not installed
// is skipped.
func (m *Certs) patchValidating(ctx context.Context, name string, bundle []byte) error {
	w := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := m.c.Get(ctx, client.ObjectKey{Name: name}, w); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading ValidatingWebhookConfiguration %s: %w", name, err)
	}
	base := w.DeepCopy()
	changed := false
	for i := range w.Webhooks {
		if !bytes.Equal(w.Webhooks[i].ClientConfig.CABundle, bundle) {
			w.Webhooks[i].ClientConfig.CABundle = bundle
			changed = true
		}
	}
	if !changed {
		return nil
	}
	// A merge patch replaces the webhooks list whole: guard it with the
	// version read.
	if err := m.c.Patch(ctx, w, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("patching the caBundle of ValidatingWebhookConfiguration %s: %w", name, err)
	}
	m.o.Log.Info("Patched the validating webhook's caBundle", "validatingWebhookConfiguration", name)
	return nil
}

// Start runs Ensure now and then every Interval (every RetryInterval after a
// failure) until ctx ends. It runs on every replica.
func (m *Certs) Start(ctx context.Context) error {
	return m.loop(ctx, "ensuring the webhook certificates", m.Ensure, nil)
}

// NeedLeaderElection is false: every replica serves, so every replica keeps
// its certificate files current.
func (m *Certs) NeedLeaderElection() bool { return false }

// CRDPatcher returns the leader's runnable: PatchCRDs now, every Interval
// (every RetryInterval after a failure), and whenever this replica's Ensure
// changed the Secret.
func (m *Certs) CRDPatcher() manager.Runnable { return crdPatcher{m} }

type crdPatcher struct{ m *Certs }

func (p crdPatcher) Start(ctx context.Context) error {
	return p.m.loop(ctx, "patching the CRDs' conversion caBundle", p.m.PatchCRDs, p.m.changed)
}

// NeedLeaderElection is true: one writer of the CRDs.
func (crdPatcher) NeedLeaderElection() bool { return true }

func (m *Certs) loop(ctx context.Context, what string, f func(context.Context) error, wake <-chan struct{}) error {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
			if !t.Stop() {
				select {
				case <-t.C:
				default:
				}
			}
		case <-t.C:
		}
		next := m.o.Interval
		if err := f(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			m.o.Log.Error(err, "Failed "+what+"; retrying", "after", m.o.RetryInterval)
			next = m.o.RetryInterval
		}
		t.Reset(next)
	}
}
