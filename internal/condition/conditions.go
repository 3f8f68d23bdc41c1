// Package condition holds small helpers for metav1.Condition lists that take
// the time from the caller's injected clock instead of time.Now.
package condition

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Object is an object with a list of conditions.
type Object interface {
	GetConditions() []metav1.Condition
	SetConditions([]metav1.Condition)
}

// Set puts c on obj, replacing a condition of the same type. The
// LastTransitionTime is kept when the status does not change and set to now
// when it does (or when c is new). It reports whether anything changed.
func Set(obj Object, c metav1.Condition, now time.Time) bool {
	conds := obj.GetConditions()
	for i := range conds {
		if conds[i].Type != c.Type {
			continue
		}
		if conds[i].Status == c.Status {
			c.LastTransitionTime = conds[i].LastTransitionTime
		} else {
			c.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
		}
		if conds[i] == c {
			return false
		}
		out := append([]metav1.Condition(nil), conds...)
		out[i] = c
		obj.SetConditions(out)
		return true
	}
	c.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
	obj.SetConditions(append(append([]metav1.Condition(nil), conds...), c))
	return true
}

// Get returns the condition of type t, or nil.
func Get(obj Object, t string) *metav1.Condition {
	conds := obj.GetConditions()
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// IsTrue reports whether the condition of type t is True.
func IsTrue(obj Object, t string) bool {
	c := Get(obj, t)
	return c != nil && c.Status == metav1.ConditionTrue
}

// Delete removes the condition of type t.
func Delete(obj Object, t string) {
	conds := obj.GetConditions()
	out := make([]metav1.Condition, 0, len(conds))
	for _, c := range conds {
		if c.Type != t {
			out = append(out, c)
		}
	}
	if len(out) != len(conds) {
		obj.SetConditions(out)
	}
}

// MoveGeneration moves every condition of obj that observed generation
// from to generation to: a status computed before the controller's own spec
// write moved the object's generation observed the spec of the new one.
func MoveGeneration(obj Object, from, to int64) {
	conds := obj.GetConditions()
	var out []metav1.Condition
	for i := range conds {
		if conds[i].ObservedGeneration == from {
			if out == nil {
				out = slices.Clone(conds)
			}
			out[i].ObservedGeneration = to
		}
	}
	if out != nil {
		obj.SetConditions(out)
	}
}

// New returns a condition of type t with the given status, reason and
// message, for an object at generation gen.
func New(t string, status metav1.ConditionStatus, reason, message string, gen int64) metav1.Condition {
	return metav1.Condition{Type: t, Status: status, Reason: reason, Message: message, ObservedGeneration: gen}
}
