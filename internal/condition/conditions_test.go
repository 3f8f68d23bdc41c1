package condition

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type obj struct{ c []metav1.Condition }

func (o *obj) GetConditions() []metav1.Condition  { return o.c }
func (o *obj) SetConditions(c []metav1.Condition) { o.c = c }

func TestSet(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Minute)
	tests := []struct {
		name        string
		existing    []metav1.Condition
		set         metav1.Condition
		wantChanged bool
		wantLTT     time.Time
	}{
		{
			name:        "a new condition gets now as its transition time",
			set:         New("Ready", metav1.ConditionFalse, "Waiting", "", 1),
			wantChanged: true, wantLTT: t1,
		},
		{
			name:        "same status and fields: no change, so no patch",
			existing:    []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Waiting", ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(t0)}},
			set:         New("Ready", metav1.ConditionFalse, "Waiting", "", 1),
			wantChanged: false, wantLTT: t0,
		},
		{
			name:        "same status, new message: changed, transition time kept",
			existing:    []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Waiting", LastTransitionTime: metav1.NewTime(t0)}},
			set:         New("Ready", metav1.ConditionFalse, "Waiting", "1 of 3", 0),
			wantChanged: true, wantLTT: t0,
		},
		{
			name:        "status flips: transition time moves",
			existing:    []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Waiting", LastTransitionTime: metav1.NewTime(t0)}},
			set:         New("Ready", metav1.ConditionTrue, "Ready", "", 0),
			wantChanged: true, wantLTT: t1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := &obj{c: tc.existing}
			before := append([]metav1.Condition(nil), o.c...)
			if got := Set(o, tc.set, t1); got != tc.wantChanged {
				t.Fatalf("changed = %v, want %v", got, tc.wantChanged)
			}
			c := Get(o, "Ready")
			if c == nil || !c.LastTransitionTime.Time.Equal(tc.wantLTT) {
				t.Fatalf("condition = %+v, want transition time %s", c, tc.wantLTT)
			}
			if len(before) > 0 && tc.wantChanged && before[0] == *c {
				t.Fatal("Set must not modify the slice it was given (it may be shared with a patch base)")
			}
		})
	}
}

func TestIsTrueAndDelete(t *testing.T) {
	o := &obj{}
	Set(o, New("A", metav1.ConditionTrue, "R", "", 0), time.Now())
	Set(o, New("B", metav1.ConditionFalse, "R", "", 0), time.Now())
	if !IsTrue(o, "A") || IsTrue(o, "B") || IsTrue(o, "C") {
		t.Fatal("IsTrue")
	}
	Delete(o, "A")
	if Get(o, "A") != nil || Get(o, "B") == nil {
		t.Fatal("Delete")
	}
}

func TestMoveGeneration(t *testing.T) {
	shared := []metav1.Condition{
		{Type: "A", ObservedGeneration: 1},
		{Type: "B", ObservedGeneration: 2},
	}
	o := &obj{c: shared}
	MoveGeneration(o, 1, 3)
	if got := []int64{o.c[0].ObservedGeneration, o.c[1].ObservedGeneration}; got[0] != 3 || got[1] != 2 {
		t.Errorf("after moving 1 to 3: observed generations %v, want [3 2]", got)
	}
	if shared[0].ObservedGeneration != 1 {
		t.Error("the list the object had was changed in place: it may be a cache's")
	}
	before := o.c
	MoveGeneration(o, 7, 8)
	if &before[0] != &o.c[0] {
		t.Error("nothing observed generation 7, and the list was replaced")
	}
}
