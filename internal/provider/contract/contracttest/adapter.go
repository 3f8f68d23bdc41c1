// Package contracttest holds the suites every provider passes: an Adapter
// reads back what it writes, in the contract's one vocabulary. A provider
// is not done until its registry entry passes them (internal/provider's
// tests run them for every entry). ModelHash and RecordsOperation serve
// the providers' own tests.
package contracttest

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/mpool-dev/mpool/internal/provider/contract"
	"github.com/mpool-dev/mpool/internal/rollout"
)

// Adapter checks that a keeps the Adapter contract's promises that need no
// cloud: its kinds are named, its objects are of them, and what
// WriteInstanceSpec, WriteInstanceStatus and WritePool write, ReadInstance
// and ReadPool read back — every state, readiness, model, Node, version,
// zone and failure. The only loss allowed is the one the contract
// documents: a provider whose kind cannot tell a booting instance from a
// pending one reads Booting back as Pending.
func Adapter(t *testing.T, a contract.Adapter) {
	t.Helper()
	k := a.Kinds()
	if k.Provider == "" || k.Pool == "" || k.Instance == "" || k.PoolFinalizer == "" || k.InstanceFinalizer == "" {
		t.Errorf("Kinds() leaves a name empty: %+v", k)
	}
	if (k.InfraCluster == "") != (a.NewInfraCluster() == nil) {
		t.Errorf("Kinds().InfraCluster is %q but NewInfraCluster() returns %T", k.InfraCluster, a.NewInfraCluster())
	}
	for name, typ := range map[string]string{k.Pool: fmt.Sprintf("%T", a.NewPool()), k.Instance: fmt.Sprintf("%T", a.NewInstance()), k.Instance + "List": fmt.Sprintf("%T", a.NewInstanceList())} {
		if want := "." + name; len(typ) < len(want) || typ[len(typ)-len(want):] != want {
			t.Errorf("the object for kind %s is a %s", name, typ)
		}
	}

	fresh := a.NewInstance()
	a.WriteInstanceSpec(fresh, "id-7", "cloud:///group/id-7")
	v := a.ReadInstance(fresh)
	if v.InstanceID != "id-7" || v.ProviderID != "cloud:///group/id-7" {
		t.Errorf("WriteInstanceSpec(id-7) reads back as ID %q, providerID %q", v.InstanceID, v.ProviderID)
	}
	if v.Reported || v.State != contract.InstanceUnknown {
		t.Errorf("an instance the engine has not reported reads as reported %v, state %s; want Unknown", v.Reported, v.State)
	}

	for _, r := range reports() {
		t.Run(fmt.Sprintf("%s ready=%v upToDate=%v", r.State, r.Ready, r.LatestModelApplied), func(t *testing.T) {
			obj := a.NewInstance()
			a.WriteInstanceSpec(obj, r.InstanceID, r.ProviderID)
			// The engine labels every per-instance object with its zone
			// when it creates it.
			obj.SetLabels(map[string]string{contract.ZoneLabel: r.Zone})
			a.WriteInstanceStatus(obj, r)
			got := a.ReadInstance(obj)
			state := got.State
			if r.State == contract.InstanceBooting && state == contract.InstancePending {
				state = contract.InstanceBooting
			}
			if state != r.State || !got.Reported || got.Ready != r.Ready || got.UpToDate != r.LatestModelApplied ||
				got.Zone != r.Zone || got.Version != r.Version || got.InstanceID != r.InstanceID || got.ProviderID != r.ProviderID ||
				(got.NodeRef == nil) != (r.NodeRef == nil) || got.FailureReason != ptr.Deref(r.FailureReason, "") || got.FailureMessage != ptr.Deref(r.FailureMessage, "") {
				t.Errorf("wrote %+v\nread  %+v", r, got)
			}
			if !got.Live() && (r.State == contract.InstanceRunning || r.State == contract.InstancePending) {
				t.Errorf("a %s instance reads as not live", r.State)
			}
		})
	}

	pool := a.NewPool()
	a.WritePool(pool, contract.PoolReport{Observed: true, ObservedGeneration: 3, InfrastructureMachineKind: k.Instance, ModelHash: "h"})
	pv, err := a.ReadPool(pool)
	if err != nil {
		t.Fatalf("ReadPool of a pool with every default: %v", err)
	}
	if pv.ObservedGeneration != 3 {
		t.Errorf("WritePool(observedGeneration 3) reads back as %d", pv.ObservedGeneration)
	}
	if pv.Rollout.Source == "" {
		t.Error("ReadPool says nothing of where the rollout budget comes from (Rollout.Source)")
	}
	for _, desired := range []int32{1, 3, 10, 100} {
		if _, _, err := rollout.ResolveBudgets(desired, pv.Rollout.Strategy); err != nil {
			t.Errorf("the default rollout budget does not resolve for %d replicas: %v", desired, err)
		}
	}
}

// reports are the instance reports the suite writes: every state, ready or
// not, up to date or not, failed with a reason.
func reports() []contract.InstanceReport {
	var out []contract.InstanceReport
	for i, st := range []contract.InstanceState{contract.InstancePending, contract.InstanceBooting, contract.InstanceRunning, contract.InstanceFailed, contract.InstanceDeleting} {
		r := contract.InstanceReport{
			InstanceID:         fmt.Sprint(i),
			ProviderID:         fmt.Sprintf("cloud:///group/%d", i),
			Zone:               fmt.Sprintf("zone-%d", i%3+1),
			State:              st,
			LatestModelApplied: i%2 == 0,
		}
		switch st {
		case contract.InstanceRunning:
			ready := r
			ready.Ready, ready.Version = true, "v1.31.2"
			ready.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: "node-" + r.InstanceID}
			out = append(out, ready)
		case contract.InstanceFailed:
			r.FailureReason, r.FailureMessage = ptr.To("InstanceFailed"), ptr.To("the cloud gave up on it")
		}
		out = append(out, r)
	}
	return out
}
