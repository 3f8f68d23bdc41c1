package aws

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/provider/contract"
)

// TestDesiredSkipModelReconciliation: refreshPreferences.disable, and a
// suspended Launch process, keep the pool's out-of-date instances (the
// engine's per-pool switch, with the reason); nothing else does.
func TestDesiredSkipModelReconciliation(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*infrav1.AWSMachinePool)
		want string
	}{
		{name: "default", edit: func(*infrav1.AWSMachinePool) {}},
		{name: "refresh preferences without disable", edit: func(p *infrav1.AWSMachinePool) {
			p.Spec.RefreshPreferences = &infrav1.RefreshPreferences{MinHealthyPercentage: ptr.To[int64](50)}
		}},
		{name: "disable", want: "spec.refreshPreferences.disable is true", edit: func(p *infrav1.AWSMachinePool) {
			p.Spec.RefreshPreferences = &infrav1.RefreshPreferences{Disable: true}
		}},
		{name: "Launch suspended", want: "Launch process is suspended", edit: func(p *infrav1.AWSMachinePool) {
			p.Spec.SuspendProcesses = &infrav1.SuspendProcessesTypes{Processes: &infrav1.Processes{Launch: ptr.To(true)}}
		}},
		{name: "all suspended", want: "Launch process is suspended", edit: func(p *infrav1.AWSMachinePool) {
			p.Spec.SuspendProcesses = &infrav1.SuspendProcessesTypes{All: true}
		}},
		{name: "AZRebalance suspended", edit: func(p *infrav1.AWSMachinePool) {
			p.Spec.SuspendProcesses = &infrav1.SuspendProcessesTypes{Processes: &infrav1.Processes{AZRebalance: ptr.To(true)}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testPool()
			tc.edit(p)
			d, err := Adapter{}.Desired(p, testOwner("v1.31.2", 2))
			if err != nil {
				t.Fatal(err)
			}
			if got := d.SkipModelReconciliation; tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Fatalf("SkipModelReconciliation %q, want %q", got, tc.want)
			}
		})
	}
}

// TestWritePoolSuspendedProcesses: a suspended Launch or Terminate process
// is said in ASGReady (and, Launch, in a missing-replicas
// ScaleGroupDesiredReplicas), once however often the pool is written.
func TestWritePoolSuspendedProcesses(t *testing.T) {
	p := testPool()
	p.Spec.SuspendProcesses = &infrav1.SuspendProcessesTypes{Processes: &infrav1.Processes{Launch: ptr.To(true), Terminate: ptr.To(true)}}
	p.Status.Conditions = []metav1.Condition{
		{Type: infrav1.ScaleGroupReadyCondition, Status: metav1.ConditionTrue, Reason: "Ready", Message: "ok"},
		{Type: infrav1.ScaleGroupDesiredReplicasCondition, Status: metav1.ConditionFalse, Reason: infrav1.ScaleGroupScaleUpReason, Message: "2 of 4 replicas"},
	}
	for range 2 {
		Adapter{}.WritePool(p, contract.PoolReport{Observed: true})
	}
	asg := meta.FindStatusCondition(p.Status.Conditions, infrav1.ASGReadyCondition)
	dr := meta.FindStatusCondition(p.Status.Conditions, infrav1.ScaleGroupDesiredReplicasCondition)
	if asg == nil || strings.Count(asg.Message, "suspends Launch") != 1 || strings.Count(asg.Message, "suspends Terminate") != 1 {
		t.Fatalf("ASGReady %+v", asg)
	}
	if dr == nil || strings.Count(dr.Message, "suspends Launch") != 1 {
		t.Fatalf("ScaleGroupDesiredReplicas %+v", dr)
	}
}
