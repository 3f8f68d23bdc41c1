package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/capi"
	"github.com/mpool-dev/mpool/internal/provider/contract"
)

// TestRolloutPlanEveryKind plans a rollout of an AWSMachinePool and of an
// AWSManagedMachinePool, which have no spec.strategy: the plan reads each
// pool's budget through its provider (the instance refresh preferences
// mpool maps; the node group's update config, which EKS applies itself).
// It once failed with "AWSMachinePool ... has no rolling update strategy
// (spec.strategy)".
func TestRolloutPlanEveryKind(t *testing.T) {
	tests := []struct {
		kind   string
		pool   contract.Pool
		status func(contract.InstanceObject, bool)
		want   []string
	}{
		{
			kind: "AWSMachinePool",
			pool: &infrav1.AWSMachinePool{Spec: infrav1.AWSMachinePoolSpec{
				MinSize: 0, MaxSize: 10,
				AWSLaunchTemplate:  infrav1.AWSLaunchTemplate{InstanceType: "m5.large"},
				RefreshPreferences: &infrav1.RefreshPreferences{MinHealthyPercentage: ptr.To[int64](50)},
			}},
			status: func(o contract.InstanceObject, stale bool) {
				st := &o.(*infrav1.AWSMachinePoolMachine).Status
				st.LifecycleState, st.Ready, st.LatestModelApplied = "InService", true, !stale
			},
			want: []string{
				"budget from  spec.refreshPreferences: minHealthyPercentage 50, maxHealthyPercentage 100 (maxHealthyPercentage is instance refresh's default)",
				"delete workers-1", "delete workers-2",
			},
		},
		{
			kind: "AWSManagedMachinePool",
			pool: &infrav1.AWSManagedMachinePool{Spec: infrav1.AWSManagedMachinePoolSpec{
				SubnetIDs: []string{"subnet-1"}, InstanceType: ptr.To("m5.large"),
				UpdateConfig: &infrav1.UpdateConfig{MaxUnavailable: ptr.To[int32](2)},
			}},
			status: func(o contract.InstanceObject, stale bool) {
				st := &o.(*infrav1.AWSManagedMachinePoolMachine).Status
				st.State, st.Ready, st.LatestModelApplied = "running", true, !stale
			},
			want: []string{
				"budget from  spec.updateConfig: maxUnavailable 2: EKS replaces the nodes itself",
				"The cloud replaces out-of-date instances",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			ns := "plan-" + strings.ToLower(tt.kind)
			now := planPoolOf(t, ns, tt.kind, tt.pool, tt.status)
			r := runPlan(t, clocktesting.NewFakePassiveClock(now), "rollout", "plan", "workers", "-n", ns)
			if r.err != nil {
				t.Fatalf("rollout plan of an %s: %v\n%s", tt.kind, r.err, r.stderr.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stdout.String(), w) {
					t.Errorf("the plan does not say %q:\n%s", w, r.stdout.String())
				}
			}
		})
	}
}

// planPoolOf creates in namespace ns a MachinePool "workers" of 4 replicas
// whose infrastructure is pool (of kind), with four per-instance objects the
// pool controls, Ready for an hour, the last two stale (status writes
// them). It returns a time after their readiness.
func planPoolOf(t *testing.T, ns, kind string, pool contract.Pool, status func(contract.InstanceObject, bool)) time.Time {
	t.Helper()
	ctx := context.Background()
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	create(t, &clusterv1.MachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "workers"},
		Spec: clusterv1.MachinePoolSpec{ClusterName: "demo", Replicas: ptr.To[int32](4), Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
			ClusterName:       "demo",
			Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To("")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: kind, Name: "workers"},
			Version:           "v1.31.0",
		}}},
	})
	pool.SetNamespace(ns)
	pool.SetName("workers")
	create(t, pool)
	a := adapterOf(clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: kind})
	var latest time.Time
	for i := range 4 {
		obj := a.NewInstance()
		obj.SetNamespace(ns)
		obj.SetName(fmt.Sprintf("workers-%d", 3-i))
		obj.SetLabels(map[string]string{clusterv1.MachinePoolNameLabel: capi.LabelValue("workers")})
		obj.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(pool, infrav1.GroupVersion.WithKind(kind))})
		a.WriteInstanceSpec(obj, fmt.Sprint(3-i), fmt.Sprintf("aws:///us-east-1a/i-%d", 3-i))
		create(t, obj)
		status(obj, 3-i >= 1 && 3-i <= 2)
		obj.SetConditions([]metav1.Condition{{Type: infrav1.InstanceReadyCondition, Status: metav1.ConditionTrue, Reason: "Ready",
			LastTransitionTime: metav1.NewTime(obj.GetCreationTimestamp().Add(time.Second))}})
		if err := env.Client.Status().Update(ctx, obj); err != nil {
			t.Fatalf("writing the status of %s: %v", obj.GetName(), err)
		}
		latest = obj.GetCreationTimestamp().Time
	}
	return latest.Add(time.Hour)
}
