package preview

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

func TestRemediate(t *testing.T) {
	hc := func(s metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: clusterv1.MachineHealthCheckSucceededCondition, Status: s, Reason: "r",
			Message: "Health check failed:\n  * Node failed to report startup in 30s"}
	}
	owner := func(reason string) metav1.Condition {
		return metav1.Condition{Type: clusterv1.MachineOwnerRemediatedCondition, Status: metav1.ConditionFalse, Reason: reason}
	}
	tests := []struct {
		name     string // and why the case exists
		conds    []metav1.Condition
		deleting bool
		want     bool
		wantWhy  string
	}{
		{name: "no check: nothing to remediate"},
		{name: "healthy", conds: []metav1.Condition{hc(metav1.ConditionTrue)}},
		{name: "unhealthy but short-circuited: no OwnerRemediated, nothing to do", conds: []metav1.Condition{hc(metav1.ConditionFalse)}, wantWhy: "Node failed to report startup in 30s"},
		{name: "unhealthy and left to the owner", conds: []metav1.Condition{hc(metav1.ConditionFalse), owner(clusterv1.MachineOwnerRemediatedWaitingForRemediationReason)},
			want: true, wantWhy: "Node failed to report startup in 30s"},
		{name: "a removal the engine started as a remediation is in flight", deleting: true, want: true,
			conds: []metav1.Condition{hc(metav1.ConditionFalse), owner(clusterv1.MachineSetMachineRemediationMachineDeletingReason)}, wantWhy: "Node failed to report startup in 30s"},
		{name: "a removal of an unhealthy instance for another reason is not a remediation in flight", deleting: true,
			conds: []metav1.Condition{hc(metav1.ConditionFalse), owner(clusterv1.MachineOwnerRemediatedWaitingForRemediationReason)}, wantWhy: "Node failed to report startup in 30s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &clusterv1.Machine{Status: clusterv1.MachineStatus{Conditions: tt.conds}}
			if got := Remediate(m, tt.deleting); got != tt.want {
				t.Errorf("Remediate = %v, want %v", got, tt.want)
			}
			if got := Unhealthy(m); got != tt.wantWhy {
				t.Errorf("Unhealthy = %q, want %q", got, tt.wantWhy)
			}
		})
	}
}

func TestMaxRemediationsInFlight(t *testing.T) {
	mp := func(v string) metav1.Object {
		return &clusterv1.MachinePool{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{RemediationMaxInFlightAnnotation: v}}}
	}
	tests := []struct {
		name    string // and why the case exists
		objs    []metav1.Object
		want    int32 // -1: nil
		wantErr bool
	}{
		{name: "unset: no cap", objs: []metav1.Object{&clusterv1.MachinePool{}}, want: -1},
		{name: "an integer", objs: []metav1.Object{mp("2")}, want: 2},
		{name: "a percentage of the desired replicas rounds up", objs: []metav1.Object{mp("10%")}, want: 1},
		{name: "the infra pool's (later) wins", objs: []metav1.Object{mp("1"), mp("3")}, want: 3},
		{name: "not a number", objs: []metav1.Object{mp("many")}, wantErr: true},
		{name: "negative", objs: []metav1.Object{mp("-1")}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MaxRemediationsInFlight(5, tt.objs...)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if (got == nil) != (tt.want == -1) || got != nil && *got != tt.want {
				t.Errorf("got %v, want %d", got, tt.want)
			}
		})
	}
}
