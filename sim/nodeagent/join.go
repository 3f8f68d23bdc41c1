package nodeagent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
	bootstraputil "k8s.io/cluster-bootstrap/token/util"

	"github.com/mpool-dev/mpool/sim/cloudinit"
)

// MessageTokenRejected is the instance message when the API server refuses
// the bootstrap token.
const MessageTokenRejected = "Bootstrap token rejected by the API server (401 Unauthorized): the token is wrong or expired"

// MessageCAHashMismatch starts the instance message when the API server's CA
// matches none of the join configuration's caCertHashes.
const MessageCAHashMismatch = "CA certificate hash mismatch"

// chainTTL is how long a fetched server certificate chain is reused.
const chainTTL = 30 * time.Second

const requestTimeout = 15 * time.Second

// joinError classifies a failed join attempt.
type joinError struct {
	// permanent failures are not retried: the instance never joins.
	permanent bool
	// unauthorized: the API server refused the token (retried a few times).
	unauthorized bool
	msg          string
}

func (e *joinError) Error() string { return e.msg }

func permanentf(format string, args ...any) error {
	return &joinError{permanent: true, msg: fmt.Sprintf(format, args...)}
}

func transientf(format string, args ...any) error {
	return &joinError{msg: fmt.Sprintf(format, args...)}
}

func asJoinError(err error) *joinError {
	var je *joinError
	if errors.As(err, &je) {
		return je
	}
	return &joinError{msg: err.Error()}
}

// join performs one attempt of what the VM does after boot and returns the
// Node's name and the API server it joined.
func (a *Agent) join(ctx context.Context, j *job) (nodeName, endpoint string, err error) {
	inst := j.inst
	inst.Health = j.health
	if len(inst.CustomData) == 0 {
		return "", "", permanentf("Instance has no bootstrap data")
	}
	jc, err := cloudinit.ReadJoin(inst.CustomData, metadata(inst))
	if err != nil {
		return "", "", permanentf("Reading bootstrap data: %v", err)
	}
	endpoint, err = NormalizeEndpoint(jc.APIServerEndpoint)
	if err != nil {
		return "", "", permanentf("Invalid apiServerEndpoint: %v", err)
	}

	if inst.WrongToken {
		jc.TLSBootstrapToken = wrongToken(jc.TLSBootstrapToken)
	}
	if !inst.Joined {
		if !bootstraputil.IsValidBootstrapToken(jc.TLSBootstrapToken) {
			return "", "", permanentf("The bootstrap token in the join configuration is malformed (want <6 chars>.<16 chars>)")
		}
		chain, err := a.peerChain(ctx, endpoint)
		if err != nil {
			return "", "", transientf("Cannot reach the API server at %s: %v", endpoint, err)
		}
		ca, err := a.discoverCA(ctx, endpoint, chain, jc)
		if err != nil {
			return "", "", err
		}
		if err := a.authenticate(ctx, endpoint, ca, jc.TLSBootstrapToken); err != nil {
			return "", "", err
		}
	}

	if inst.Joined && inst.Health == HealthKubeletStopped {
		// A stopped kubelet posts nothing when the cloud restarts.
		return jc.NodeName, endpoint, nil
	}
	cs, err := a.client(endpoint)
	if err != nil {
		return "", "", err
	}
	if err := a.register(ctx, cs, inst, jc); err != nil {
		return "", "", transientf("Registering node %s: %v", jc.NodeName, err)
	}
	return jc.NodeName, endpoint, nil
}

type chainEntry struct {
	certs   []*x509.Certificate
	fetched time.Time
}

// peerChain returns the certificate chain the API server presents, cached
// briefly so a thousand instances booting at once do not dial a thousand
// times.
func (a *Agent) peerChain(ctx context.Context, endpoint string) ([]*x509.Certificate, error) {
	now := a.clock.Now()
	a.mu.Lock()
	if e := a.chains[endpoint]; e != nil && now.Sub(e.fetched) < chainTTL {
		a.mu.Unlock()
		return e.certs, nil
	}
	a.mu.Unlock()

	host, _, _ := net.SplitHostPort(endpoint)
	d := &tls.Dialer{
		NetDialer: &net.Dialer{Timeout: requestTimeout},
		// Discovery starts untrusted, like kubeadm's; the chain is checked
		// against the pinned CA below.
		Config: &tls.Config{InsecureSkipVerify: true, ServerName: serverName(host)}, //nolint:gosec // pinned below
	}
	conn, err := d.DialContext(ctx, "tcp", endpoint)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	certs := conn.(*tls.Conn).ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return nil, errors.New("the API server presented no certificate")
	}
	a.mu.Lock()
	a.chains[endpoint] = &chainEntry{certs: certs, fetched: now}
	a.mu.Unlock()
	return certs, nil
}

