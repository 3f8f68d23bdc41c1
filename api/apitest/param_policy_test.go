package apitest

import (
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/config/crd"
)

// TestParamPoliciesAdmitWhileUnresolved: the policies of config/crd/policies that read a
// parameter object (paramKind) must not refuse writes while the API server cannot resolve
// their paramKind. It cannot for up to 30 s after it starts (it refreshes the discovery
// RESTMapper its admission plugins use every 30 s), and a policy it cannot configure fails
// as its failurePolicy says: with Fail, a restarted `mpool up` was refused its own sample
// MachinePool ("failed to configure policy: failed to find resource referenced by
// paramKind"). That window cannot be produced on demand, so this test makes the same
// failure lasting: a copy of each such policy, its failurePolicy as shipped, whose paramKind
// names a kind the API server does not know, limited to a fresh namespace. Writes there
// must be admitted. A sentinel policy created after the copies tells when the API server
// has loaded them: it loads policies from its informers in one pass.
func TestParamPoliciesAdmitWhileUnresolved(t *testing.T) {
	ns := env.NewNamespace(t)
	inNS := &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}
	pols, binds, err := crd.AdmissionPolicies()
	if err != nil {
		t.Fatal(err)
	}
	create := func(o client.Object) {
		t.Helper()
		if err := env.Client.Create(ctx(), o); err != nil {
			t.Fatalf("creating %T %s: %v", o, o.GetName(), err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(ctx(), o) })
	}
	copies := 0
	for _, p := range pols {
		if p.Spec.ParamKind == nil {
			continue
		}
		var bind *admissionregistrationv1.ValidatingAdmissionPolicyBinding
		for _, b := range binds {
			if b.Spec.PolicyName == p.Name {
				bind = b.DeepCopy()
			}
		}
		if bind == nil {
			t.Fatalf("policy %s has no binding", p.Name)
		}
		c := p.DeepCopy()
		c.Name = ns + "-" + p.Name
		c.Spec.ParamKind.Kind = "NotDiscoveredYet"
		c.Spec.MatchConstraints.NamespaceSelector = inNS
		bind.Name, bind.Spec.PolicyName = c.Name, c.Name
		create(c)
		create(bind)
		copies++
	}
	if copies != 2 {
		t.Fatalf("%d policies with a paramKind, want 2 (the Flexible version rule, both ways)", copies)
	}

	sentinel := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-sentinel"},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: inNS,
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				}}},
			},
			Validations: []admissionregistrationv1.Validation{{Expression: "object.metadata.name != 'sentinel'", Message: "sentinel loaded"}},
		},
	}
	create(sentinel)
	create(&admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: sentinel.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        sentinel.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	})
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sentinel"}}
	deadline := time.Now().Add(time.Minute)
	for {
		err := env.Client.Create(ctx(), probe.DeepCopy(), client.DryRunAll)
		if err != nil && strings.Contains(err.Error(), "sentinel loaded") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sentinel policy is not enforced after a minute (last: %v)", err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Both kinds the copies match, in a combination the shipped policies admit.
	mp, amp := azurePoolPair(t, ns, "unresolved", "v1.31.2", "Flexible")
	if err := env.Client.Create(ctx(), mp); err != nil {
		t.Errorf("a MachinePool write was refused while a paramKind is unresolved: %v", err)
	}
	if err := env.Client.Create(ctx(), amp); err != nil {
		t.Errorf("an AzureMachinePool write was refused while a paramKind is unresolved: %v", err)
	}
}
