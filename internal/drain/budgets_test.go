package drain_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mpool-dev/mpool/internal/drain"
)

// TestBudgets reads the PodDisruptionBudgets from an eviction's refusal as
// the API server words it (pkg/registry/core/pod/storage/eviction.go).
func TestBudgets(t *testing.T) {
	refusal := func(causes ...metav1.StatusCause) error {
		err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
		err.ErrStatus.Details.Causes = causes
		return fmt.Errorf("evicting: %w", err)
	}
	tests := []struct {
		err  error
		want []string
	}{
		{refusal(metav1.StatusCause{Type: policyv1.DisruptionBudgetCause, Message: "The disruption budget db needs 2 healthy pods and has 2 currently"}), []string{"db"}},
		{refusal(metav1.StatusCause{Type: policyv1.DisruptionBudgetCause, Message: "The disruption budget web is still being processed by the server."}), []string{"web"}},
		{refusal(), nil},
		{refusal(metav1.StatusCause{Type: "Other", Message: "The disruption budget x y"}), nil},
		{apierrors.NewInternalError(errors.New("This pod has more than one PodDisruptionBudget")), nil},
		{nil, nil},
	}
	for _, tt := range tests {
		if got := drain.Budgets(tt.err); !slices.Equal(got, tt.want) {
			t.Errorf("Budgets(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
