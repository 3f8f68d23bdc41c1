package kubeenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// TestControllerManagerRunsWhatTheSystemReliesOn checks the controllers the
// embedded control plane promises: the garbage collector deletes dependents
// of a deleted owner, and the disruption controller computes PDB status so
// that the eviction API can honour budgets.
func TestControllerManagerRunsWhatTheSystemReliesOn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cp, err := Start(ctx, Options{Progress: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	cs := kubernetes.NewForConfigOrDie(cp.RESTConfig())
	poll := func(what string, cond func(context.Context) (bool, error)) {
		t.Helper()
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, cond); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	owner, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name:            "dependent",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().ConfigMaps("default").Delete(ctx, "owner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll("garbage collection of the dependent Secret", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Secrets("default").Get(ctx, "dependent", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})

	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "budget", Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptrIntStr(intstr.FromInt32(1)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
		},
	}
	if _, err := cs.PolicyV1().PodDisruptionBudgets("default").Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll("the disruption controller observing the PDB", func(ctx context.Context) (bool, error) {
		got, err := cs.PolicyV1().PodDisruptionBudgets("default").Get(ctx, "budget", metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("reading PDB: %w", err)
		}
		return got.Status.ObservedGeneration == got.Generation, nil
	})
}

func ptrIntStr(v intstr.IntOrString) *intstr.IntOrString { return &v }
