package itest

import (
	"context"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// failureEvents is how many of the namespace's newest events a failed
// test's state dump logs.
const failureEvents = 25

// logStateOnFailure, when the test has failed, logs what a reader of the
// failure needs to tell a slow step from a stuck one: the MachinePool's
// phase, replicas and conditions, the infra pool's conditions and
// annotations, the cloud group's instances and the namespace's newest
// events. It runs first in the fixture's cleanup, before the cloud stops
// and after the test's own cleanups (a Fatal anywhere in a check included).
func (f *Fixture) logStateOnFailure() {
	if !f.T.Failed() {
		return
	}
	ctx := context.Background()
	t := f.T
	t.Logf("state at failure (namespace %s):", f.NS)
	mp := &clusterv1.MachinePool{}
	if err := f.Env.Client.Get(ctx, f.PoolKey(), mp); err != nil {
		t.Logf("  MachinePool: %v", err)
	} else {
		t.Logf("  MachinePool %s: phase %s, replicas %d (ready %d, up to date %d), generation %d observed %d, annotations %v",
			mp.Name, mp.Status.Phase, ptr.Deref(mp.Status.Replicas, 0), ptr.Deref(mp.Status.ReadyReplicas, 0), ptr.Deref(mp.Status.UpToDateReplicas, 0),
			mp.Generation, mp.Status.ObservedGeneration, mp.Annotations)
		for _, c := range mp.Status.Conditions {
			t.Logf("    condition %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	p := f.Provider.NewPool()
	if err := f.Env.Client.Get(ctx, f.PoolKey(), p); err != nil {
		t.Logf("  %s: %v", f.Provider.PoolKind(), err)
	} else {
		t.Logf("  %s %s: generation %d, annotations %v", f.Provider.PoolKind(), p.GetName(), p.GetGeneration(), p.GetAnnotations())
		for _, c := range p.(conditioned).GetConditions() {
			t.Logf("    condition %s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	t.Logf("  instances %v", InstanceStates(f.Group()))
	evs := &corev1.EventList{}
	if err := f.Env.Client.List(ctx, evs, client.InNamespace(f.NS)); err != nil {
		t.Logf("  events: %v", err)
		return
	}
	slices.SortStableFunc(evs.Items, func(a, b corev1.Event) int { return eventTime(a).Compare(eventTime(b)) })
	items := evs.Items[max(0, len(evs.Items)-failureEvents):]
	for _, e := range items {
		t.Logf("  event %s %s %s/%s %s: %s", eventTime(e).UTC().Format("15:04:05.000"), e.Type,
			e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, strings.TrimSpace(e.Message))
	}
}

// eventTime is when e last happened, as far as its fields say.
func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time
	}
	return e.CreationTimestamp.Time
}
