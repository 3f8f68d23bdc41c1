package peer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/internal/kubeenv"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/face/awsface"
)

// capaProvider is the provider label CAPA's release gives its CRDs
// (config/default's kustomization), and capaContract the contract label
// (config/crd's): CAPA's v1beta2 kinds follow Cluster API's v1beta1
// contract.
const (
	capaProvider = "infrastructure-aws"
	capaContract = "v1beta1_v1beta2"
)

// CAPA is CAPA's manager running as a process against a control plane,
// pointed at a simulated AWS.
type CAPA struct {
	// Build is the CAPA build the manager runs from.
	Build kubeenv.UpstreamCAPA

	env  *testenv.Env
	dir  string
	proc *kubeenv.Process
}

// StartCAPA builds (or finds cached) CAPA's manager, installs its CRDs
// with conversion through its webhook, starts it against env with its
// MachinePool and MachinePoolMachines gates on and its EC2 and Auto Scaling
// endpoints at awsURL (the simulated AWS face: EC2 through
// --service-endpoints, Auto Scaling through AWS_ENDPOINT_URL_AUTO_SCALING),
// the face's default credentials in its environment, waits until it serves, and installs its
// admission webhooks. CAPA reconciles every object again every resync
// (its --sync-period, a minute here) besides what it watches.
func StartCAPA(ctx context.Context, env *testenv.Env, awsURL string, resync time.Duration) (_ *CAPA, err error) {
	build, err := kubeenv.EnsureUpstreamCAPA(ctx, os.Stderr)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "mpool-peer-capa-")
	if err != nil {
		return nil, err
	}
	c := &CAPA{Build: build, env: env, dir: dir}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.Kubeconfig, 0o600); err != nil {
		return nil, err
	}
	certDir := filepath.Join(dir, "certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return nil, err
	}
	certFile, keyFile := env.ControlPlane.ServingCertFiles()
	for src, dst := range map[string]string{certFile: "tls.crt", keyFile: "tls.key"} {
		b, err := os.ReadFile(src)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(certDir, dst), b, 0o600); err != nil {
			return nil, err
		}
	}
	var webhookPort, healthPort, diagPort int
	for _, port := range []*int{&webhookPort, &healthPort, &diagPort} {
		if *port, err = kubeenv.FreePort(); err != nil {
			return nil, err
		}
	}
	hookURL := "https://127.0.0.1:" + strconv.Itoa(webhookPort)
	crds, err := build.CRDs()
	if err != nil {
		return nil, err
	}
	for _, crd := range crds {
		prepareCRD(crd, hookURL, env.CAData)
	}
	if err := kubeenv.InstallCRDs(ctx, env.Config, crds); err != nil {
		return nil, fmt.Errorf("installing CAPA's CRDs: %w", err)
	}
	p, err := kubeenv.StartProcessEnv(build.Manager, []string{
		"--kubeconfig=" + kubeconfig,
		"--webhook-port=" + strconv.Itoa(webhookPort),
		"--webhook-cert-dir=" + certDir,
		"--health-addr=127.0.0.1:" + strconv.Itoa(healthPort),
		"--insecure-diagnostics",
		"--diagnostics-address=127.0.0.1:" + strconv.Itoa(diagPort),
		"--feature-gates=MachinePool=true,MachinePoolMachines=true",
		"--leader-elect=false",
		"--sync-period=" + resync.String(),
		// CAPA's own format: <signing region>:<service ID>=<URL>,...
		fmt.Sprintf("--service-endpoints=%s:ec2=%s", awsface.AWSDefaultRegion, awsURL),
	}, []string{
		"AWS_ACCESS_KEY_ID=" + awsface.AWSDefaultAccessKeyID,
		"AWS_SECRET_ACCESS_KEY=" + awsface.AWSDefaultSecretAccessKey,
		"AWS_REGION=" + awsface.AWSDefaultRegion,
		// CAPA's Auto Scaling client takes no --service-endpoints (its
		// EC2, ELB, S3, ... clients do); the SDK's service-specific
		// endpoint variable reaches it.
		"AWS_ENDPOINT_URL_AUTO_SCALING=" + awsURL,
		"AWS_EC2_METADATA_DISABLED=true",
	}, filepath.Join(dir, "capa.log"))
	if err != nil {
		return nil, fmt.Errorf("starting CAPA's manager: %w", err)
	}
	c.proc = p
	if err := p.WaitHTTP(ctx, "http://127.0.0.1:"+strconv.Itoa(healthPort)+"/readyz", nil, 3*time.Minute); err != nil {
		return nil, fmt.Errorf("CAPA's manager: %w", err)
	}
	muts, vals, err := build.Webhooks()
	if err != nil {
		return nil, err
	}
	if err := c.installWebhooks(ctx, hookURL, muts, vals); err != nil {
		return nil, err
	}
	return c, nil
}