func serverName(host string) string {
	if net.ParseIP(host) != nil {
		return ""
	}
	return host
}

// Pin returns kubeadm's public key pin of a certificate:
// "sha256:<hex of the SHA-256 of its SubjectPublicKeyInfo>".
func Pin(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// discoverCA finds the cluster CA and checks it against the join
// configuration's caCertHashes, as kubeadm's token discovery does. A
// candidate CA is accepted only if its pin is listed and the API server's
// certificate verifies against it; candidates come from the server's chain,
// the node agent's credentials for this server and the kube-public
// cluster-info ConfigMap. The source of a candidate does not matter: trust
// comes from the pin and the verification. It returns nil (no CA, insecure)
// only with unsafeSkipCAVerification.
func (a *Agent) discoverCA(ctx context.Context, endpoint string, chain []*x509.Certificate, jc *cloudinit.JoinConfig) (*x509.Certificate, error) {
	pins := map[string]bool{}
	for _, p := range jc.CACertHashes {
		pins[strings.ToLower(strings.TrimSpace(p))] = true
	}
	if len(pins) == 0 && !jc.UnsafeSkipCAVerification {
		return nil, permanentf("The join configuration has no caCertHashes and unsafeSkipCAVerification is false: refusing to trust the API server")
	}
	host, _, _ := net.SplitHostPort(endpoint)
	leaf := chain[0]
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	verifies := func(ca *x509.Certificate) bool {
		if ca.Equal(leaf) {
			return leaf.CheckSignatureFrom(leaf) == nil
		}
		roots := x509.NewCertPool()
		roots.AddCert(ca)
		_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, DNSName: host, CurrentTime: a.clock.Now()})
		return err == nil
	}

	var trusted []*x509.Certificate // candidates the server's certificate verifies against
	check := func(cands []*x509.Certificate) *x509.Certificate {
		for _, c := range cands {
			if !verifies(c) {
				continue
			}
			trusted = append(trusted, c)
			if pins[Pin(c)] {
				return c
			}
		}
		return nil
	}
	if ca := check(chain); ca != nil {
		return ca, nil
	}
	if ca := check(a.credentialCA(endpoint)); ca != nil {
		return ca, nil
	}
	if ca := check(a.clusterInfoCA(ctx, endpoint)); ca != nil {
		return ca, nil
	}
	if len(pins) == 0 { // unsafeSkipCAVerification
		if len(trusted) > 0 {
			return trusted[0], nil
		}
		return nil, nil
	}
	if len(trusted) == 0 {
		return nil, permanentf("%s: could not find a CA certificate for the API server at %s to check caCertHashes against", MessageCAHashMismatch, endpoint)
	}
	return nil, permanentf("%s: the API server's CA (%s) matches none of the join configuration's caCertHashes", MessageCAHashMismatch, Pin(trusted[0]))
}

// credentialCA returns the CA of the node agent's credentials for endpoint.
func (a *Agent) credentialCA(endpoint string) []*x509.Certificate {
	cfg := a.creds[endpoint]
	if cfg == nil {
		return nil
	}
	data := cfg.CAData
	if len(data) == 0 && cfg.CAFile != "" {
		data, _ = os.ReadFile(cfg.CAFile)
	}
	return parseCerts(data)
}

// clusterInfoCA fetches the CA from the kube-public/cluster-info ConfigMap
// anonymously, as kubeadm does; any failure yields no candidate.
func (a *Agent) clusterInfoCA(ctx context.Context, endpoint string) []*x509.Certificate {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+endpoint+"/api/v1/namespaces/kube-public/configmaps/cluster-info", nil)
	if err != nil {
		return nil
	}
	resp, err := a.authClient(endpoint, nil).Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	var cm corev1.ConfigMap
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&cm); err != nil {
		return nil
	}
	kc, err := clientcmd.Load([]byte(cm.Data["kubeconfig"]))
	if err != nil {
		return nil
	}
	var out []*x509.Certificate
	for _, c := range kc.Clusters {
		out = append(out, parseCerts(c.CertificateAuthorityData)...)
	}
	return out
}

