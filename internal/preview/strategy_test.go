package preview

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/rollout"
)

func TestStrategy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      infrav1.MachinePoolDeploymentStrategy
		want    rollout.Strategy
		wantErr bool
	}{
		{name: "unset takes the planner's defaults", in: infrav1.MachinePoolDeploymentStrategy{}, want: rollout.Strategy{}},
		{name: "Random", in: infrav1.MachinePoolDeploymentStrategy{RollingUpdate: &infrav1.MachineRollingUpdateDeployment{DeletePolicy: infrav1.RandomDeletePolicyType}},
			want: rollout.Strategy{DeletePolicy: rollout.DeletePolicyRandom}},
		{name: "both budgets zero is invalid", in: infrav1.MachinePoolDeploymentStrategy{RollingUpdate: &infrav1.MachineRollingUpdateDeployment{
			MaxSurge: ptr.To(intstr.FromInt32(0)), MaxUnavailable: ptr.To(intstr.FromString("0%"))}}, wantErr: true},
		{name: "unknown type", in: infrav1.MachinePoolDeploymentStrategy{Type: "Recreate"}, wantErr: true},
		{name: "unknown delete policy", in: infrav1.MachinePoolDeploymentStrategy{RollingUpdate: &infrav1.MachineRollingUpdateDeployment{DeletePolicy: "Largest"}}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Strategy(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err == nil && got.DeletePolicy != tc.want.DeletePolicy && !(got.DeletePolicy == rollout.DeletePolicyOldest && tc.want.DeletePolicy == "") {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
