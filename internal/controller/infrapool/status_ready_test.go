package infrapool

import (
	"testing"

	"github.com/mpool-dev/mpool/internal/scalegroup"
)

func TestGroupReady(t *testing.T) {
	running := scalegroup.Instance{ID: "a", State: scalegroup.StateRunning}
	booting := scalegroup.Instance{ID: "b", State: scalegroup.StateBooting}
	op := func(typ string) *scalegroup.Operation { return &scalegroup.Operation{ID: "op", Type: typ} }
	tests := []struct {
		name string
		g    scalegroup.Group
		want bool
	}{
		{name: "at rest, empty", g: scalegroup.Group{}, want: true},
		{name: "at rest with instances", g: scalegroup.Group{Instances: []scalegroup.Instance{running}}, want: true},
		{name: "first scale-up, nothing runs yet", g: scalegroup.Group{Operation: op(scalegroup.OperationScale), Instances: []scalegroup.Instance{booting}}, want: false},
		{name: "scaling while instances run", g: scalegroup.Group{Operation: op(scalegroup.OperationScale), Instances: []scalegroup.Instance{running, booting}}, want: true},
		{name: "rolling while instances run", g: scalegroup.Group{Operation: op(scalegroup.OperationUpdate), Instances: []scalegroup.Instance{running}}, want: true},
		{name: "being deleted", g: scalegroup.Group{Operation: op(scalegroup.OperationDelete), Instances: []scalegroup.Instance{running}}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := groupReady(&tt.g); got != tt.want {
				t.Errorf("groupReady = %v, want %v", got, tt.want)
			}
		})
	}
}
