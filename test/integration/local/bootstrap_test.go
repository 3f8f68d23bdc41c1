package local

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"

	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// TestTokenRotationAtRestWritesNothing: a rotated bootstrap token is not a
// reason to write to the cloud (CAPZ issue #4958 rewrote the scale set
// model on every rotation, CAPA made a launch template version). The new
// data reaches the cloud with the next write that creates instances from
// it, and those instances join with it.
func TestTokenRotationAtRestWritesNothing(t *testing.T) {
	// Tokens live 40s: at rest one is rotated within about half a minute.
	f, mgr := start(t, cloudOptions{}, managerOptions{tune: func(o *manager.Options) { o.BootstrapTokenTTL = 40 * time.Second }})
	f.createPool(poolSpec{replicas: 2})
	f.waitConverged(2, v1, "", converge)
	token := f.CheckTokenRotationAtRest(mgr)

	// A scale-up carries the current data, and the new instance joins with it.
	f.Scale(3)
	f.waitConverged(3, v1, "", converge)
	// The old token is gone (an instance created from the group's stale
	// data could not join): the new instance joined, so the scale-up carried
	// the current data. The cloud, like Azure, never returns custom data.
	if err := env.Client.Get(f.Ctx, types.NamespacedName{Namespace: metav1.NamespaceSystem, Name: token}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the token %s of before the rotation still exists (%v): the join proves nothing", token, err)
	}
}

// TestKubeadmConfigChangeRollsThePool: a changed KubeadmConfig (here the
// kubelet's arguments) is re-rendered into the bootstrap data, whose content
// is part of the instances' model: the pool rolls within its budgets.
func TestKubeadmConfigChangeRollsThePool(t *testing.T) {
	f, _ := start(t, cloudOptions{}, managerOptions{spied: true})
	f.createPool(poolSpec{replicas: 3, maxSurge: intstr.FromInt32(1), maxUnavailable: intstr.FromInt32(0)})
	f.waitConverged(3, v1, "ubuntu-2404", converge)
	before := itest.IDs(f.Instances())

	w := itest.WatchBudgets(f.Fixture, 3, 1, 0)
	cfg := &bootstrapv1.KubeadmConfig{}
	if err := env.Client.Get(f.Ctx, f.Key(poolName), cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Spec.JoinConfiguration.NodeRegistration.KubeletExtraArgs = append(cfg.Spec.JoinConfiguration.NodeRegistration.KubeletExtraArgs,
		bootstrapv1.Arg{Name: "max-pods", Value: ptr.To("50")})
	if err := env.Client.Update(f.Ctx, cfg); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 2*converge, func() error {
		after := itest.IDs(f.Instances())
		for _, id := range before {
			if slices.Contains(after, id) {
				return fmt.Errorf("instance %s has not been replaced yet", id)
			}
		}
		return f.converged(3, v1, "ubuntu-2404")
	})
	w.AssertHeld()
	if !bytes.Contains(f.DataSecret().Data["value"], []byte("max-pods")) {
		t.Fatal("the bootstrap data was not re-rendered with the new kubelet argument")
	}
	f.spy.assertClean()
}
