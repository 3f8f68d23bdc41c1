package crd

import "testing"

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
