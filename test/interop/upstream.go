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
	poolGate := mode != manager.ModePools
	components := []struct {
		c      kubeenv.UpstreamComponent
		bin    string
		gates  string
		prefix string
	}{
		{kubeenv.UpstreamCore, build.Core, "MachinePool=" + strconv.FormatBool(poolGate), "capi-"},
		{kubeenv.UpstreamKubeadm, build.Kubeadm, "MachinePool=true", "capi-kubeadm-bootstrap-"},
	}
	for _, comp := range components {
		crds, err := build.CRDs(comp.c)
		if err != nil {
			return nil, err
		}
		for _, c := range crds {
			if c.Labels == nil {
				c.Labels = map[string]string{}
			}
			for k, v := range crd.Labels(c.Spec.Group) {
				c.Labels[k] = v
			}
		}
		muts, vals, err := build.Webhooks(comp.c)
		if err != nil {
			return nil, err
		}
		p, err := StartManager(ctx, env, ManagerSpec{
			Name:          string(comp.c),
			Binary:        comp.bin,
			Dir:           dir,
			CRDs:          crds,
			Args:          []string{"--feature-gates=" + comp.gates, "--sync-period=1m"},
			WebhookPrefix: comp.prefix,
			Mutating:      muts,
			Validating:    vals,
			LeaveOut:      u.leftOut,
		})
		if p != nil {
			u.procs[string(comp.c)] = p
		}
		if err != nil {
			return nil, fmt.Errorf("upstream Cluster API: %w", err)
		}
	}
	return u, nil
}

// leftOut reports whether an upstream webhook is not installed in the mode:
// in ModePools, upstream core's MachinePool webhooks, which refuse every
// MachinePool while its gate is off (mpool's MachinePool controller serves
// them in that mode, judged by mpool's CRD rules and admission policies).
func (u *Upstream) leftOut(rules []admissionregistrationv1.RuleWithOperations) bool {
	if u.Mode != manager.ModePools {
		return false
	}
	for _, r := range rules {
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
