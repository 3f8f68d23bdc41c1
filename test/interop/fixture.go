package interop

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/internal/kubeenv"
	"github.com/mpool-dev/mpool/internal/manager"
	"github.com/mpool-dev/mpool/internal/testenv"
	"github.com/mpool-dev/mpool/sim/server"
	"github.com/mpool-dev/mpool/test/integration/itest"
)

// The control plane stand-in's API: a kind of the test's own, following
// Cluster API's v1beta2 control plane contract as far as workers need it.
const (
	ControlPlaneGroup   = "controlplane.interop.mpool.dev"
	ControlPlaneVersion = "v1alpha1"
	ControlPlaneKind    = "TestControlPlane"
)

// ControlPlaneCRD is the CRD of TestControlPlane: any spec and status, the
// status subresource, and the contract label that tells Cluster API v1.14
// its v1alpha1 follows the v1beta2 contract.
func ControlPlaneCRD() *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	schema := &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{
			Name: "testcontrolplanes." + ControlPlaneGroup,
			Labels: map[string]string{
				"cluster.x-k8s.io/v1beta2":  ControlPlaneVersion,
				"cluster.x-k8s.io/provider": "control-plane-interop-test",
			},
		},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: ControlPlaneGroup,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: "testcontrolplanes", Singular: "testcontrolplane", Kind: ControlPlaneKind, ListKind: ControlPlaneKind + "List",
			},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: ControlPlaneVersion, Served: true, Storage: true,
				Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: schema},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			}},
		},
	}
}

// ManagerLog keeps the last lines mpool's controllers logged (unless
// MPOOL_TEST_LOG sends them to stderr), for a failing test to print.
var ManagerLog = testenv.NewRing(20000)

// Main runs a package's tests beside upstream Cluster API in mode: one
// control plane with mpool's infrastructure CRDs, the control plane
// stand-in's CRD, and upstream's managers (Start), stored in env and up.
// setup, when set, runs next (building what the package's tests share);
// the teardown it returns runs after the tests, before upstream stops.
func Main(m *testing.M, env **testenv.Env, up **Upstream, mode manager.Mode, setup ...func(*testenv.Env) (func(), error)) {
	ctrl.SetLogger(testenv.RecordingLogger(ManagerLog))
	os.Exit(testenv.RunWithOptions(m, env, testenv.Options{CRDs: InfrastructureOnly}, func(e *testenv.Env) (func(), error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		if err := kubeenv.InstallCRDs(ctx, e.Config, []*apiextensionsv1.CustomResourceDefinition{ControlPlaneCRD()}); err != nil {
			return nil, err
		}
		u, err := Start(ctx, e, mode)
		if err != nil {
			return nil, err
		}
		*up = u
		teardowns := []func(){u.Stop}
		stop := func() {
			for i := len(teardowns) - 1; i >= 0; i-- {
				teardowns[i]()
			}
		}
		for _, s := range setup {
			td, err := s(e)
			if err != nil {
				stop()
				return nil, err
			}
			if td != nil {
				teardowns = append(teardowns, td)
			}
		}
		return stop, nil
	}))
}

