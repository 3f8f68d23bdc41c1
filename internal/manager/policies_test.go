package manager_test

import (
	"context"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/config/crd"
	"github.com/mpool-dev/mpool/internal/manager"
)

// TestStandaloneOnlyPoliciesLeaveBesideUpstream: a management cluster whose
// manager ran standalone, then beside upstream Cluster API (mode pools or
// providers), keeps no policy that refuses what upstream serves (external
// remediation of a MachineHealthCheck); the other policies stay, and a
// standalone manager installs it again.
func TestStandaloneOnlyPoliciesLeaveBesideUpstream(t *testing.T) {
	ctx := context.Background()
	s := runtime.NewScheme()
	if err := admissionregistrationv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	pols, binds, err := crd.AdmissionPolicies()
	if err != nil {
		t.Fatal(err)
	}
	present := func(name string) bool {
		t.Helper()
		err := c.Get(ctx, client.ObjectKey{Name: name}, &admissionregistrationv1.ValidatingAdmissionPolicy{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}
	bound := func(policy string) bool {
		t.Helper()
		list := &admissionregistrationv1.ValidatingAdmissionPolicyBindingList{}
		if err := c.List(ctx, list); err != nil {
			t.Fatal(err)
		}
		for _, b := range list.Items {
			if b.Spec.PolicyName == policy {
				return true
			}
		}
		return false
	}
	check := func(mode manager.Mode) {
		t.Helper()
		if err := manager.ApplyPolicies(ctx, c, mode); err != nil {
			t.Fatalf("mode %s: %v", mode, err)
		}
		for _, p := range pols {
			standaloneOnly := false
			for _, n := range crd.StandaloneOnlyPolicies {
				standaloneOnly = standaloneOnly || n == p.Name
			}
			want := mode.RunsClusters() || !standaloneOnly
			if got := present(p.Name); got != want {
				t.Errorf("mode %s: policy %s present %v, want %v", mode, p.Name, got, want)
			}
		}
		for _, b := range binds {
			standaloneOnly := false
			for _, n := range crd.StandaloneOnlyPolicies {
				standaloneOnly = standaloneOnly || n == b.Spec.PolicyName
			}
			if want := mode.RunsClusters() || !standaloneOnly; bound(b.Spec.PolicyName) != want {
				t.Errorf("mode %s: binding of %s present %v, want %v", mode, b.Spec.PolicyName, !want, want)
			}
		}
	}
	for _, m := range []manager.Mode{manager.ModeStandalone, manager.ModePools, manager.ModeStandalone, manager.ModeProviders, manager.ModeProviders} {
		check(m)
	}
}
