package eks_test

import (
	"net/http"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	awsprovider "github.com/mpool-dev/mpool/internal/provider/aws"
	"github.com/mpool-dev/mpool/internal/provider/aws/eks"
	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/provider/contract/contracttest"
	"github.com/mpool-dev/mpool/internal/scalegroup"
	"github.com/mpool-dev/mpool/internal/testenv/cloudtest"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/sim/face/eksface"
)

// TestScaleGroupKeepsTheContract runs the ScaleGroup contract suite on the
// EKS provider against the simulated EKS (and its EC2), with node groups
// the Adapter maps from an AWSManagedMachinePool.
func TestScaleGroupKeepsTheContract(t *testing.T) {
	e := cloudtest.Start(t, cloudtest.Options{Face: eksface.EKSFaceName, Simulation: core.Simulation{BootDelay: time.Second}}, func(e *cloudtest.Env) (scalegroup.ScaleGroup, error) {
		if err := eksface.EKSCreateCluster(e.Srv.Cloud(), awsface.AWSDefaultAccountID, awsface.AWSDefaultRegion, eksface.EKSDefaultClusterName, eksface.EKSDefaultVersion); err != nil {
			return nil, err
		}
		creds := &awsprovider.IdentityCredentials{Default: awsprovider.NewStaticCredentials(awsface.AWSDefaultAccessKeyID, awsface.AWSDefaultSecretAccessKey, "")}
		return eks.New(eks.Options{Endpoint: e.FaceURL(), EC2Endpoint: e.Srv.FaceURL(awsface.AWSFaceName),
			HTTPClient: &http.Client{Timeout: 30 * time.Second}, Credentials: creds, Region: awsface.AWSDefaultRegion})
	})
	pool := &infrav1.AWSManagedMachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "contract-suite"},
		Spec:       infrav1.AWSManagedMachinePoolSpec{SubnetIDs: []string{awsface.AWSDefaultSubnetID}, InstanceType: ptr.To("m5.large")},
	}
	cp := &infrav1.AWSManagedControlPlane{Spec: infrav1.AWSManagedControlPlaneSpec{EKSClusterName: eksface.EKSDefaultClusterName, Region: awsface.AWSDefaultRegion}}
	contracttest.ScaleGroup(t, e.ContractCase(t,
		func(name string) scalegroup.Ref {
			p := pool.DeepCopy()
			p.Name = name
			ref, err := eks.Adapter{}.GroupRef(p, cp)
			if err != nil {
				t.Fatal(err)
			}
			return ref
		},
		func(capacity int32, hash string) scalegroup.GroupSpec {
			mp := &clusterv1.MachinePool{Spec: clusterv1.MachinePoolSpec{ClusterName: "eks", Replicas: ptr.To(capacity)}}
			d, err := eks.Adapter{}.Desired(pool, contract.Owner{MachinePool: mp, Version: "v" + eksface.EKSDefaultVersion + ".0", InfraCluster: cp})
			if err != nil {
				t.Fatal(err)
			}
			return scalegroup.GroupSpec{Capacity: capacity, ModelHash: hash, Model: d.Model}
		}))
}
