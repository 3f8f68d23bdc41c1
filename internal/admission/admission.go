// Package admission applies the ValidatingAdmissionPolicies with which mpool
// refuses, at admission and without a webhook, what the CRDs' own rules do
// not (config/crd/policies; the MachinePool feature gate, subpackage
// featuregate). The manager's leader applies them at start, so a real
// management cluster, `mpool up` and the tests get the same policies. A rule
// that needs a second object is a webhook's (subpackage flexibleversion): a
// policy that takes parameters costs one evaluation per parameter object.
package admission

import (
	"context"
	"errors"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Apply creates want, or updates the existing object when merge (which
// copies want's fields onto got) reports a difference. An update that
// conflicts (the API server writes a policy's status after creating it) is
// tried again on what is there now.
func Apply[T client.Object](ctx context.Context, c client.Client, want T, merge func(got, want T) bool) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got := want.DeepCopyObject().(T)
		err := c.Get(ctx, client.ObjectKeyFromObject(want), got)
		switch {
		case apierrors.IsNotFound(err):
			if err := c.Create(ctx, want.DeepCopyObject().(T)); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating %T %s: %w", want, want.GetName(), err)
			}
			return nil
		case err != nil:
			return fmt.Errorf("reading %T %s: %w", want, want.GetName(), err)
		}
		if !merge(got, want) {
			return nil
		}
		if err := c.Update(ctx, got); err != nil {
			return fmt.Errorf("updating %T %s: %w", want, want.GetName(), err)
		}
		return nil
	})
}

// EnsurePolicies creates or updates each policy, then each binding, so that
// their specs are as given.
func EnsurePolicies(ctx context.Context, c client.Client, policies []*admissionregistrationv1.ValidatingAdmissionPolicy, bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding) error {
	var errs []error
	for _, p := range policies {
		errs = append(errs, Apply(ctx, c, p, func(got, want *admissionregistrationv1.ValidatingAdmissionPolicy) bool {
			if equality.Semantic.DeepEqual(got.Spec, want.Spec) {
				return false
			}
			got.Spec = want.Spec
			return true
		}))
	}
	for _, b := range bindings {
		errs = append(errs, Apply(ctx, c, b, func(got, want *admissionregistrationv1.ValidatingAdmissionPolicyBinding) bool {
			if equality.Semantic.DeepEqual(got.Spec, want.Spec) {
				return false
			}
			got.Spec = want.Spec
			return true
		}))
	}
	return errors.Join(errs...)
}

// RemovePolicies deletes each binding, then each policy, by name; what is
// not there is already removed.
func RemovePolicies(ctx context.Context, c client.Client, policies []*admissionregistrationv1.ValidatingAdmissionPolicy, bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding) error {
	var errs []error
	remove := func(o client.Object) {
		if err := c.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting %T %s: %w", o, o.GetName(), err))
		}
	}
	for _, b := range bindings {
		remove(b.DeepCopy())
	}
	for _, p := range policies {
		remove(p.DeepCopy())
	}
	return errors.Join(errs...)
}
