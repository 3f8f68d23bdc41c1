package local

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/internal/testenv"
)

// Short MachineHealthCheck timeouts: the sim's node agent marks a stopped
// kubelet's Node Unknown after its grace period, the check waits this long
// more.
const unhealthyTimeout = 2

// createMHC creates a MachineHealthCheck over the pool's Machines whose
// remediation is triggered while at most trigger of them are unhealthy.
func (f *fixture) createMHC(trigger intstr.IntOrString, nodeStartup int32) *clusterv1.MachineHealthCheck {
	f.T.Helper()
	mhc := &clusterv1.MachineHealthCheck{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: poolName},
		Spec: clusterv1.MachineHealthCheckSpec{
			ClusterName: clusterName,
			Selector:    metav1.LabelSelector{MatchLabels: map[string]string{clusterv1.MachinePoolNameLabel: poolName}},
			Checks: clusterv1.MachineHealthCheckChecks{
				NodeStartupTimeoutSeconds: ptr.To(nodeStartup),
				UnhealthyNodeConditions: []clusterv1.UnhealthyNodeCondition{
					{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, TimeoutSeconds: ptr.To[int32](unhealthyTimeout)},
					{Type: corev1.NodeReady, Status: corev1.ConditionFalse, TimeoutSeconds: ptr.To[int32](unhealthyTimeout)},
				},
			},
			Remediation: clusterv1.MachineHealthCheckRemediation{
				TriggerIf: clusterv1.MachineHealthCheckRemediationTriggerIf{UnhealthyLessThanOrEqualTo: &trigger},
			},
		},
	}
	f.Create(mhc)
	return mhc
}

// mhc reads the MachineHealthCheck back.
func (f *fixture) mhc() *clusterv1.MachineHealthCheck {
	f.T.Helper()
	m := &clusterv1.MachineHealthCheck{}
	if err := env.Client.Get(f.Ctx, f.Key(poolName), m); err != nil {
		f.T.Fatal(err)
	}
	return m
}

// waitMHC waits until the MachineHealthCheck sees n targets, healthy of
// them healthy.
func (f *fixture) waitMHC(n, healthy int32, timeout time.Duration) {
	f.T.Helper()
	testenv.Eventually(f.T, timeout, func() error {
		m := f.mhc()
		if ptr.Deref(m.Status.ExpectedMachines, -1) != n || ptr.Deref(m.Status.CurrentHealthy, -1) != healthy {
			return fmt.Errorf("MachineHealthCheck status: expected %v, healthy %v, want %d and %d (conditions %+v)",
				ptr.Deref(m.Status.ExpectedMachines, -1), ptr.Deref(m.Status.CurrentHealthy, -1), n, healthy, m.Status.Conditions)
		}
		return nil
	})
}

func TestMachineHealthCheckSeesThePoolMachines(t *testing.T) {
	f, _ := start(t, cloudOptions{}, managerOptions{})
	f.createPool(poolSpec{replicas: 3})
	f.waitConverged(3, v1, "", converge)
	f.createMHC(intstr.FromString("100%"), 30)
	f.waitMHC(3, 3, 60*time.Second)
	m := f.mhc()
	if c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.MachineHealthCheckRemediationAllowedCondition); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("RemediationAllowed: %+v", c)
	}
	if len(m.Status.Targets) != 3 {
		t.Errorf("targets %v", m.Status.Targets)
	}
}
