package kubeenv

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Options configure a control plane.
type Options struct {
	// DataDir keeps etcd's data, the certificates, the ports and the logs.
	// Empty means a temporary directory that Stop removes.
	DataDir string
	// Durable makes etcd fsync its writes. Tests leave it off for speed;
	// `mpool up` turns it on so that a crash does not lose objects.
	Durable bool
	// Progress receives human-readable progress lines (binary build, start).
	Progress io.Writer
	// ExtraAPIServerArgs are appended to kube-apiserver's flags.
	ExtraAPIServerArgs []string
	// ReadyTimeout bounds the wait for kube-apiserver's /readyz. Default 2m.
	ReadyTimeout time.Duration
	// CRDs are installed once the API server is ready and before the
	// controller manager starts, so its garbage collector knows them at once.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// Conversion, when set, builds the handler of the CRD conversion webhook
	// from a config of the started API server: the control plane serves it on
	// loopback from before the CRDs are installed until it stops, and points
	// every CRD of CRDs that serves more than one version at it.
	Conversion func(*rest.Config) (http.Handler, error)
	// Validation, when set with Conversion, is a validating admission
	// webhook the control plane serves on the same loopback server and
	// registers once the CRDs are installed (and again on every start: the
	// port changes).
	Validation *ValidatingWebhook
}

// ValidatingWebhook is a validating admission webhook an embedded control
// plane serves.
type ValidatingWebhook struct {
	// Path is where the handler is served.
	Path string
	// Handler builds the handler from a config of the started API server.
	Handler func(*rest.Config) (http.Handler, error)
	// Configuration returns the ValidatingWebhookConfiguration that sends
	// requests to cc (the control plane's URL for Path and its CA).
	Configuration func(cc admissionregistrationv1.WebhookClientConfig) *admissionregistrationv1.ValidatingWebhookConfiguration
}

// controllers are the kube-controller-manager controllers the embedded
// control plane runs: what a cluster without kubelets still needs for its
// objects to behave as in production (cascading deletion, PodDisruptionBudget
// status for evictions, namespace deletion, bootstrap-token expiry and
// cluster-info signing). Node lifecycle is left out: simulated heartbeats at
// 10,000 Nodes are slower than its grace period.
var controllers = []string{
	"garbage-collector-controller",
	"namespace-controller",
	"disruption-controller",
	"pod-garbage-collector-controller",
	"serviceaccount-controller",
	"serviceaccount-token-controller",
	"root-ca-certificate-publisher-controller",
	"token-cleaner-controller",
	"bootstrap-signer-controller",
	"validatingadmissionpolicy-status-controller",
}

// ControlPlane is a running etcd and kube-apiserver on loopback.
type ControlPlane struct {
	dir     string
	tempDir bool
	pki     pki
	ports   ports
	etcd    *Process
	api     *Process
	kcm     *Process
	unlock  func()
	// conversion is the embedded conversion webhook, if any.
	conversion *conversionServer
}

type ports struct {
	EtcdClient int `json:"etcdClient"`
	EtcdPeer   int `json:"etcdPeer"`
	APIServer  int `json:"apiServer"`
}

// Start builds the binaries if needed, then starts etcd and kube-apiserver
// and waits until the API server is ready.
func Start(ctx context.Context, opts Options) (cp *ControlPlane, err error) {
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 2 * time.Minute
	}
	bins, err := EnsureBinaries(ctx, opts.Progress)
	if err != nil {
		return nil, err
	}
	c := &ControlPlane{dir: opts.DataDir}
	if c.dir == "" {
		if c.dir, err = os.MkdirTemp("", "mpool-controlplane-"); err != nil {
			return nil, fmt.Errorf("creating a temporary data directory: %w", err)
		}
		c.tempDir = true
	}
	if c.dir, err = filepath.Abs(c.dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data directory: %w", err)
	}
	if c.unlock, err = tryLockDir(c.dir); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = c.Stop()
		}
	}()
	c.pki = pki{dir: filepath.Join(c.dir, "pki")}
	if err := c.pki.ensure(); err != nil {
		return nil, fmt.Errorf("creating certificates: %w", err)
	}
	// A port found free may be taken by another process before etcd or
	// kube-apiserver binds it (parallel test packages do this); then pick
	// fresh ports and try again.
	for attempt := 1; ; attempt++ {
		err = c.startProcesses(ctx, bins, opts)
		if err == nil || attempt == 3 || !strings.Contains(err.Error(), "address already in use") {
			break
		}
		fmt.Fprintf(opts.Progress, "a control-plane port was taken while starting; retrying with new ports\n")
		_ = c.stopProcesses(2 * time.Second)
		_ = os.Remove(filepath.Join(c.dir, "ports.json"))
	}
	if err != nil {
		return nil, err
	}
	if err := c.wireConversion(opts); err != nil {
		return nil, err
	}
	if len(opts.CRDs) > 0 {
		if err := InstallCRDs(ctx, c.RESTConfig(), opts.CRDs); err != nil {
			return nil, err
		}
	}
	if err := c.registerValidation(ctx, opts); err != nil {
		return nil, err
	}
	if err := c.startControllerManager(bins); err != nil {
		return nil, err
	}
	return c, nil
}

