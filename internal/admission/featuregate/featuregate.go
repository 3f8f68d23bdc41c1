// Package featuregate enforces the MachinePool feature gate at admission:
// with MachinePool=false the pool controllers are not started (the manager's
// business) and creating a MachinePool is refused by a
// ValidatingAdmissionPolicy that Ensure installs, so that users learn the
// gate is off instead of watching a pool that never moves.
package featuregate

import (
	"context"
	"errors"
	"fmt"

	"github.com/mpool-dev/mpool/internal/admission"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingadmissionpolicies;validatingadmissionpolicybindings,verbs=get;list;watch;create;update;delete

const (
	// PolicyName names the ValidatingAdmissionPolicy and its binding.
	PolicyName = "mpool-machinepool-feature-gate"

	// Message is what a refused MachinePool create says.
	Message = "the MachinePool feature gate is disabled: start the manager with --feature-gates=MachinePool=true (or EXP_MACHINE_POOL=true)"
)

// Policy returns the policy that denies creating MachinePools.
func Policy() *admissionregistrationv1.ValidatingAdmissionPolicy {
	return &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: PolicyName, Labels: labels()},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
						Rule: admissionregistrationv1.Rule{
							APIGroups:   []string{clusterv1.GroupVersion.Group},
							APIVersions: []string{"*"},
							Resources:   []string{"machinepools"},
						},
					},
				}},
			},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "false",
				Message:    Message,
				Reason:     ptr.To(metav1.StatusReasonForbidden),
			}},
		},
	}
}

// Binding returns the binding that makes Policy deny.
func Binding() *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
	return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: PolicyName, Labels: labels()},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        PolicyName,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
}

func labels() map[string]string {
	return map[string]string{"app.kubernetes.io/managed-by": "mpool"}
}

// Ensure installs the policy and its binding when the MachinePool gate is
// disabled and removes them when it is enabled. It is idempotent. The API
// server applies a new policy asynchronously: creates may succeed for a
// moment after Ensure returns.
func Ensure(ctx context.Context, c client.Client, enabled bool) error {
	if enabled {
		var errs []error
		for _, obj := range []client.Object{Binding(), Policy()} {
			if err := c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting %T %s: %w", obj, obj.GetName(), err))
			}
		}
		return errors.Join(errs...)
	}
	if err := admission.Apply(ctx, c, Policy(), func(got, want *admissionregistrationv1.ValidatingAdmissionPolicy) bool {
		if equality.Semantic.DeepEqual(got.Spec.MatchConstraints, want.Spec.MatchConstraints) &&
			equality.Semantic.DeepEqual(got.Spec.Validations, want.Spec.Validations) &&
			equality.Semantic.DeepEqual(got.Spec.FailurePolicy, want.Spec.FailurePolicy) {
			return false
		}
		got.Spec = want.Spec
		return true
	}); err != nil {
		return err
	}
	return admission.Apply(ctx, c, Binding(), func(got, want *admissionregistrationv1.ValidatingAdmissionPolicyBinding) bool {
		if got.Spec.PolicyName == want.Spec.PolicyName && equality.Semantic.DeepEqual(got.Spec.ValidationActions, want.Spec.ValidationActions) &&
			got.Spec.MatchResources == nil && got.Spec.ParamRef == nil {
			return false
		}
		got.Spec = want.Spec
		return true
	})
}
