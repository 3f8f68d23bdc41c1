package gcp

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/gcp"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/gcpface"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// TestBadInput: a service account key Google refuses (deleted:
// invalid_grant from the token URI), a machine type one of the pool's
// zones does not offer, and a scale-up beyond the project's CPUS quota
// (403 quotaExceeded) are each reported in a condition that says what to
// change; nothing is created meanwhile, and the pool recovers once each is
// fixed.
func TestBadInput(t *testing.T) {
	// 12 vCPUs: three c3-standard-4 instances.
	f, _ := itest.Start(t, env, itest.GCP, itest.CloudOptions{Faces: []core.Face{&gcpface.GCPFace{CPUQuota: 12}}})
	cloud := f.Cloud.Cloud()
	url := f.Cloud.FaceURL(gcpface.GCPFaceName)
	account := gcpface.GCPDefaultServiceAccount

	t.Log("a deleted service account key")
	key, err := gcpface.GCPCreateKey(cloud, gcpface.GCPDefaultProject, account, url)
	if err != nil {
		t.Fatal(err)
	}
	var kf struct {
		PrivateKeyID string `json:"private_key_id"`
	}
	if err := json.Unmarshal(key, &kf); err != nil || kf.PrivateKeyID == "" {
		t.Fatalf("the key file names no key: %v", err)
	}
	if err := gcpface.GCPDeleteKey(cloud, kf.PrivateKeyID); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "capg-key"}, Data: map[string][]byte{gcp.CredentialsKey: key}}
	f.Create(secret)
	itest.Patch(f, f.Key(itest.GCP.ClusterName), &infrav1.GCPCluster{}, func(gc *infrav1.GCPCluster) {
		gc.Spec.CredentialsRef = &infrav1.GCPObjectReference{Namespace: f.NS, Name: secret.Name}
	})
	f.ApplySeed(
		itest.SetField("GCPMachinePool", "c3-standard-4", "spec", "instanceType"),
		itest.SetField("GCPMachinePool", []any{"us-central1-a", "us-central1-f"}, "spec", "zones"),
	)
	f.WaitCondition(converge, infrav1.InstanceGroupReadyCondition, infrav1.CredentialsRejectedReason, "Secret "+f.NS+"/capg-key", "invalid_grant", "check the service account key")
	if g := f.Group(); g != nil {
		t.Fatalf("a group exists although the key was refused: %+v", g)
	}

	t.Log("a key Google accepts, a machine type a zone of the pool does not offer")
	if key, err = gcpface.GCPCreateKey(cloud, gcpface.GCPDefaultProject, account, url); err != nil {
		t.Fatal(err)
	}
	itest.Patch(f, f.Key(secret.Name), &corev1.Secret{}, func(s *corev1.Secret) { s.Data[gcp.CredentialsKey] = key })
	f.WaitCondition(converge, infrav1.InstanceGroupReadyCondition, infrav1.InvalidSpecReason, "c3-standard-4", "us-central1-f", "spec.instanceType", "spec.zones")
	if g := f.Group(); g != nil {
		t.Fatalf("a group exists although its machine type was refused: %+v", g)
	}

	t.Log("zones that offer it")
	itest.UpdatePool(f, func(p *infrav1.GCPMachinePool) { p.Spec.Zones = []string{"us-central1-a", "us-central1-b"} })
	f.WaitConverged(2, seedVersion, converge)

	t.Log("a scale-up beyond the CPUS quota")
	f.Scale(4)
	f.WaitCondition(converge, infrav1.InstanceGroupReadyCondition, infrav1.QuotaExceededReason, "CPUS", "raise the project's quota")
	if n := len(f.InstanceIDs()); n != 2 {
		t.Errorf("%d instances beyond the quota, want the 2 there were", n)
	}
	f.Scale(3)
	f.WaitConverged(3, seedVersion, converge)
	deletePoolAndWaitGone(f)
}
