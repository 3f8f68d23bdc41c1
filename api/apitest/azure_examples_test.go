package apitest

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
)

// azureExampleFiles returns the manifests under examples/azure.
func azureExampleFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "examples", "azure", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example manifests in examples/azure: %v", err)
	}
	return files
}

// TestAzureExamplesApply creates every object of examples/azure, each file in a fresh
// namespace, and asserts that each reads back as written (a Secret's stringData as its
// data).
func TestAzureExamplesApply(t *testing.T) {
	for _, f := range azureExampleFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			ns := env.NewNamespace(t)
			for _, doc := range splitYAML(string(b)) {
				want := fromYAML(t, doc)
				if len(want.Object) == 0 {
					continue // the comments heading the file
				}
				obj := want.DeepCopy()
				obj.SetNamespace(ns)
				what := want.GetKind() + " " + want.GetName()
				if err := env.Client.Create(ctx(), obj); err != nil {
					t.Fatalf("creating %s: %v", what, err)
				}
				got := &unstructured.Unstructured{}
				got.SetGroupVersionKind(want.GroupVersionKind())
				if err := env.Client.Get(ctx(), client.ObjectKey{Namespace: ns, Name: want.GetName()}, got); err != nil {
					t.Fatalf("reading back %s: %v", what, err)
				}
				if sd, ok := want.Object["stringData"].(map[string]any); ok {
					delete(want.Object, "stringData")
					data, _, _ := unstructured.NestedStringMap(got.Object, "data")
					for k, v := range sd {
						if enc := base64.StdEncoding.EncodeToString([]byte(v.(string))); data[k] != enc {
							t.Errorf("%s: data[%s] = %q, want %q (stringData %q)", what, k, data[k], enc, v)
						}
					}
				}
				if diffs := subsetDiff("", want.Object, got.Object); len(diffs) > 0 {
					t.Errorf("%s did not read back as written:\n  %s", what, strings.Join(diffs, "\n  "))
				}
			}
		})
	}
}

// TestAzureClusterExampleHangsTogether checks that examples/azure/cluster.yaml is the
// Cluster the seed's Azure MachinePool example names and that its references resolve:
// Cluster → AzureCluster → AzureClusterIdentity → Secret, read through the typed API.
func TestAzureClusterExampleHangsTogether(t *testing.T) {
	root := repoRoot(t)
	read := func(rel string) []*unstructured.Unstructured {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		var out []*unstructured.Unstructured
		for _, doc := range splitYAML(string(b)) {
			if o := fromYAML(t, doc); len(o.Object) > 0 {
				out = append(out, o)
			}
		}
		return out
	}
	find := func(objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
		for _, o := range objs {
			if o.GetKind() == kind {
				return o
			}
		}
		t.Fatalf("no %s", kind)
		return nil
	}
	seed := read("examples/seeds/azure-machinepool.yaml")
	clusterName, _, _ := unstructured.NestedString(find(seed, "MachinePool").Object, "spec", "clusterName")
	poolLocation, _, _ := unstructured.NestedString(find(seed, "AzureMachinePool").Object, "spec", "location")

	ns := env.NewNamespace(t)
	for _, o := range read("examples/azure/cluster.yaml") {
		o.SetNamespace(ns)
		if err := env.Client.Create(ctx(), o); err != nil {
			t.Fatalf("creating %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}

	cl := &clusterv1.Cluster{}
	if err := env.Client.Get(ctx(), client.ObjectKey{Namespace: ns, Name: clusterName}, cl); err != nil {
		t.Fatalf("the seed's MachinePool names Cluster %q, which examples/azure/cluster.yaml lacks: %v", clusterName, err)
	}
	ref := cl.Spec.InfrastructureRef
	if !ref.IsDefined() || ref.Kind != infrav1.AzureClusterKind || ref.APIGroup != infrav1.GroupVersion.Group {
		t.Fatalf("Cluster %s infrastructureRef = %+v, want an AzureCluster", clusterName, ref)
	}
	ac := &infrav1.AzureCluster{}
	if err := env.Client.Get(ctx(), client.ObjectKey{Namespace: ns, Name: ref.Name}, ac); err != nil {
		t.Fatalf("Cluster %s infrastructureRef: %v", clusterName, err)
	}
	if ac.Spec.Location != poolLocation {
		t.Errorf("AzureCluster location %q, the seed's AzureMachinePool is in %q: a scale set and its vnet share a region", ac.Spec.Location, poolLocation)
	}
	if ac.Spec.SubscriptionID == "" || ac.Spec.ResourceGroup == "" {
		t.Errorf("AzureCluster subscriptionID %q, resourceGroup %q: the example should set both", ac.Spec.SubscriptionID, ac.Spec.ResourceGroup)
	}
	if s := ac.NodeSubnet(); s == nil || s.Name == "" {
		t.Errorf("AzureCluster has no node subnet: %+v", ac.Spec.NetworkSpec.Subnets)
	}
	if ac.Spec.IdentityRef == nil || ac.Spec.IdentityRef.Kind != infrav1.AzureClusterIdentityKind {
		t.Fatalf("AzureCluster identityRef = %+v, want an AzureClusterIdentity", ac.Spec.IdentityRef)
	}
	id := &infrav1.AzureClusterIdentity{}
	if err := env.Client.Get(ctx(), client.ObjectKey{Namespace: ns, Name: ac.Spec.IdentityRef.Name}, id); err != nil {
		t.Fatalf("AzureCluster identityRef: %v", err)
	}
	if id.Spec.Type != infrav1.ServicePrincipal {
		t.Errorf("identity type %q, want ServicePrincipal (what the simulated Entra ID serves)", id.Spec.Type)
	}
	secretNS := id.Spec.ClientSecret.Namespace
	if secretNS == "" {
		secretNS = id.Namespace
	}
	sec := &corev1.Secret{}
	if err := env.Client.Get(ctx(), client.ObjectKey{Namespace: secretNS, Name: id.Spec.ClientSecret.Name}, sec); err != nil {
		t.Fatalf("identity clientSecret: %v", err)
	}
	if len(sec.Data[infrav1.AzureClusterIdentityClientSecretKey]) == 0 {
		t.Errorf("Secret %s has no %q key", sec.Name, infrav1.AzureClusterIdentityClientSecretKey)
	}
}
