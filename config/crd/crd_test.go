package crd

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

func TestAdmissionPoliciesDecode(t *testing.T) {
	pols, binds, err := AdmissionPolicies()
	if err != nil {
		t.Fatal(err)
	}
	if len(pols) == 0 || len(binds) != len(pols) {
		t.Fatalf("%d policies, %d bindings: want one binding per policy", len(pols), len(binds))
	}
	names := map[string]bool{}
	for _, p := range pols {
		names[p.Name] = true
		if len(p.Spec.Validations) == 0 {
			t.Errorf("policy %s validates nothing", p.Name)
		}
	}
	for _, b := range binds {
		if !names[b.Spec.PolicyName] {
			t.Errorf("binding %s names policy %q, which is not embedded", b.Name, b.Spec.PolicyName)
		}
	}
}

// TestPoliciesWithParametersJudgeOnlyCreations: a policy whose binding takes
// every object of a kind as a parameter (paramRef.selector) is evaluated once
// per parameter object, its matchConditions too, so on updates, which a pool
// makes all its life, each write would cost O(pools of the namespace) and a
// namespace coming up O(pools²) (BENCHMARKS.md, "Many pools"). Such a policy
// may match creations only.
func TestPoliciesWithParametersJudgeOnlyCreations(t *testing.T) {
	pols, binds, err := AdmissionPolicies()
	if err != nil {
		t.Fatal(err)
	}
	selectors := map[string]bool{}
	for _, b := range binds {
		if b.Spec.ParamRef != nil && b.Spec.ParamRef.Selector != nil {
			selectors[b.Spec.PolicyName] = true
		}
	}
	if len(selectors) == 0 {
		t.Fatal("no binding takes its parameters by selector: the Azure Flexible policies are gone, drop this test with them")
	}
	for _, p := range pols {
		if !selectors[p.Name] {
			continue
		}
		if p.Spec.MatchConstraints == nil || len(p.Spec.MatchConstraints.ResourceRules) == 0 {
			t.Errorf("policy %s takes its parameters by selector and matches every request", p.Name)
			continue
		}
		for _, r := range p.Spec.MatchConstraints.ResourceRules {
			for _, op := range r.Operations {
				if op != admissionregistrationv1.Create {
					t.Errorf("policy %s takes its parameters by selector and matches %s of %v: only CREATE, or every such request costs one evaluation per parameter object", p.Name, op, r.Resources)
				}
			}
		}
	}
}
