// Package pools runs mpool in ModePools — its MachinePool controller, its
// providers and the rollout engine — beside upstream Cluster API v1.14's
// core manager with its MachinePool feature gate off (upstream owns
// Clusters and Machines; mpool's MachinePool controller replaces
// upstream's) and upstream's kubeadm bootstrap manager (which writes the
// pools' bootstrap data, with its own MachinePool gate on), on one embedded
// control plane with the simulated clouds. See package interop for what
// stands in for the control plane and cluster infrastructure providers.
//
// What this mode means, and what upstream does differently:
//
//   - Upstream core's MachinePool admission webhook refuses every
//     MachinePool while its gate is off, so it is not installed in this
//     mode; mpool's CRD rules and admission policies judge MachinePools.
//     Conversion of MachinePools between v1beta1 and v1beta2 stays
//     upstream's.
//   - KubeadmConfigs are upstream's: the bootstrap token is inside the
//     bootstrap data and rotated by upstream's kubeadm bootstrap provider.
//     mpool's own KubeadmConfig controller keeps tokens out of the model
//     and the data; beside upstream that improvement is not in force, and
//     the engine's token-masking hash is what keeps a rotation from rolling
//     the pool.
package pools

import (
	"testing"

	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/test/interop"
)

var (
	env *testenv.Env
	up  *interop.Upstream
)

func TestMain(m *testing.M) { interop.Main(m, &env, &up, manager.ModePools) }

func TestSeeds(t *testing.T) { interop.RunSeeds(t, env, up) }
