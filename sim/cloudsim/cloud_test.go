package cloudsim

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/sim/face/azureface"
	"github.com/mpool-dev/mpool/sim/face/eksface"
	"github.com/mpool-dev/mpool/sim/face/gcpface"
)

// TestBuiltinFacesDescribeTheirSandbox: each built-in face says its own
// default account and prepares what the examples name, so `mpool up` names
// no cloud.
func TestBuiltinFacesDescribeTheirSandbox(t *testing.T) {
	srv, err := Start(context.Background(), core.Options{DataDir: t.TempDir(), DefaultSimulation: &core.Simulation{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })

	want := map[string]core.Account{
		azureface.AzureFaceName: {Tenant: azureface.AzureDefaultTenantID, ID: azureface.AzureDefaultClientID, Secret: azureface.AzureDefaultClientSecret},
		awsface.AWSFaceName:     {ID: awsface.AWSDefaultAccessKeyID, Secret: awsface.AWSDefaultSecretAccessKey, Region: awsface.AWSDefaultRegion},
		gcpface.GCPFaceName:     (&gcpface.GCPFace{}).DefaultAccount(),
	}
	got := srv.DefaultAccounts()
	if len(got) != len(want) {
		t.Fatalf("default accounts %v, want %v", got, want)
	}
	for face, a := range want {
		if got[face] != a {
			t.Errorf("face %s: default account %+v, want %+v", face, got[face], a)
		}
	}

	// Where the faces listen, each with its default account once, in its
	// cloud's words, and the scope it is in.
	lines := strings.Join(srv.FaceLines(), "\n")
	for _, w := range []string{
		"aws face at http://", "; access key " + awsface.AWSDefaultAccessKeyID + ", secret " + awsface.AWSDefaultSecretAccessKey +
			", region " + awsface.AWSDefaultRegion + "; account " + awsface.AWSDefaultAccountID,
		"; tenant " + azureface.AzureDefaultTenantID + ", client " + azureface.AzureDefaultClientID + ", secret " + azureface.AzureDefaultClientSecret +
			"; subscription " + azureface.AzureDefaultSubscriptionID,
		"gcp face at https://", "; service account " + gcpface.GCPDefaultServiceAccount + ", its private key in PEM, region " + gcpface.GCPDefaultRegion +
			"; project " + gcpface.GCPDefaultProject,
	} {
		if !strings.Contains(lines, w) {
			t.Errorf("face lines lack %q:\n%s", w, lines)
		}
	}
	if strings.Contains(lines, "PRIVATE KEY") {
		t.Errorf("the GCP default key printed:\n%s", lines)
	}
	if n := strings.Count(lines, awsface.AWSDefaultSecretAccessKey); n != 1 {
		t.Errorf("the AWS secret printed %d times, want once:\n%s", n, lines)
	}

	if bytes.Contains(srv.Cloud().FaceData(eksface.EKSFaceName), []byte(eksface.EKSDefaultClusterName)) {
		t.Fatalf("the EKS cluster %s exists before PrepareSandbox", eksface.EKSDefaultClusterName)
	}
	if bytes.Contains(srv.Cloud().FaceData(azureface.AzureFaceName), []byte(azureface.AKSDefaultClusterName)) {
		t.Fatalf("the AKS cluster %s exists before PrepareSandbox", azureface.AKSDefaultClusterName)
	}
	for i := range 2 { // as on every start of `mpool up`
		if err := srv.PrepareSandbox(""); err != nil {
			t.Fatalf("PrepareSandbox #%d: %v", i+1, err)
		}
	}
	if !bytes.Contains(srv.Cloud().FaceData(eksface.EKSFaceName), []byte(eksface.EKSDefaultClusterName)) {
		t.Fatalf("PrepareSandbox did not create the EKS cluster %s", eksface.EKSDefaultClusterName)
	}
	if n := bytes.Count(srv.Cloud().FaceData(azureface.AzureFaceName), []byte(`"name":"`+azureface.AKSDefaultClusterName+`"`)); n != 1 {
		t.Fatalf("PrepareSandbox made %d AKS clusters %s, want 1", n, azureface.AKSDefaultClusterName)
	}
}
