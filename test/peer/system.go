package peer

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mpool-dev/mpool/internal/kubeenv"
	"github.com/mpool-dev/mpool/internal/provider/aws"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/test/interop"
)

// System is one of the two systems the package runs the same scenario on,
// each on its own control plane (CAPA's AWSMachinePool and mpool's share
// group and kind, so one API server cannot serve both) and both on the
// package's one simulated AWS: the peer (upstream core + CABPK + CAPA) and
// mpool (its own core and AWS provider, `mpool manager` as a process).
type System struct {
	// Name names the system in logs and metrics ("peer", "mpool").
	Name string
	// Env is its control plane.
	Env *testenv.Env
	// InstanceGVK is its per-instance infrastructure kind: CAPA's
	// AWSMachine, mpool's AWSMachinePoolMachine.
	InstanceGVK schema.GroupVersionKind
	// InstanceOwner is the kind that owns its per-instance objects: core's
	// Machine for CAPA's (upstream's Machine controller adopts the
	// infrastructure machine it references), the AWSMachinePool for
	// mpool's.
	InstanceOwner string
	// GroupName is the name its AWS provider gives the Auto Scaling group
	// of pool name in namespace ns.
	GroupName func(ns, name string) string
	// Pids are its managers' process IDs, for their usage.
	Pids func() []int
	// Running returns an error, with a log's tail, once one of its
	// managers has exited.
	Running func() error
	// Logs returns the tails of its managers' logs, for a failing test.
	Logs func() string
}

// PeerSystem is the peer on env: upstream's managers up and CAPA's c. CAPA
// names a pool's group after its AWSMachinePool.
func PeerSystem(env *testenv.Env, up *interop.Upstream, c *CAPA) *System {
	return &System{
		Name:          "peer",
		Env:           env,
		InstanceGVK:   AWSMachineGVK,
		InstanceOwner: "Machine",
		GroupName:     func(_, name string) string { return name },
		Pids: func() []int {
			pids := []int{c.Pid()}
			for _, pid := range up.Pids() {
				pids = append(pids, pid)
			}
			return pids
		},
		Running: func() error {
			if err := c.Running(); err != nil {
				return err
			}
			return up.Running()
		},
		Logs: func() string {
			return fmt.Sprintf("CAPA's log:\n%s\nupstream core's log:\n%s", c.Logs(80), up.Logs("core", 30))
		},
	}
}

// MpoolSystem is mpool on env, its manager m.
func MpoolSystem(env *testenv.Env, m *Mpool) *System {
	return &System{
		Name:          "mpool",
		Env:           env,
		InstanceGVK:   AWSMachinePoolMachineGVK,
		InstanceOwner: "AWSMachinePool",
		GroupName:     aws.GroupName,
		Pids:          func() []int { return []int{m.proc.Pid()} },
		Running: func() error {
			select {
			case <-m.proc.Exited():
				return fmt.Errorf("mpool's manager exited:\n%s", m.proc.Tail(30))
			default:
				return nil
			}
		},
		Logs: func() string { return "mpool's log:\n" + m.proc.Tail(80) },
	}
}

// Mpool is `mpool manager` running as a process against a control plane
// with mpool's CRDs, its AWS provider pointed at a simulated AWS.
type Mpool struct {
	dir  string
	proc *kubeenv.Process
}

// StartMpool builds mpool, starts `mpool manager` against env as shipped
// (its defaults, the standalone mode: its own Cluster, KubeadmConfig and
// MachinePool controllers and its providers) but for what a process on
// loopback needs: env's admin kubeconfig, its AWS provider's endpoint at
// awsURL with the face's default key in its environment (the manager's
// own credentials, for AWSClusterControllerIdentity), the Azure provider
// off, no conversion webhook (env converts in the test process), the same
// resync as CAPA's; and waits until it is ready.
func StartMpool(ctx context.Context, env *testenv.Env, awsURL string, resync time.Duration) (_ *Mpool, err error) {
	dir, err := os.MkdirTemp("", "mpool-peer-mpool-")
	if err != nil {
		return nil, err
	}
	m := &Mpool{dir: dir}
	defer func() {
		if err != nil {
			m.Stop()
		}
	}()
	bin := filepath.Join(dir, "mpool")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/mpool-dev/mpool/cmd/mpool").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building mpool: %v\n%s", err, out)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.Kubeconfig, 0o600); err != nil {
		return nil, err
	}
	probes, err := kubeenv.FreePort()
	if err != nil {
		return nil, err
	}
	args := []string{
		"manager",
		"--kubeconfig=" + kubeconfig,
		"--metrics-bind-address=0",
		"--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(probes),
		"--conversion-webhook=false",
		"--sync-period=" + resync.String(),
		"--aws-endpoint=" + awsURL,
		"--aws-region=" + awsface.AWSDefaultRegion,
		"--azure-disabled",
	}
	m.proc, err = kubeenv.StartProcessEnv(bin, args, []string{
		"AWS_ACCESS_KEY_ID=" + awsface.AWSDefaultAccessKeyID,
		"AWS_SECRET_ACCESS_KEY=" + awsface.AWSDefaultSecretAccessKey,
		"AWS_REGION=" + awsface.AWSDefaultRegion,
		"AWS_EC2_METADATA_DISABLED=true",
	}, filepath.Join(dir, "manager.log"))
	if err != nil {
		return nil, err
	}
	if err := m.proc.WaitHTTP(ctx, "http://127.0.0.1:"+strconv.Itoa(probes)+"/readyz", nil, 2*time.Minute); err != nil {
		return nil, fmt.Errorf("mpool's manager: %w\n%s", err, m.proc.Tail(30))
	}
	return m, nil
}

// Stop stops mpool's manager (SIGTERM, then SIGKILL after 10 seconds) and
// removes its files unless MPOOL_INTEROP_KEEP is set.
func (m *Mpool) Stop() { stopManager(m.proc, m.dir, "mpool") }

// stopManager stops a manager's process, if it started (SIGTERM, then
// SIGKILL after 10 seconds), and removes its directory dir unless
// MPOOL_INTEROP_KEEP is set.
func stopManager(proc *kubeenv.Process, dir, name string) {
	if proc != nil {
		_ = proc.Stop(10 * time.Second)
	}
	if os.Getenv("MPOOL_INTEROP_KEEP") == "" {
		_ = os.RemoveAll(dir)
	} else {
		fmt.Fprintf(os.Stderr, "peer: %s's log kept in %s\n", name, dir)
	}
}
