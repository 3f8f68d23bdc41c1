package crd

import (
	"slices"
	"testing"
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

// TestPoliciesTakeNoParameters: the API server evaluates a policy that takes
// parameters once per parameter object, its matchConditions included, so a
// binding that takes every object of a kind (paramRef.selector) makes each
// matched write O(objects of that kind in the namespace): two such policies,
// on creations only, took a third of the API server's CPU with 1,000 pools in
// one namespace (BENCHMARKS.md, "Many pools"). A rule that needs a second
// object is a webhook's (internal/admission/flexibleversion), and a retired
// policy is not embedded again.
func TestPoliciesTakeNoParameters(t *testing.T) {
	pols, binds, err := AdmissionPolicies()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pols {
		if p.Spec.ParamKind != nil {
			t.Errorf("policy %s takes %s parameters", p.Name, p.Spec.ParamKind.Kind)
		}
		if slices.Contains(RetiredPolicies, p.Name) {
			t.Errorf("policy %s is embedded and retired", p.Name)
		}
	}
	for _, b := range binds {
		if b.Spec.ParamRef != nil {
			t.Errorf("binding %s takes parameters: %+v", b.Name, b.Spec.ParamRef)
		}
	}
}