// startControllerManager runs kube-controller-manager with the controllers
// above. It serves nothing, so there is no readiness to wait for; its
// controllers start within a second or two.
func (c *ControlPlane) startControllerManager(bins Binaries) error {
	kc, err := c.Kubeconfig()
	if err != nil {
		return err
	}
	kcPath := filepath.Join(c.pki.dir, "controller-manager.kubeconfig")
	if err := os.WriteFile(kcPath, kc, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", kcPath, err)
	}
	args := []string{
		"--kubeconfig=" + kcPath,
		"--controllers=" + strings.Join(controllers, ","),
		"--leader-elect=false",
		"--secure-port=0",
		"--use-service-account-credentials=false",
		"--service-account-private-key-file=" + c.pki.path("sa.key"),
		"--root-ca-file=" + c.pki.path("ca.crt"),
		"--kube-api-qps=200",
		"--kube-api-burst=400",
	}
	c.kcm, err = StartProcess(bins.ControllerManager, args, filepath.Join(c.dir, "kube-controller-manager.log"))
	return err
}

// startProcesses picks ports and starts etcd, then kube-apiserver, waiting
// for each to be ready.
func (c *ControlPlane) startProcesses(ctx context.Context, bins Binaries, opts Options) (err error) {
	if err := c.choosePorts(); err != nil {
		return err
	}

	etcdArgs := []string{
		"--name=mpool",
		"--data-dir=" + filepath.Join(c.dir, "etcd"),
		"--listen-client-urls=" + c.EtcdURL(),
		"--advertise-client-urls=" + c.EtcdURL(),
		fmt.Sprintf("--listen-peer-urls=http://127.0.0.1:%d", c.ports.EtcdPeer),
		fmt.Sprintf("--initial-advertise-peer-urls=http://127.0.0.1:%d", c.ports.EtcdPeer),
		fmt.Sprintf("--initial-cluster=mpool=http://127.0.0.1:%d", c.ports.EtcdPeer),
		"--log-level=warn",
		"--quota-backend-bytes=8589934592",
	}
	if !opts.Durable {
		etcdArgs = append(etcdArgs, "--unsafe-no-fsync")
	}
	if c.etcd, err = StartProcess(bins.Etcd, etcdArgs, filepath.Join(c.dir, "etcd.log")); err != nil {
		return err
	}
	if err := c.etcd.WaitHTTP(ctx, c.EtcdURL()+"/health", nil, 30*time.Second); err != nil {
		return fmt.Errorf("waiting for etcd: %w", err)
	}

	apiArgs := []string{
		"--advertise-address=127.0.0.1",
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", c.ports.APIServer),
		"--etcd-servers=" + c.EtcdURL(),
		"--cert-dir=" + c.pki.dir,
		"--tls-cert-file=" + c.pki.path("apiserver.crt"),
		"--tls-private-key-file=" + c.pki.path("apiserver.key"),
		"--client-ca-file=" + c.pki.path("ca.crt"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + c.pki.path("sa.pub"),
		"--service-account-signing-key-file=" + c.pki.path("sa.key"),
		"--service-cluster-ip-range=10.96.0.0/16",
		"--authorization-mode=RBAC",
		"--enable-bootstrap-token-auth=true",
		// ServiceAccount: a pod created right after its namespace would be
		// refused until the default ServiceAccount exists; simulated nodes
		// mount no tokens anyway.
		// TaintNodesByCondition: it taints every new Node not-ready, for the
		// node lifecycle controller to remove; that controller does not run
		// here (simulated heartbeats at 10,000 Nodes are slower than its
		// grace period), so the taint would only cost every joining Node a
		// second write.
		"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
		"--allow-privileged=true",
		"--enable-priority-and-fairness=false",
		"--profiling=false",
		// No Service for the API server is needed, and the reconciler refuses
		// a loopback advertise address.
		"--endpoint-reconciler-type=none",
	}
	apiArgs = append(apiArgs, opts.ExtraAPIServerArgs...)
	if c.api, err = StartProcess(bins.APIServer, apiArgs, filepath.Join(c.dir, "kube-apiserver.log")); err != nil {
		return err
	}
	tlsCfg, err := c.adminTLS()
	if err != nil {
		return err
	}
	if err := c.api.WaitHTTP(ctx, c.Host()+"/readyz", tlsCfg, opts.ReadyTimeout); err != nil {
		return fmt.Errorf("waiting for kube-apiserver: %w", err)
	}
	return nil
}

// choosePorts reuses the ports recorded in the data directory when they are
// free, so a restarted control plane keeps its address; otherwise it picks
// free ones and records them.
func (c *ControlPlane) choosePorts() error {
	path := filepath.Join(c.dir, "ports.json")
	if b, err := os.ReadFile(path); err == nil {
		var p ports
		if json.Unmarshal(b, &p) == nil && portFree(p.EtcdClient) && portFree(p.EtcdPeer) && portFree(p.APIServer) {
			c.ports = p
			return nil
		}
	}
	var err error
	for _, dst := range []*int{&c.ports.EtcdClient, &c.ports.EtcdPeer, &c.ports.APIServer} {
		if *dst, err = FreePort(); err != nil {
			return err
		}
	}
	b, _ := json.Marshal(c.ports)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("recording ports: %w", err)
	}
	return nil
}

