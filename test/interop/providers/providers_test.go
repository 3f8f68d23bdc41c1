// Package providers runs mpool in ModeProviders — only its infrastructure
// providers and rollout engine — under upstream Cluster API v1.14's core
// manager (its MachinePool controller creates the pool Machines and reads
// the InfraMachinePool contract) and kubeadm bootstrap manager (which writes
// the pools' bootstrap data), on one embedded control plane with the
// simulated clouds. See package interop for what stands in for the control
// plane and cluster infrastructure providers.
//
// What upstream does differently from mpool standalone, observed here and
// not papered over:
//
//   - Machines: upstream's MachinePool controller names each pool Machine
//     after its per-instance object and sets its nodeRef from the Node
//     whose providerID matches; mpool standalone matches Nodes the same way
//     but also by index for providers whose Nodes come up before the cloud
//     reports their providerID.
//   - Bootstrap data: upstream's kubeadm bootstrap provider puts the
//     bootstrap token inside the data and rotates it (a new Secret value
//     per rotation); mpool's engine masks the token when it hashes the
//     model, so a rotation rolls nothing here either.
package providers

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

func TestMain(m *testing.M) { interop.Main(m, &env, &up, manager.ModeProviders) }

func TestSeeds(t *testing.T) { interop.RunSeeds(t, env, up) }

func TestMachineOutlivesNoInstance(t *testing.T) { interop.RunMachineOutlivesNoInstance(t, env, up) }
