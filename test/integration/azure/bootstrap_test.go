package azure

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mpool-dev/mpool/internal/cloudsim"
	"github.com/mpool-dev/mpool/internal/controller/kubeadmconfig"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/testenv"
)

// TestTokenRotationReplacesNothing: on a long-lived pool the bootstrap
// token rotates; no VM is replaced and the scale set is not written at
// rest (CAPZ issue #4958 churned the scale set's model on every rotation).
// The current custom data reaches the scale set with the next write that
// creates VMs, and they join with it.
func TestTokenRotationReplacesNothing(t *testing.T) {
	cloud := startCloud(t, 0)
	f := newFixture(t, cloud)
	// Tokens live 40s: at rest one is rotated within about half a minute.
	m := startManager(t, f, func(o *manager.Options) { o.BootstrapTokenTTL = 40 * time.Second })
	f.ApplySeed(nil)
	f.WaitConverged(2, seedVersion, converge)
	before := f.InstanceIDs()
	token := f.DataSecret().Annotations[kubeadmconfig.TokenSecretAnnotation]
	if token == "" {
		t.Fatal("the data Secret names no bootstrap token")
	}
	m.ScaleGroup.ResetCounts()
	testenv.Eventually(t, time.Minute, func() error {
		if got := f.DataSecret().Annotations[kubeadmconfig.TokenSecretAnnotation]; got == token {
			return fmt.Errorf("the token %s has not been rotated yet", token)
		}
		return nil
	})
	testenv.Eventually(t, time.Minute, func() error {
		err := env.Client.Get(f.Ctx, types.NamespacedName{Namespace: metav1.NamespaceSystem, Name: token}, &corev1.Secret{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("token Secret %s still there (%v)", token, err)
		}
		return nil
	})
	f.PokeUntilReconciled(t, 3)
	if c := m.ScaleGroup.Counts(); c.Writes() != 0 || c.Reads() == 0 {
		t.Fatalf("a token rotation on a pool at rest made %d scale set writes (%d reads): %v", c.Writes(), c.Reads(), c)
	}
	if after := f.InstanceIDs(); !slices.Equal(after, before) {
		t.Fatalf("a token rotation replaced VMs: %v, were %v", after, before)
	}
	if n := f.ops(cloudsim.OpAzureVMSSCreateOrUpdate) + f.ops(cloudsim.OpAzureVMSSUpdate); n != 1 {
		t.Errorf("the scale set was written %d times, want only its creation", n)
	}

	// A scale-up carries the current custom data: the new VM joins with the
	// new token (the old one no longer exists).
	f.Scale(3)
	f.WaitConverged(3, seedVersion, converge)
}