// CreateControlPlane creates the TestControlPlane <cluster>-control-plane
// in ns, its endpoint env's API server, and marks it initialized and
// Available, as a control plane provider would once the API server
// answers. The Cluster's controlPlaneRef is the caller's to set.
func CreateControlPlane(t testing.TB, env *testenv.Env, ns, cluster string) *unstructured.Unstructured {
	t.Helper()
	endpoint := env.ControlPlaneEndpoint(t)
	cp := &unstructured.Unstructured{}
	cp.SetAPIVersion(ControlPlaneGroup + "/" + ControlPlaneVersion)
	cp.SetKind(ControlPlaneKind)
	cp.SetNamespace(ns)
	cp.SetName(cluster + "-control-plane")
	_ = unstructured.SetNestedField(cp.Object, endpoint.Host, "spec", "controlPlaneEndpoint", "host")
	_ = unstructured.SetNestedField(cp.Object, int64(endpoint.Port), "spec", "controlPlaneEndpoint", "port")
	if err := env.Client.Create(context.Background(), cp); err != nil {
		t.Fatalf("creating the control plane stand-in: %v", err)
	}
	cp.Object["status"] = map[string]any{
		"initialization": map[string]any{"controlPlaneInitialized": true},
		"conditions": []any{map[string]any{
			"type": "Available", "status": "True", "reason": "Available", "lastTransitionTime": metav1.Now().UTC().Format("2006-01-02T15:04:05Z"),
		}},
	}
	if err := env.Client.Status().Update(context.Background(), cp); err != nil {
		t.Fatalf("marking the control plane stand-in initialized: %v", err)
	}
	return cp
}

// NewFixture is itest.NewFixture beside upstream Cluster API: a namespace
// with p's Cluster and provider objects (the Cluster given a
// TestControlPlane as its controlPlaneRef, marked initialized; the
// infrastructure cluster object marked ready, standing in for CAPZ's or
// CAPA's cluster controller), registered as a workload cluster served by
// env's API server, and the simulated cloud.
func NewFixture(t testing.TB, env *testenv.Env, p *itest.Provider, cloud *server.Server) *itest.Fixture {
	t.Helper()
	f := itest.EmptyFixture(t, env, p, cloud)
	ctx := f.Ctx
	// Before the Cluster: upstream's cluster cache retries a connection
	// only every 30 seconds.
	env.RegisterWorkloadCluster(t, f.NS, p.ClusterName)
	var objs []*unstructured.Unstructured
	if p.ClusterManifest != nil {
		objs = itest.Manifest(t, f.NS, p.ClusterManifest...)
	} else {
		c := &unstructured.Unstructured{}
		c.SetAPIVersion("cluster.x-k8s.io/v1beta2")
		c.SetKind("Cluster")
		c.SetNamespace(f.NS)
		c.SetName(p.ClusterName)
		objs = append(objs, c)
	}
	endpoint := env.ControlPlaneEndpoint(t)
	cp := CreateControlPlane(t, env, f.NS, p.ClusterName)
	var infra *unstructured.Unstructured
	for _, obj := range objs {
		if obj.GetKind() == "Cluster" {
			_ = unstructured.SetNestedField(obj.Object, endpoint.Host, "spec", "controlPlaneEndpoint", "host")
			_ = unstructured.SetNestedField(obj.Object, int64(endpoint.Port), "spec", "controlPlaneEndpoint", "port")
			ref := map[string]any{"kind": ControlPlaneKind, "name": cp.GetName()}
			if obj.GetAPIVersion() == "cluster.x-k8s.io/v1beta1" {
				ref["apiVersion"] = cp.GetAPIVersion()
			} else {
				ref["apiGroup"] = ControlPlaneGroup
			}
			_ = unstructured.SetNestedMap(obj.Object, ref, "spec", "controlPlaneRef")
			if k, ok, _ := unstructured.NestedString(obj.Object, "spec", "infrastructureRef", "kind"); ok {
				for _, o := range objs {
					if o.GetKind() == k {
						infra = o
					}
				}
			}
		}
		f.Create(obj)
	}
	if infra != nil {
		// As CAPZ's or CAPA's cluster controller would once the network is up.
		testenv.Eventually(t, 30*time.Second, func() error {
			o := &unstructured.Unstructured{}
			o.SetGroupVersionKind(infra.GroupVersionKind())
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(infra), o); err != nil {
				return err
			}
			if err := unstructured.SetNestedField(o.Object, true, "status", "ready"); err != nil {
				return err
			}
			if err := env.Client.Status().Update(ctx, o); err != nil {
				return fmt.Errorf("marking %s %s ready: %w", o.GetKind(), o.GetName(), err)
			}
			return nil
		})
	}
	return f
}
