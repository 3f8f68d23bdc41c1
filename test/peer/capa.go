package peer

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/mpool-dev/mpool/internal/kubeenv"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/test/interop"
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
	c := &CAPA{Build: build, dir: dir}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	crds, err := build.CRDs()
	if err != nil {
		return nil, err
	}
	for _, c := range crds {
		// The provider and contract labels of CAPA's release.
		if c.Labels == nil {
			c.Labels = map[string]string{}
		}
		c.Labels["cluster.x-k8s.io/provider"] = capaProvider
		c.Labels["cluster.x-k8s.io/v1beta1"] = capaContract
	}
	muts, vals, err := build.Webhooks()
	if err != nil {
		return nil, err
	}
	c.proc, err = interop.StartManager(ctx, env, interop.ManagerSpec{
		Name:   "capa",
		Binary: build.Manager,
		Dir:    dir,
		CRDs:   crds,
		Args: []string{
			"--feature-gates=MachinePool=true,MachinePoolMachines=true",
			"--sync-period=" + resync.String(),
			// CAPA's own format: <signing region>:<service ID>=<URL>,...
			fmt.Sprintf("--service-endpoints=%s:ec2=%s", awsface.AWSDefaultRegion, awsURL),
		},
		Env: []string{
			"AWS_ACCESS_KEY_ID=" + awsface.AWSDefaultAccessKeyID,
			"AWS_SECRET_ACCESS_KEY=" + awsface.AWSDefaultSecretAccessKey,
			"AWS_REGION=" + awsface.AWSDefaultRegion,
			// CAPA's Auto Scaling client takes no --service-endpoints (its
			// EC2, ELB, S3, ... clients do); the SDK's service-specific
			// endpoint variable reaches it.
			"AWS_ENDPOINT_URL_AUTO_SCALING=" + awsURL,
			"AWS_EC2_METADATA_DISABLED=true",
		},
		// The ROSA kinds' webhooks: their gate is off, so the manager does
		// not serve them.
		WebhookPrefix: "capa-",
		Mutating:      muts,
		Validating:    vals,
		LeaveOut:      rosa,
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// rosa reports whether webhook rules are the ROSA kinds'.
func rosa(rules []admissionregistrationv1.RuleWithOperations) bool {
	for _, r := range rules {
		for _, res := range r.Resources {
			if strings.HasPrefix(res, "rosa") {
				return true
			}
		}
	}
	return false
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
func (c *CAPA) Stop() { stopManager(c.proc, c.dir, "CAPA") }