func parseCerts(pemData []byte) []*x509.Certificate {
	certs, err := certutil.ParseCertsPEM(pemData)
	if err != nil {
		return nil
	}
	return certs
}

// authClient returns the shared HTTP client for endpoint trusting ca (nil:
// skip verification).
func (a *Agent) authClient(endpoint string, ca *x509.Certificate) *http.Client {
	key := endpoint + "|insecure"
	if ca != nil {
		key = endpoint + "|" + Pin(ca)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if c := a.authClients[key]; c != nil {
		return c
	}
	host, _, _ := net.SplitHostPort(endpoint)
	tlsCfg := &tls.Config{ServerName: serverName(host), MinVersion: tls.VersionTLS12}
	if ca == nil {
		tlsCfg.InsecureSkipVerify = true //nolint:gosec // unsafeSkipCAVerification / untrusted discovery
	} else {
		roots := x509.NewCertPool()
		roots.AddCert(ca)
		tlsCfg.RootCAs = roots
		if tlsCfg.ServerName == "" {
			tlsCfg.ServerName = host
		}
	}
	var rt http.RoundTripper = &http.Transport{
		TLSClientConfig:     tlsCfg,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   true,
	}
	if a.opts.WrapTransport != nil {
		rt = a.opts.WrapTransport(rt)
	}
	c := &http.Client{Timeout: requestTimeout, Transport: rt}
	a.authClients[key] = c
	return c
}

// authenticate checks the bootstrap token with a SelfSubjectReview, which
// any authenticated user may create.
func (a *Agent) authenticate(ctx context.Context, endpoint string, ca *x509.Certificate, token string) error {
	body, _ := json.Marshal(&authenticationv1.SelfSubjectReview{})
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+endpoint+"/apis/authentication.k8s.io/v1/selfsubjectreviews", bytes.NewReader(body))
	if err != nil {
		return permanentf("Building the authentication request: %v", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := a.authClient(endpoint, ca).Do(req)
	if err != nil {
		return transientf("Authenticating to the API server at %s: %v", endpoint, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return &joinError{unauthorized: true, msg: MessageTokenRejected}
	case resp.StatusCode == http.StatusCreated, resp.StatusCode == http.StatusOK, resp.StatusCode == http.StatusForbidden:
		// 403: authenticated, only not allowed to review itself.
		return nil
	default:
		return transientf("Authenticating to the API server at %s: unexpected status %s", endpoint, resp.Status)
	}
}

// client returns the node agent's shared client for endpoint.
func (a *Agent) client(endpoint string) (kubernetes.Interface, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c := a.clients[endpoint]; c != nil {
		return c, nil
	}
	cfg := a.creds[endpoint]
	if cfg == nil {
		return nil, permanentf("The simulated cloud has no node-agent credentials for the API server at %s", endpoint)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = a.opts.QPS, a.opts.Burst
	cfg.UserAgent = "mpool-cloudsim-node-agent"
	// Protobuf, as a kubelet talks (its --kube-api-content-type default):
	// every Node, Lease and Pod the agent writes or reads is a built-in
	// type, and the API server encodes and decodes protobuf for a fraction
	// of JSON's CPU.
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	cfg.Timeout = requestTimeout
	cfg.Wrap(a.opts.WrapTransport)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, permanentf("Creating a client for %s: %v", endpoint, err)
	}
	a.clients[endpoint] = cs
	return cs, nil
}

// wrongToken returns a well-formed bootstrap token with token's ID and a
// different secret, so that the API server, not the format check, refuses
// it. A malformed token is returned as it is.
func wrongToken(token string) string {
	id, secret, ok := strings.Cut(token, ".")
	if !ok || len(secret) != 16 {
		return token
	}
	wrong := []byte(secret)
	for i, c := range wrong {
		// Rotate within [0-9a-z]: every character changes.
		switch {
		case c >= '0' && c < '9', c >= 'a' && c < 'z':
			wrong[i] = c + 1
		case c == '9':
			wrong[i] = 'a'
		default:
			wrong[i] = '0'
		}
	}
	return id + "." + string(wrong)
}

// metadata is the instance data of inst as cloud-init exposes it.
func metadata(inst Instance) cloudinit.Metadata {
	meta := cloudinit.MetadataOf(inst.Metadata)
	def := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	def(&meta.LocalHostname, inst.Hostname)
	def(&meta.InstanceID, inst.ID)
	def(&meta.LocalIPv4, inst.PrivateIP)
	def(&meta.AvailabilityZone, inst.Zone)
	return meta
}
