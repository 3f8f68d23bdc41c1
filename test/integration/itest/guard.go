package itest

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/mpool-dev/mpool/internal/testenv"
)

// GuardNodes puts a pod (app=guarded, tolerating every taint) on each of
// the pool's Nodes and a PodDisruptionBudget "guarded" that keeps all of
// them, so that no drain of those Nodes can finish, and waits until the
// budget allows no disruption. The pods and the budget go when the test
// ends: the next test's cloud names its instances (and Nodes) as this
// one's. It returns the guarded Nodes' names.
func (f *Fixture) GuardNodes(timeout time.Duration) map[string]bool {
	f.T.Helper()
	f.T.Cleanup(func() {
		_ = f.CS.PolicyV1().PodDisruptionBudgets(f.NS).Delete(context.Background(), "guarded", metav1.DeleteOptions{})
		_ = f.CS.CoreV1().Pods(f.NS).DeleteCollection(context.Background(), metav1.DeleteOptions{GracePeriodSeconds: new(int64)}, metav1.ListOptions{})
	})
	guarded := map[string]bool{}
	for i, n := range f.PoolNodes() {
		guarded[n.Name] = true
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: fmt.Sprintf("guarded-%d", i), Labels: map[string]string{"app": "guarded"}},
			Spec: corev1.PodSpec{NodeName: n.Name, Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
				Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
		}
		if _, err := f.CS.CoreV1().Pods(f.NS).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
			f.T.Fatal(err)
		}
	}
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "guarded"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(int32(len(guarded)))),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}}},
	}
	if _, err := f.CS.PolicyV1().PodDisruptionBudgets(f.NS).Create(context.Background(), pdb, metav1.CreateOptions{}); err != nil {
		f.T.Fatal(err)
	}
	testenv.Eventually(f.T, timeout, func() error {
		got, err := f.CS.PolicyV1().PodDisruptionBudgets(f.NS).Get(context.Background(), "guarded", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if int(got.Status.CurrentHealthy) != len(guarded) || got.Status.DisruptionsAllowed != 0 {
			return fmt.Errorf("PodDisruptionBudget guarded: %d healthy of %d, %d disruptions allowed", got.Status.CurrentHealthy, len(guarded), got.Status.DisruptionsAllowed)
		}
		return nil
	})
	return guarded
}

// Unguard deletes GuardNodes' PodDisruptionBudget: the guarded pods may be
// evicted.
func (f *Fixture) Unguard() {
	f.T.Helper()
	if err := f.CS.PolicyV1().PodDisruptionBudgets(f.NS).Delete(context.Background(), "guarded", metav1.DeleteOptions{}); err != nil {
		f.T.Fatal(err)
	}
}
