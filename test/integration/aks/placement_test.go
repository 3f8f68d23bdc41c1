package aks

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	"github.com/mpool-dev/mpool/internal/condition"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/face/azureface"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// startWithCluster is start with examples/aks/cluster.yaml's objects
// changed by mutate (an object it returns false for is not created).
func startWithCluster(t *testing.T, mutate func(*unstructured.Unstructured) bool) *itest.Fixture {
	t.Helper()
	srv := itest.AKS.StartCloud(t, env, itest.CloudOptions{Version: next, BootDelay: 200 * time.Millisecond})
	f := itest.EmptyFixture(t, env, itest.AKS, srv)
	var objs []*unstructured.Unstructured
	for _, o := range itest.Manifest(t, f.NS, itest.AKS.ClusterManifest...) {
		if mutate(o) {
			objs = append(objs, o)
		}
	}
	itest.CreateClusterObjects(t, env, f.NS, itest.AKS.ClusterName, objs)
	f.StartManager()
	return f
}

// controlPlaneRef is the example's reference to its AzureManagedControlPlane,
// as a v1beta1 Cluster writes it.
func controlPlaneRef() map[string]any {
	return map[string]any{"apiVersion": infrav1.GroupVersion.String(), "kind": infrav1.AzureManagedControlPlaneKind, "name": azureface.AKSDefaultClusterName}
}

// waitManagedClusterReady waits for the example's AzureManagedCluster to be
// ready, as Cluster API's v1beta1 contract reads it.
func waitManagedClusterReady(f *itest.Fixture) {
	f.T.Helper()
	testenv.Eventually(f.T, converge, func() error {
		amc := &infrav1.AzureManagedCluster{}
		if err := env.Client.Get(f.Ctx, f.Key(itest.AKS.ClusterName), amc); err != nil {
			return err
		}
		if c := condition.Get(amc, clusterv1.ReadyCondition); !amc.Status.Ready || c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("AzureManagedCluster ready %v, Ready condition %+v", amc.Status.Ready, c)
		}
		return nil
	})
}

// The pools are placed by the AzureManagedControlPlane the Cluster names,
// in either shape: CAPZ's (controlPlaneRef, beside an AzureManagedCluster as
// infrastructureRef: the example) and mpool's earlier one (the
// AzureManagedControlPlane as infrastructureRef). A Cluster naming none
// says so on the pool, which is placed as soon as the Cluster is fixed.
func TestAKSPlacementFromEitherReference(t *testing.T) {
	t.Run("CAPZ's shape, the controlPlaneRef set after the pool", func(t *testing.T) {
		f := startWithCluster(t, func(o *unstructured.Unstructured) bool {
			if o.GetKind() == "Cluster" {
				unstructured.RemoveNestedField(o.Object, "spec", "controlPlaneRef")
			}
			return true
		})
		f.ApplySeed()
		f.WaitCondition(converge, infrav1.ScaleGroupReadyCondition, infrav1.WaitingForInfrastructureClusterReason,
			"Cluster aks names no AzureManagedControlPlane", "spec.infrastructureRef or spec.controlPlaneRef",
			"its spec.infrastructureRef is a AzureManagedCluster", "its spec.controlPlaneRef is not set")

		c := &clusterv1.Cluster{}
		if err := env.Client.Get(f.Ctx, f.Key(itest.AKS.ClusterName), c); err != nil {
			t.Fatal(err)
		}
		before := c.DeepCopy()
		c.Spec.ControlPlaneRef = clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group,
			Kind: infrav1.AzureManagedControlPlaneKind, Name: azureface.AKSDefaultClusterName}
		if err := env.Client.Patch(f.Ctx, c, client.MergeFrom(before)); err != nil {
			t.Fatal(err)
		}
		f.WaitConverged(2, version, converge)
		waitManagedClusterReady(f)
	})
	t.Run("mpool's earlier shape: the AzureManagedControlPlane as infrastructureRef", func(t *testing.T) {
		f := startWithCluster(t, func(o *unstructured.Unstructured) bool {
			switch o.GetKind() {
			case infrav1.AzureManagedClusterKind:
				return false
			case "Cluster":
				unstructured.RemoveNestedField(o.Object, "spec", "controlPlaneRef")
				_ = unstructured.SetNestedMap(o.Object, controlPlaneRef(), "spec", "infrastructureRef")
			}
			return true
		})
		f.ApplySeed()
		f.WaitConverged(2, version, converge)
	})
}
