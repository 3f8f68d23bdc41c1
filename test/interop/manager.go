package interop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/internal/kubeenv"
	"github.com/mpool-dev/mpool/internal/testenv"
)

// ManagerSpec is one of Cluster API's managers (upstream core, its kubeadm
// bootstrap provider, an infrastructure provider such as CAPA) as these
// tests run it: a process on loopback against env, deployed as its release
// manifests deploy it.
type ManagerSpec struct {
	// Name names the manager in errors and its log file (<Dir>/<Name>.log).
	Name string
	// Binary is the manager's executable.
	Binary string
	// Dir holds the admin kubeconfig, the serving certificate (certs/) and
	// the log; managers may share it.
	Dir string
	// CRDs are the manager's CRDs, labelled as its release labels them;
	// those of more than one version convert through its webhook.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// Args are the manager's flags beyond those every manager gets
	// (kubeconfig, webhook port and certificates, health and diagnostics
	// addresses on free loopback ports, --leader-elect=false).
	Args []string
	// Env is added to the process's environment ("KEY=value").
	Env []string
	// WebhookPrefix prefixes the names of its admission webhook
	// configurations, as its release names them (capi-, capa-, ...).
	WebhookPrefix string
	// Mutating and Validating are its admission webhook configurations,
	// installed once it is ready.
	Mutating   []*admissionregistrationv1.MutatingWebhookConfiguration
	Validating []*admissionregistrationv1.ValidatingWebhookConfiguration
	// LeaveOut reports whether a webhook of these rules is not installed
	// (nil: all are).
	LeaveOut func([]admissionregistrationv1.RuleWithOperations) bool
}

// StartManager writes the admin kubeconfig and the serving certificate
// into spec.Dir, installs spec's CRDs with conversion through the
// manager's webhook, starts the manager, waits until it is ready and
// installs its admission webhooks pointed at it.
func StartManager(ctx context.Context, env *testenv.Env, spec ManagerSpec) (*kubeenv.Process, error) {
	kubeconfig, certDir, err := writeManagerFiles(env, spec.Dir)
	if err != nil {
		return nil, err
	}
	var webhookPort, healthPort, diagPort int
	for _, port := range []*int{&webhookPort, &healthPort, &diagPort} {
		if *port, err = kubeenv.FreePort(); err != nil {
			return nil, err
		}
	}
	hookURL := "https://127.0.0.1:" + strconv.Itoa(webhookPort)
	for _, c := range spec.CRDs {
		convertThrough(c, hookURL, env.CAData)
	}
	if err := kubeenv.InstallCRDs(ctx, env.Config, spec.CRDs); err != nil {
		return nil, fmt.Errorf("installing %s's CRDs: %w", spec.Name, err)
	}
	p, err := kubeenv.StartProcessEnv(spec.Binary, append([]string{
		"--kubeconfig=" + kubeconfig,
		"--webhook-port=" + strconv.Itoa(webhookPort),
		"--webhook-cert-dir=" + certDir,
		"--health-addr=127.0.0.1:" + strconv.Itoa(healthPort),
		"--insecure-diagnostics",
		"--diagnostics-address=127.0.0.1:" + strconv.Itoa(diagPort),
		"--leader-elect=false",
	}, spec.Args...), spec.Env, filepath.Join(spec.Dir, spec.Name+".log"))
	if err != nil {
		return nil, fmt.Errorf("starting %s's manager: %w", spec.Name, err)
	}
	if err := p.WaitHTTP(ctx, "http://127.0.0.1:"+strconv.Itoa(healthPort)+"/readyz", nil, 3*time.Minute); err != nil {
		return p, fmt.Errorf("%s's manager: %w", spec.Name, err)
	}
	return p, installWebhooks(ctx, env, spec, hookURL)
}

// writeManagerFiles writes the admin kubeconfig and the control plane's
// serving certificate (which names 127.0.0.1) into dir.
func writeManagerFiles(env *testenv.Env, dir string) (kubeconfig, certDir string, err error) {
	kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.Kubeconfig, 0o600); err != nil {
		return "", "", err
	}
	certDir = filepath.Join(dir, "certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return "", "", err
	}
	certFile, keyFile := env.ControlPlane.ServingCertFiles()
	for src, dst := range map[string]string{certFile: "tls.crt", keyFile: "tls.key"} {
		b, err := os.ReadFile(src)
		if err != nil {
			return "", "", err
		}
		if err := os.WriteFile(filepath.Join(certDir, dst), b, 0o600); err != nil {
			return "", "", err
		}
	}
	return kubeconfig, certDir, nil
}

// convertThrough makes a CRD of more than one version convert through the
// manager's webhook at hookURL, as its release's kustomization does.
func convertThrough(c *apiextensionsv1.CustomResourceDefinition, hookURL string, caBundle []byte) {
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

// installWebhooks installs a manager's admission webhooks, named as its
// release names them and pointed at the manager on loopback.
func installWebhooks(ctx context.Context, env *testenv.Env, spec ManagerSpec, hookURL string) error {
	point := func(cc *admissionregistrationv1.WebhookClientConfig) {
		url := hookURL
		if cc.Service != nil && cc.Service.Path != nil {
			url += *cc.Service.Path
		}
		*cc = admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: env.CAData}
	}
	leaveOut := func(rules []admissionregistrationv1.RuleWithOperations) bool {
		return spec.LeaveOut != nil && spec.LeaveOut(rules)
	}
	var objs []client.Object
	for _, m := range spec.Mutating {
		m.Name = spec.WebhookPrefix + m.Name
		m.Webhooks = slices.DeleteFunc(m.Webhooks, func(w admissionregistrationv1.MutatingWebhook) bool { return leaveOut(w.Rules) })
		for i := range m.Webhooks {
			point(&m.Webhooks[i].ClientConfig)
		}
		objs = append(objs, m)
	}
	for _, v := range spec.Validating {
		v.Name = spec.WebhookPrefix + v.Name
		v.Webhooks = slices.DeleteFunc(v.Webhooks, func(w admissionregistrationv1.ValidatingWebhook) bool { return leaveOut(w.Rules) })
		for i := range v.Webhooks {
			point(&v.Webhooks[i].ClientConfig)
		}
		objs = append(objs, v)
	}
	for _, o := range objs {
		if err := env.Client.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("installing %s's webhook configuration %s: %w", spec.Name, o.GetName(), err)
		}
	}
	return nil
}
