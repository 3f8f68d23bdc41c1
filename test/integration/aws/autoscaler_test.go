package aws

import (
	"fmt"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/face/awsface"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// TestReplicasManagedByAutoscaler: a MachinePool whose replicas an
// external autoscaler manages (cluster.x-k8s.io/replicas-managed-by, as the
// cluster autoscaler's Cluster API provider sets it): the autoscaler sets
// the ASG's desired capacity through the Auto Scaling API; mpool never sets
// it back from spec.replicas, and the MachinePool's spec.replicas follows
// the group (CAPA PR #4654).
func TestReplicasManagedByAutoscaler(t *testing.T) {
	f, _ := start(t, 0, func(o *manager.Options) { o.EngineTiming.ExternalReplicas = 500 * time.Millisecond })
	f.ApplySeed(itest.OnKind("MachinePool", func(obj *unstructured.Unstructured) {
		obj.SetAnnotations(map[string]string{clusterv1.ReplicasManagedByAnnotation: "cluster-autoscaler"})
	}))
	f.waitConverged(2, seedVersion)

	if _, err := f.asgClient().SetDesiredCapacity(f.Ctx, &autoscaling.SetDesiredCapacityInput{
		AutoScalingGroupName: awssdk.String(f.asg()), DesiredCapacity: awssdk.Int32(3), HonorCooldown: awssdk.Bool(false),
	}); err != nil {
		t.Fatalf("the autoscaler's SetDesiredCapacity: %v", err)
	}
	testenv.Eventually(t, converge, func() error {
		mp := &clusterv1.MachinePool{}
		if err := env.Client.Get(f.Ctx, f.Key(poolName), mp); err != nil {
			return err
		}
		if r := ptr.Deref(mp.Spec.Replicas, 0); r != 3 {
			return fmt.Errorf("the MachinePool's spec.replicas is %d, want the autoscaler's 3", r)
		}
		return f.Converged(3, seedVersion)
	})
	// Several reconciles later the group still has the autoscaler's size.
	env.PokeUntilReconciled(t, &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: poolName}}, "awsmachinepool", 3)
	if g := f.Group(); g == nil || g.Capacity != 3 {
		t.Fatalf("the ASG's desired capacity is %+v, want the autoscaler's 3", g)
	}
	if n := f.ops(awsface.OpAWSSetDesiredCapacity); n != 1 {
		t.Errorf("the simulated AWS answered %d SetDesiredCapacity, want the autoscaler's one only", n)
	}
	f.deletePoolAndWaitGone()
}
