package core

import (
	"slices"
	"testing"
)

func TestGroupLive(t *testing.T) {
	var none *Group
	if got := none.Live(); got != nil {
		t.Fatalf("nil group's Live() = %v, want nil", got)
	}
	g := &Group{Instances: []Instance{
		{ID: "a", State: StateRunning}, {ID: "b", State: StateDeleting}, {ID: "c", State: StateFailed}, {ID: "d", State: StateCreating},
	}}
	var ids []string
	for _, in := range g.Live() {
		ids = append(ids, in.ID)
	}
	if !slices.Equal(ids, []string{"a", "c", "d"}) {
		t.Fatalf("Live() = %v, want [a c d] (all but the one being deleted, in order)", ids)
	}
}