// prepareCRD gives one of CAPA's CRDs what its release's kustomization
// adds: the provider and contract labels, and conversion through its
// manager's webhook.
func prepareCRD(c *apiextensionsv1.CustomResourceDefinition, hookURL string, caBundle []byte) {
	if c.Labels == nil {
		c.Labels = map[string]string{}
	}
	c.Labels["cluster.x-k8s.io/provider"] = capaProvider
	c.Labels["cluster.x-k8s.io/v1beta1"] = capaContract
	if len(c.Spec.Versions) < 2 {
		return
	}
	url := hookURL + "/convert"
	c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: caBundle},
			ConversionReviewVersions: []string{"v1", "v1beta1"},
		},
	}
}

// installWebhooks installs CAPA's admission webhooks, named as its
// release names them (capa-...) and pointed at the manager on loopback. The
// ROSA kinds' webhooks are left out: their gate is off, so the manager
// does not serve them.
func (c *CAPA) installWebhooks(ctx context.Context, hookURL string, muts []*admissionregistrationv1.MutatingWebhookConfiguration, vals []*admissionregistrationv1.ValidatingWebhookConfiguration) error {
	point := func(cc *admissionregistrationv1.WebhookClientConfig) {
		url := hookURL
		if cc.Service != nil && cc.Service.Path != nil {
			url += *cc.Service.Path
		}
		*cc = admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: c.env.CAData}
	}
	rosa := func(rules []admissionregistrationv1.RuleWithOperations) bool {
		for _, r := range rules {
			for _, res := range r.Resources {
				if strings.HasPrefix(res, "rosa") {
					return true
				}
			}
		}
		return false
	}
	var objs []client.Object
	for _, m := range muts {
		m.Name = "capa-" + m.Name
		m.Webhooks = slices.DeleteFunc(m.Webhooks, func(w admissionregistrationv1.MutatingWebhook) bool { return rosa(w.Rules) })
		for i := range m.Webhooks {
			point(&m.Webhooks[i].ClientConfig)
		}
		objs = append(objs, m)
	}
	for _, v := range vals {
		v.Name = "capa-" + v.Name
		v.Webhooks = slices.DeleteFunc(v.Webhooks, func(w admissionregistrationv1.ValidatingWebhook) bool { return rosa(w.Rules) })
		for i := range v.Webhooks {
			point(&v.Webhooks[i].ClientConfig)
		}
		objs = append(objs, v)
	}
	for _, o := range objs {
		if err := c.env.Client.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("installing CAPA's webhook configuration %s: %w", o.GetName(), err)
		}
	}
	return nil
}

// Pid is the manager's process ID.
func (c *CAPA) Pid() int { return c.proc.Pid() }

// Logs returns the last n lines of CAPA's log, for a failing test to print.
func (c *CAPA) Logs(n int) string {
	if c.proc == nil {
		return ""
	}
	return c.proc.Tail(n)
}

// Running returns an error with the log's tail once CAPA's manager has
// exited.
func (c *CAPA) Running() error {
	select {
	case <-c.proc.Exited():
		return fmt.Errorf("CAPA's manager exited:\n%s", c.proc.Tail(30))
	default:
		return nil
	}
}

// Stop stops CAPA's manager (SIGTERM, then SIGKILL after 10 seconds) and
// removes its files unless MPOOL_INTEROP_KEEP is set.
func (c *CAPA) Stop() {
	if c.proc != nil {
		_ = c.proc.Stop(10 * time.Second)
	}
	if os.Getenv("MPOOL_INTEROP_KEEP") == "" {
		_ = os.RemoveAll(c.dir)
	} else {
		fmt.Fprintf(os.Stderr, "peer: CAPA's log kept in %s\n", c.dir)
	}
}
