// Package interop runs mpool beside upstream Cluster API's own managers: the
// core manager and the kubeadm bootstrap manager of release
// kubeenv.UpstreamCAPIVersion, built from the Go module proxy and cached
// (kubeenv.EnsureUpstreamCAPI), run as processes against the package's
// embedded control plane with their own CRDs, conversion and admission
// webhooks (serving certificates made by the test, signed by the control
// plane's CA).
//
// Two stand-ins, and only these, take the place of providers that are not
// under test: the Cluster's control plane is a TestControlPlane object
// (a CRD of the test's, following the v1beta2 control plane contract) that
// the test marks initialized, as a control plane provider (KCP, a managed
// control plane) would once the API server answers; and the infrastructure
// cluster object (AzureCluster, AWSCluster) is marked ready by the test, as
// CAPZ's or CAPA's cluster controller would. Everything about the pools —
// MachinePools, KubeadmConfigs, Machines, Nodes, infrastructure pools and
// their per-instance objects — is done by upstream's and mpool's controllers.
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

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/config/crd"
	"github.com/mpool-dev/mpool/internal/kubeenv"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/testenv"
)

// InfrastructureOnly chooses, of mpool's CRDs, the ones a management
// cluster with upstream Cluster API gets from mpool: its infrastructure
// kinds. Upstream installs its own core and bootstrap CRDs.
func InfrastructureOnly(c *apiextensionsv1.CustomResourceDefinition) bool {
	return c.Spec.Group == infrav1.GroupVersion.Group
}

// Upstream is upstream Cluster API running beside mpool on one control
// plane, in the way a mode asks.
type Upstream struct {
	// Mode is the mpool mode the upstream managers are configured for:
	// ModeProviders (upstream's MachinePool controller on) or ModePools
	// (upstream core's MachinePool gate off, its MachinePool webhook not
	// installed).
	Mode manager.Mode
	// Build is the upstream build the managers run from.
	Build kubeenv.UpstreamCAPI

	env   *testenv.Env
	dir   string
	procs map[string]*kubeenv.Process
}

// Start builds (or finds cached) upstream's managers, installs their CRDs
// with conversion through the core and bootstrap managers' webhooks, starts
// both managers against env, waits until they serve, and installs their
// admission webhooks. In ModePools, upstream core runs with
// --feature-gates=MachinePool=false and its MachinePool admission webhook
// (which refuses every MachinePool while the gate is off) is left out; the
// kubeadm bootstrap manager keeps its MachinePool gate on, so that it
// writes the pools' bootstrap data.
func Start(ctx context.Context, env *testenv.Env, mode manager.Mode) (_ *Upstream, err error) {
	build, err := kubeenv.EnsureUpstreamCAPI(ctx, os.Stderr)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "mpool-interop-")
	if err != nil {
		return nil, err
	}
	u := &Upstream{Mode: mode, Build: build, env: env, dir: dir, procs: map[string]*kubeenv.Process{}}
	defer func() {
		if err != nil {
			u.Stop()
		}
	}()
	kubeconfig := u.Kubeconfig()
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

	poolGate := mode != manager.ModePools
	components := []struct {
		c     kubeenv.UpstreamComponent
		bin   string
		gates string
	}{
		{kubeenv.UpstreamCore, build.Core, "MachinePool=" + strconv.FormatBool(poolGate)},
		{kubeenv.UpstreamKubeadm, build.Kubeadm, "MachinePool=true"},
	}
	for _, comp := range components {
		var webhookPort, healthPort, diagPort int
		for _, port := range []*int{&webhookPort, &healthPort, &diagPort} {
			if *port, err = kubeenv.FreePort(); err != nil {
				return nil, err
			}
		}
		hookURL := "https://127.0.0.1:" + strconv.Itoa(webhookPort)
		crds, err := build.CRDs(comp.c)
		if err != nil {
			return nil, err
		}
		for _, c := range crds {
			prepareCRD(c, hookURL, env.CAData)
		}
		if err := kubeenv.InstallCRDs(ctx, env.Config, crds); err != nil {
			return nil, fmt.Errorf("installing upstream's %s CRDs: %w", comp.c, err)
		}
		p, err := kubeenv.StartProcess(comp.bin, []string{
			"--kubeconfig=" + kubeconfig,
			"--webhook-port=" + strconv.Itoa(webhookPort),
			"--webhook-cert-dir=" + certDir,
			"--health-addr=127.0.0.1:" + strconv.Itoa(healthPort),
			"--insecure-diagnostics",
			"--diagnostics-address=127.0.0.1:" + strconv.Itoa(diagPort),
			"--feature-gates=" + comp.gates,
			"--leader-elect=false",
			"--sync-period=1m",
		}, filepath.Join(dir, string(comp.c)+".log"))
		if err != nil {
			return nil, fmt.Errorf("starting upstream's %s manager: %w", comp.c, err)
		}
		u.procs[string(comp.c)] = p
		if err := p.WaitHTTP(ctx, "http://127.0.0.1:"+strconv.Itoa(healthPort)+"/readyz", nil, 3*time.Minute); err != nil {
			return nil, fmt.Errorf("upstream's %s manager: %w", comp.c, err)
		}
		muts, vals, err := build.Webhooks(comp.c)
		if err != nil {
			return nil, err
		}
		if err := u.installWebhooks(ctx, string(comp.c), hookURL, muts, vals); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// prepareCRD gives an upstream CRD what upstream's kustomization adds when
// it is released: the provider and contract labels clusterctl and the core
// controllers read, and conversion through its manager's webhook.
func prepareCRD(c *apiextensionsv1.CustomResourceDefinition, hookURL string, caBundle []byte) {
	if c.Labels == nil {
		c.Labels = map[string]string{}
	}
	for k, v := range crd.Labels(c.Spec.Group) {
		c.Labels[k] = v
	}
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

// installWebhooks installs upstream's admission webhooks, named as its
// release names them and pointed at the manager on loopback.
func (u *Upstream) installWebhooks(ctx context.Context, component, hookURL string, muts []*admissionregistrationv1.MutatingWebhookConfiguration, vals []*admissionregistrationv1.ValidatingWebhookConfiguration) error {
	prefix := "capi-"
	if component == string(kubeenv.UpstreamKubeadm) {
		prefix = "capi-kubeadm-bootstrap-"
	}
	point := func(cc *admissionregistrationv1.WebhookClientConfig) {
		url := hookURL
		if cc.Service != nil && cc.Service.Path != nil {
			url += *cc.Service.Path
		}
		*cc = admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: u.env.CAData}
	}
	var objs []client.Object
	for _, m := range muts {
		m.Name = prefix + m.Name
		m.Webhooks = slices.DeleteFunc(m.Webhooks, u.leftOut)
		for i := range m.Webhooks {
			point(&m.Webhooks[i].ClientConfig)
		}
		objs = append(objs, m)
	}
	for _, v := range vals {
		v.Name = prefix + v.Name
		v.Webhooks = slices.DeleteFunc(v.Webhooks, func(w admissionregistrationv1.ValidatingWebhook) bool {
			return u.leftOut(admissionregistrationv1.MutatingWebhook{Rules: w.Rules})
		})
		for i := range v.Webhooks {
			point(&v.Webhooks[i].ClientConfig)
		}
		objs = append(objs, v)
	}
	for _, o := range objs {
		if err := u.env.Client.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("installing upstream's webhook configuration %s: %w", o.GetName(), err)
		}
	}
	return nil
}

