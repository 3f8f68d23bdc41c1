package eks_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/cloudsim"
	awsprovider "github.com/mpool-dev/mpool/internal/provider/aws"
	"github.com/mpool-dev/mpool/internal/provider/aws/eks"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/provider/contract/contracttest"
	"github.com/mpool-dev/mpool/internal/scalegroup"
)

// TestScaleGroupKeepsTheContract runs the ScaleGroup contract suite on the
// EKS provider against the simulated EKS (and its EC2), with node groups
// the Adapter maps from an AWSManagedMachinePool.
func TestScaleGroupKeepsTheContract(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	srv, err := cloudsim.Start(context.Background(), cloudsim.Options{Clock: clk, Seed: 7, DefaultSimulation: &cloudsim.Simulation{BootDelay: time.Second}})
	if err != nil {
		t.Fatalf("starting the simulated cloud: %v", err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	if err := cloudsim.EKSCreateCluster(srv.Cloud(), cloudsim.AWSDefaultAccountID, cloudsim.AWSDefaultRegion, cloudsim.EKSDefaultClusterName, cloudsim.EKSDefaultVersion); err != nil {
		t.Fatal(err)
	}
	creds := &awsprovider.IdentityCredentials{Default: awsprovider.NewStaticCredentials(cloudsim.AWSDefaultAccessKeyID, cloudsim.AWSDefaultSecretAccessKey, "")}
	sg, err := eks.New(eks.Options{Endpoint: srv.FaceURL(cloudsim.EKSFaceName), EC2Endpoint: srv.FaceURL(cloudsim.AWSFaceName),
		HTTPClient: &http.Client{Timeout: 30 * time.Second}, Credentials: creds, Region: cloudsim.AWSDefaultRegion})
	if err != nil {
		t.Fatal(err)
	}
	pool := &infrav1.AWSManagedMachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "contract-suite"},
		Spec:       infrav1.AWSManagedMachinePoolSpec{SubnetIDs: []string{cloudsim.AWSDefaultSubnetID}, InstanceType: ptr.To("m5.large")},
	}
	cp := &infrav1.AWSManagedControlPlane{Spec: infrav1.AWSManagedControlPlaneSpec{EKSClusterName: cloudsim.EKSDefaultClusterName, Region: cloudsim.AWSDefaultRegion}}
	contracttest.ScaleGroup(t, contracttest.ScaleGroupCase{
		ScaleGroup: sg,
		Ref: func(name string) scalegroup.Ref {
			p := pool.DeepCopy()
			p.Name = name
			ref, err := eks.Adapter{}.GroupRef(p, cp)
			if err != nil {
				t.Fatal(err)
			}
			return ref
		},
		Spec: func(capacity int32, hash string) scalegroup.GroupSpec {
			mp := &clusterv1.MachinePool{Spec: clusterv1.MachinePoolSpec{ClusterName: "eks", Replicas: ptr.To(capacity)}}
			d, err := eks.Adapter{}.Desired(pool, contract.Owner{MachinePool: mp, Version: "v" + cloudsim.EKSDefaultVersion + ".0", InfraCluster: cp})
			if err != nil {
				t.Fatal(err)
			}
			return scalegroup.GroupSpec{Capacity: capacity, ModelHash: hash, Model: d.Model}
		},
		Advance: func() { clk.Step(time.Second) },
		Throttle: func() func() {
			if err := srv.SetFaceFaults(cloudsim.EKSFaceName, &cloudsim.Faults{ThrottleRate: 1, RetryAfter: time.Second}); err != nil {
				t.Fatal(err)
			}
			return func() { _ = srv.SetFaceFaults(cloudsim.EKSFaceName, nil) }
		},
	})
}