func portFree(p int) bool {
	if p == 0 {
		return false
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}

// Dir is the control plane's data directory.
func (c *ControlPlane) Dir() string { return c.dir }

// EtcdURL is etcd's client URL.
func (c *ControlPlane) EtcdURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d", c.ports.EtcdClient)
}

// Host is the API server's URL.
func (c *ControlPlane) Host() string {
	return fmt.Sprintf("https://127.0.0.1:%d", c.ports.APIServer)
}

// ServingCertFiles are the paths of the API server's serving certificate and
// key: valid for 127.0.0.1 and signed by the CA of CAData, so that a webhook
// on loopback serving them is trusted by a CRD or webhook configuration whose
// caBundle is CAData.
func (c *ControlPlane) ServingCertFiles() (cert, key string) {
	return c.pki.path("apiserver.crt"), c.pki.path("apiserver.key")
}

// CAKeyData is the cluster CA's private key, PEM encoded: what Cluster API
// keeps beside the certificate in a cluster's "<cluster>-ca" Secret.
func (c *ControlPlane) CAKeyData() []byte {
	b, _ := os.ReadFile(c.pki.path("ca.key"))
	return b
}

// CAData is the cluster CA certificate, PEM encoded.
func (c *ControlPlane) CAData() []byte {
	b, _ := os.ReadFile(c.pki.CACert())
	return b
}

// Client limits of RESTConfig: the embedded API server serves one user's
// tools and controllers on loopback, far above client-go's defaults.
const (
	ClientQPS   = 200
	ClientBurst = 400
)

// RESTConfig returns an admin (system:masters) client configuration.
func (c *ControlPlane) RESTConfig() *rest.Config {
	certData, _ := os.ReadFile(c.pki.path("admin.crt"))
	keyData, _ := os.ReadFile(c.pki.path("admin.key"))
	return &rest.Config{
		Host: c.Host(),
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   c.CAData(),
			CertData: certData,
			KeyData:  keyData,
		},
		QPS:   ClientQPS,
		Burst: ClientBurst,
	}
}

// Kubeconfig returns an admin kubeconfig with the credentials inlined.
func (c *ControlPlane) Kubeconfig() ([]byte, error) {
	return KubeconfigFor(c.RESTConfig(), "mpool")
}

// KubeconfigFor renders cfg as a kubeconfig whose cluster, user and context
// are all called name. Only certificate and token credentials are carried.
func KubeconfigFor(cfg *rest.Config, name string) ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	return clientcmd.Write(*kc)
}

func (c *ControlPlane) adminTLS() (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(c.pki.path("admin.crt"), c.pki.path("admin.key"))
	if err != nil {
		return nil, fmt.Errorf("loading the admin certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.CAData())
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// Stop stops kube-apiserver, then etcd, and removes a temporary data
// directory. It is safe to call more than once.
func (c *ControlPlane) Stop() error {
	// A temporary control plane's data is thrown away: no need to wait for
	// kube-apiserver to drain watches that clients still hold open.
	grace := 15 * time.Second
	if c.tempDir {
		grace = 2 * time.Second
	}
	errs := []error{c.stopProcesses(grace), c.conversion.stop()}
	c.conversion = nil
	if c.unlock != nil {
		c.unlock()
		c.unlock = nil
	}
	if c.tempDir {
		errs = append(errs, os.RemoveAll(c.dir))
	}
	return errors.Join(errs...)
}

func (c *ControlPlane) stopProcesses(grace time.Duration) error {
	var errs []error
	for _, p := range []*Process{c.kcm, c.api, c.etcd} {
		if p != nil {
			if err := p.Stop(grace); err != nil && !c.tempDir {
				errs = append(errs, err)
			}
		}
	}
	c.kcm, c.api, c.etcd = nil, nil, nil
	return errors.Join(errs...)
}