// leftOut reports whether an upstream webhook is not installed in the mode:
// in ModePools, upstream core's MachinePool webhooks, which refuse every
// MachinePool while its gate is off (mpool's MachinePool controller serves
// them in that mode, judged by mpool's CRD rules and admission policies).
func (u *Upstream) leftOut(w admissionregistrationv1.MutatingWebhook) bool {
	if u.Mode != manager.ModePools {
		return false
	}
	for _, r := range w.Rules {
		if slices.Contains(r.APIGroups, "cluster.x-k8s.io") && slices.Contains(r.Resources, "machinepools") {
			return true
		}
	}
	return false
}

// Kubeconfig is the path of the admin kubeconfig upstream's managers use.
func (u *Upstream) Kubeconfig() string { return filepath.Join(u.dir, "kubeconfig") }

// Logs returns the last n lines of the log of upstream's manager name
// ("core" or "kubeadm"), for a failing test to print.
func (u *Upstream) Logs(name string, n int) string {
	if p := u.procs[name]; p != nil {
		return p.Tail(n)
	}
	return ""
}

// Pids returns the process IDs of upstream's managers by name ("core",
// "kubeadm"), for reading their usage.
func (u *Upstream) Pids() map[string]int {
	out := map[string]int{}
	for name, p := range u.procs {
		out[name] = p.Pid()
	}
	return out
}

// Running returns an error naming the first upstream manager that has
// exited, with its log's tail.
func (u *Upstream) Running() error {
	for name, p := range u.procs {
		select {
		case <-p.Exited():
			return fmt.Errorf("upstream's %s manager exited:\n%s", name, p.Tail(30))
		default:
		}
	}
	return nil
}

// Stop stops upstream's managers (SIGTERM, then SIGKILL after 10 seconds)
// and removes their files unless MPOOL_INTEROP_KEEP is set.
func (u *Upstream) Stop() {
	for _, p := range u.procs {
		_ = p.Stop(10 * time.Second)
	}
	if os.Getenv("MPOOL_INTEROP_KEEP") == "" {
		_ = os.RemoveAll(u.dir)
	} else {
		fmt.Fprintf(os.Stderr, "interop: upstream's logs kept in %s\n", u.dir)
	}
}
