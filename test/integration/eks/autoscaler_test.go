package eks

import (
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/face/eksface"
)

// TestEKSReplicasManagedByAnAutoscaler: with
// cluster.x-k8s.io/replicas-managed-by on the MachinePool, the node
// group's desired size is the autoscaler's (here set through EKS, as EKS
// does when the autoscaler scales its ASG): the pool follows it, the
// MachinePool's replicas are copied back, and mpool writes nothing to EKS.
func TestEKSReplicasManagedByAnAutoscaler(t *testing.T) {
	f, _ := start(t, "1.31", func(o *manager.Options) { o.EngineTiming.ExternalReplicas = 500 * time.Millisecond })
	f.ApplySeed()
	f.WaitConverged(2, "v1.31.0", converge)
	f.UpdateMachinePool(func(mp *clusterv1.MachinePool) {
		if mp.Annotations == nil {
			mp.Annotations = map[string]string{}
		}
		mp.Annotations[clusterv1.ReplicasManagedByAnnotation] = "cluster-autoscaler"
	})
	f.WaitPoolCondition(converge, infrav1.ScaleGroupDesiredReplicasCondition, metav1.ConditionTrue, "managed by cluster-autoscaler")

	writes := func() int64 {
		return f.Ops(eksface.EKSFaceName, eksface.OpEKSUpdateNodegroupConfig) + f.Ops(eksface.EKSFaceName, eksface.OpEKSUpdateNodegroupVersion) +
			f.Ops(eksface.EKSFaceName, eksface.OpEKSTagResource) + f.Ops(eksface.EKSFaceName, eksface.OpEKSCreateNodegroup)
	}
	// The autoscaler acts on a node group EKS has finished creating: the
	// pool converges once its nodes are Ready, which can be before EKS
	// says ACTIVE, and EKS refuses an update until then
	// (ResourceInUseException).
	testenv.Eventually(t, converge, func() error {
		out, err := f.describe()
		if err != nil {
			return err
		}
		if out.Nodegroup.Status != ekstypes.NodegroupStatusActive {
			return fmt.Errorf("node group %s, want %s", out.Nodegroup.Status, ekstypes.NodegroupStatusActive)
		}
		return nil
	})
	if _, err := f.eks.UpdateNodegroupConfig(f.Ctx, &awseks.UpdateNodegroupConfigInput{ClusterName: aws.String(eksface.EKSDefaultClusterName),
		NodegroupName: aws.String(f.nodegroup()), ScalingConfig: &ekstypes.NodegroupScalingConfig{DesiredSize: aws.Int32(4)}}); err != nil {
		t.Fatal(err)
	}
	w0 := writes() // the autoscaler's
	testenv.Eventually(t, converge, func() error { return f.convergedAt(4) })
	if w := writes() - w0; w != 0 {
		t.Fatalf("mpool wrote %d times to EKS although the autoscaler manages the replicas", w)
	}

	// CAPA #5746: lowering scaling.maxSize below the autoscaler's 4 is
	// applied as written, the desired size clamped into the new range (EKS
	// refuses a desired size outside it), and the MachinePool follows.
	p := &infrav1.AWSManagedMachinePool{}
	if err := env.Client.Get(f.Ctx, f.Key(poolName), p); err != nil {
		t.Fatal(err)
	}
	before := p.DeepCopy()
	p.Spec.Scaling.MaxSize = ptr.To[int32](3)
	if err := env.Client.Patch(f.Ctx, p, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, converge, func() error {
		out, err := f.describe()
		if err != nil {
			return err
		}
		sc := out.Nodegroup.ScalingConfig
		if got := [3]int32{aws.ToInt32(sc.MinSize), aws.ToInt32(sc.MaxSize), aws.ToInt32(sc.DesiredSize)}; got != [3]int32{1, 3, 3} {
			return fmt.Errorf("node group min, max, desired %v, want [1 3 3]", got)
		}
		return f.convergedAt(3)
	})
}

// convergedAt says whether the pool has converged at n nodes of v1.31.0
// with its MachinePool's spec.replicas following the node group's n.
func (f *fixture) convergedAt(n int32) error {
	if err := f.Converged(int(n), "v1.31.0"); err != nil {
		return err
	}
	mp := &clusterv1.MachinePool{}
	if err := env.Client.Get(f.Ctx, f.Key(poolName), mp); err != nil {
		return err
	}
	if mp.Spec.Replicas == nil || *mp.Spec.Replicas != n {
		return fmt.Errorf("MachinePool spec.replicas %v, want the node group's %d", mp.Spec.Replicas, n)
	}
	return nil
}
