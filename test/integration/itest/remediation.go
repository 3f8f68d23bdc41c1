package itest

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/internal/capi"
	"github.com/mpool-dev/mpool/internal/events"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/core"
)

// CreateMachineHealthCheck creates a MachineHealthCheck named after the
// fixture's pool over its Machines, with short timeouts (a Node Ready
// Unknown or False for 2s; no Node 30s after creation, the least upstream
// accepts), remediating while at most trigger of them are unhealthy.
func (f *Fixture) CreateMachineHealthCheck(trigger intstr.IntOrString) *clusterv1.MachineHealthCheck {
	f.T.Helper()
	mhc := &clusterv1.MachineHealthCheck{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: f.Provider.PoolName},
		Spec: clusterv1.MachineHealthCheckSpec{
			ClusterName: f.Provider.ClusterName,
			Selector:    metav1.LabelSelector{MatchLabels: map[string]string{clusterv1.MachinePoolNameLabel: capi.LabelValue(f.Provider.PoolName)}},
			Checks: clusterv1.MachineHealthCheckChecks{
				NodeStartupTimeoutSeconds: ptr.To[int32](30),
				UnhealthyNodeConditions: []clusterv1.UnhealthyNodeCondition{
					{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, TimeoutSeconds: ptr.To[int32](2)},
					{Type: corev1.NodeReady, Status: corev1.ConditionFalse, TimeoutSeconds: ptr.To[int32](2)},
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

// WaitMachineHealthCheck waits until the fixture's MachineHealthCheck sees
// n targets, healthy of them healthy.
func (f *Fixture) WaitMachineHealthCheck(n, healthy int32, timeout time.Duration) {
	f.T.Helper()
	testenv.Eventually(f.T, timeout, func() error {
		m := &clusterv1.MachineHealthCheck{}
		if err := f.Env.Client.Get(f.Ctx, f.PoolKey(), m); err != nil {
			return err
		}
		if ptr.Deref(m.Status.ExpectedMachines, -1) != n || ptr.Deref(m.Status.CurrentHealthy, -1) != healthy {
			return fmt.Errorf("MachineHealthCheck: expected %v, healthy %v, want %d and %d", ptr.Deref(m.Status.ExpectedMachines, -1), ptr.Deref(m.Status.CurrentHealthy, -1), n, healthy)
		}
		return nil
	})
}

// MarkInfrastructureReady sets status.ready on the Cluster's infrastructure
// object (an AWSCluster, an AzureCluster), as CAPA or CAPZ report it, and
// waits until the Cluster says its infrastructure is ready: upstream's
// MachineHealthCheck evaluates Machines only then. A standalone manager
// marks its placement kinds ready itself; beside upstream Cluster API this
// stands in for CAPZ's or CAPA's cluster controller. A Cluster without one
// needs nothing.
func (f *Fixture) MarkInfrastructureReady(timeout time.Duration) {
	f.T.Helper()
	c := &clusterv1.Cluster{}
	if err := f.Env.Client.Get(f.Ctx, f.Key(f.Provider.ClusterName), c); err != nil {
		f.T.Fatal(err)
	}
	ref := c.Spec.InfrastructureRef
	if !ref.IsDefined() {
		return // nothing to wait for (upstream core reports no InfrastructureReady then)
	}
	gvk, err := capi.RefGVK(f.Ctx, f.Env.Client, ref)
	if err != nil {
		f.T.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(f.NS)
	u.SetName(ref.Name)
	if err := f.Env.Client.Status().Patch(f.Ctx, u, client.RawPatch(types.MergePatchType, []byte(`{"status":{"ready":true}}`))); err != nil {
		f.T.Fatalf("marking %s %s ready: %v", ref.Kind, ref.Name, err)
	}
	testenv.Eventually(f.T, timeout, func() error {
		if err := f.Env.Client.Get(f.Ctx, f.Key(f.Provider.ClusterName), c); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1.ClusterInfrastructureReadyCondition) {
			return fmt.Errorf("Cluster %s: infrastructure not ready", c.Name)
		}
		return nil
	})
}

// CheckStoppedKubeletRemediated checks remediation on the fixture's
// provider for a converged pool of n instances on version: one instance's
// kubelet stops, a MachineHealthCheck marks its Machine, the engine drains
// and deletes exactly that instance (a Remediating event names
// it) and the pool is Running again with n Ready Nodes.
func (f *Fixture) CheckStoppedKubeletRemediated(n int, version string, timeout time.Duration) {
	f.T.Helper()
	f.MarkInfrastructureReady(timeout)
	f.CreateMachineHealthCheck(intstr.FromString("100%"))
	f.WaitMachineHealthCheck(int32(n), int32(n), timeout)
	victim := f.InstanceIDs()[0]
	f.SetInstanceFault(victim, core.FaultKubeletStopped)
	testenv.Eventually(f.T, timeout, func() error {
		if ids := f.InstanceIDs(); slices.Contains(ids, victim) {
			return fmt.Errorf("instance %s is still there (%v)", victim, ids)
		}
		return f.Converged(n, version)
	})
	// The pool's Remediating condition lasts only while the instance
	// drains; the event that says so stays.
	testenv.Eventually(f.T, timeout, func() error {
		list, err := f.CS.EventsV1().Events(f.NS).List(f.Ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, ev := range list.Items {
			if ev.Reason == events.Remediating && strings.Contains(ev.Note, "Remediating instance "+victim+" ") {
				return nil
			}
		}
		return fmt.Errorf("no %s event names instance %s", events.Remediating, victim)
	})
	f.WaitMachineHealthCheck(int32(n), int32(n), timeout)
}
