package azure

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// TestBadInput: a rejected client secret, a SKU Azure does not offer and
// one too small for a node are each reported in a condition that says what to change, nothing is
// created meanwhile, and the pool recovers once they are fixed.
func TestBadInput(t *testing.T) {
	f, _ := start(t, 0)

	t.Log("a wrong client secret")
	secret := &corev1.Secret{}
	if err := env.Client.Get(f.Ctx, f.Key("capz-identity-secret"), secret); err != nil {
		t.Fatal(err)
	}
	good := secret.Data["clientSecret"]
	secret.Data["clientSecret"] = []byte("not-the-secret")
	if err := env.Client.Update(f.Ctx, secret); err != nil {
		t.Fatal(err)
	}
	f.ApplySeed(itest.SetField("AzureMachinePool", "Standard_Nonexistent_v9", "spec", "template", "vmSize"))
	f.WaitCondition(converge, infrav1.ScaleSetRunningCondition, infrav1.CredentialsRejectedReason, "AzureClusterIdentity")
	if g := f.Group(); g != nil {
		t.Fatalf("a scale set exists although the credentials were refused: %+v", g)
	}

	t.Log("the right secret, an unknown SKU")
	secret.Data["clientSecret"] = good
	if err := env.Client.Update(f.Ctx, secret); err != nil {
		t.Fatal(err)
	}
	f.WaitCondition(converge, infrav1.ScaleSetRunningCondition, infrav1.InvalidSpecReason, "Standard_Nonexistent_v9", "vmSize")
	if g := f.Group(); g != nil {
		t.Fatalf("a scale set exists although its SKU was refused: %+v", g)
	}

	t.Log("a SKU too small for a Kubernetes node")
	f.updateAzurePool(func(p *infrav1.AzureMachinePool) { p.Spec.Template.VMSize = "Standard_B1s" })
	f.WaitCondition(converge, infrav1.ScaleSetRunningCondition, infrav1.InvalidSpecReason, "Standard_B1s", "at least 2 vCPUs and 2 GiB", "vmSize")

	t.Log("a SKU Azure offers")
	f.updateAzurePool(func(p *infrav1.AzureMachinePool) { p.Spec.Template.VMSize = "Standard_D2s_v3" })
	f.WaitConverged(2, seedVersion, converge)
	f.DeletePoolAndWaitGone(converge)
}
