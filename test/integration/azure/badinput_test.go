package azure

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// waitCondition waits until the AzureMachinePool's condition t is not
// True, with reason and a message containing every one of words.
func (f *fixture) waitCondition(t, reason string, words ...string) {
	f.t.Helper()
	testenv.Eventually(f.t, converge, func() error {
		ap := &infrav1.AzureMachinePool{}
		if err := env.Client.Get(f.ctx, f.key(poolName), ap); err != nil {
			return err
		}
		return itest.ConditionNotTrue(ap.Status.Conditions, t, reason, words...)
	})
}

// TestBadInput: a rejected client secret, a SKU Azure does not offer and
// one too small for a node are each reported in a condition that says what to change, nothing is
// created meanwhile, and the pool recovers once they are fixed.
func TestBadInput(t *testing.T) {
	cloud := startCloud(t, 0)
	f := newFixture(t, cloud)
	startManager(t, f, nil)

	t.Log("a wrong client secret")
	secret := &corev1.Secret{}
	if err := env.Client.Get(f.ctx, f.key("capz-identity-secret"), secret); err != nil {
		t.Fatal(err)
	}
	good := secret.Data["clientSecret"]
	secret.Data["clientSecret"] = []byte("not-the-secret")
	if err := env.Client.Update(f.ctx, secret); err != nil {
		t.Fatal(err)
	}
	f.applySeed(func(obj *unstructured.Unstructured) {
		if obj.GetKind() == "AzureMachinePool" {
			_ = unstructured.SetNestedField(obj.Object, "Standard_Nonexistent_v9", "spec", "template", "vmSize")
		}
	})
	f.waitCondition(infrav1.ScaleSetRunningCondition, infrav1.CredentialsRejectedReason, "AzureClusterIdentity")
	if g := f.group(); g != nil {
		t.Fatalf("a scale set exists although the credentials were refused: %+v", g)
	}

	t.Log("the right secret, an unknown SKU")
	secret.Data["clientSecret"] = good
	if err := env.Client.Update(f.ctx, secret); err != nil {
		t.Fatal(err)
	}
	f.waitCondition(infrav1.ScaleSetRunningCondition, infrav1.InvalidSpecReason, "Standard_Nonexistent_v9", "vmSize")
	if g := f.group(); g != nil {
		t.Fatalf("a scale set exists although its SKU was refused: %+v", g)
	}

	t.Log("a SKU too small for a Kubernetes node")
	f.updateAzurePool(func(p *infrav1.AzureMachinePool) { p.Spec.Template.VMSize = "Standard_B1s" })
	f.waitCondition(infrav1.ScaleSetRunningCondition, infrav1.InvalidSpecReason, "Standard_B1s", "at least 2 vCPUs and 2 GiB", "vmSize")

	t.Log("a SKU Azure offers")
	f.updateAzurePool(func(p *infrav1.AzureMachinePool) { p.Spec.Template.VMSize = "Standard_D2s_v3" })
	f.waitConverged(2, seedVersion, converge)
	f.deletePoolAndWaitGone()
}
