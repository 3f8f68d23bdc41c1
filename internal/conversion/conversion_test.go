package conversion_test

import (
	"context"
	"os"
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/mpool-dev/mpool/internal/conversion"
	"github.com/mpool-dev/mpool/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }

const v1beta1Pool = `
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachinePool
metadata:
  name: pool
spec:
  clusterName: c
  replicas: 3
  minReadySeconds: 7
  template:
    spec:
      bootstrap:
        configRef:
          apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
          kind: KubeadmConfig
          name: pool
      clusterName: c
      infrastructureRef:
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
        kind: LocalMachinePool
        name: pool
      version: v1.37.1
      nodeDrainTimeout: 5m
`

// TestV1Beta1ReadsBackInBothVersions writes the seeds' kind of v1beta1
// MachinePool and reads it back as v1beta2 (the stored version, what the
// controllers use) and as v1beta1, through the conversion webhook the test
// environment serves.
func TestV1Beta1ReadsBackInBothVersions(t *testing.T) {
	ctx := context.Background()
	ns := createYAML(t, v1beta1Pool)

	hub := &clusterv1.MachinePool{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pool"}, hub); err != nil {
		t.Fatalf("reading it as v1beta2: %v", err)
	}
	spec := hub.Spec.Template.Spec
	if got := spec.InfrastructureRef; got != (clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "LocalMachinePool", Name: "pool"}) {
		t.Errorf("v1beta2 infrastructureRef %+v", got)
	}
	if got := spec.Bootstrap.ConfigRef; got != (clusterv1.ContractVersionedObjectReference{APIGroup: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfig", Name: "pool"}) {
		t.Errorf("v1beta2 bootstrap.configRef %+v", got)
	}
	if spec.MinReadySeconds == nil || *spec.MinReadySeconds != 7 || spec.Deletion.NodeDrainTimeoutSeconds == nil || *spec.Deletion.NodeDrainTimeoutSeconds != 300 || spec.Version != "v1.37.1" {
		t.Errorf("v1beta2 template spec %+v", spec)
	}

	spoke := &clusterv1beta1.MachinePool{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pool"}, spoke); err != nil {
		t.Fatalf("reading it as v1beta1: %v", err)
	}
	want := &clusterv1beta1.MachinePool{}
	if err := yaml.Unmarshal([]byte(v1beta1Pool), want); err != nil {
		t.Fatal(err)
	}
	// Exactly as written: upstream Cluster API alone would add the
	// references' namespace and name bootstrap.cluster.x-k8s.io/v1beta2 (the
	// contract label's version) for the KubeadmConfig; mpool keeps the written
	// spec while the stored one is unchanged (SpokeSpecAnnotation).
	if !apiequality.Semantic.DeepEqual(spoke.Spec, want.Spec) {
		t.Errorf("v1beta1 read back\n%+v\nwant\n%+v", spoke.Spec, want.Spec)
	}
}

// TestV1Beta2ReadsBackAsV1Beta1 goes the other way: a v1beta2 pool read as
// v1beta1 names its references' apiVersion from the referenced CRDs'
// contract labels, and fields v1beta1 lacks survive a v1beta1 round trip.
func TestV1Beta2ReadsBackAsV1Beta1(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t)
	mrs := int32(4)
	pool := &clusterv1.MachinePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pool"},
		Spec: clusterv1.MachinePoolSpec{
			ClusterName: "c",
			Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
				ClusterName:       "c",
				Bootstrap:         clusterv1.Bootstrap{DataSecretName: new(string)},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "LocalMachinePool", Name: "pool"},
				Version:           "v1.37.1",
				MinReadySeconds:   &mrs,
			}},
		},
	}
	if err := env.Client.Create(ctx, pool); err != nil {
		t.Fatalf("creating a v1beta2 MachinePool: %v", err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta1", Kind: "MachinePool"})
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pool), u); err != nil {
		t.Fatalf("reading it as v1beta1: %v", err)
	}
	av, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "infrastructureRef", "apiVersion")
	if av != "infrastructure.cluster.x-k8s.io/v1beta1" {
		t.Errorf("v1beta1 infrastructureRef.apiVersion %q, want infrastructure.cluster.x-k8s.io/v1beta1 (from the CRD's contract label)", av)
	}
	// Write it back in v1beta1 unchanged: nothing v1beta2 holds is lost.
	if err := env.Client.Update(ctx, u); err != nil {
		t.Fatalf("updating it as v1beta1: %v", err)
	}
	back := &clusterv1.MachinePool{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pool), back); err != nil {
		t.Fatal(err)
	}
	if !apiequality.Semantic.DeepEqual(back.Spec, pool.Spec) {
		t.Errorf("after a v1beta1 round trip\n%+v\nwant\n%+v", back.Spec, pool.Spec)
	}
}

const v1beta1Cluster = `
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata:
  name: c
spec:
  clusterNetwork:
    pods:
      cidrBlocks: ["192.168.0.0/16"]
  controlPlaneRef:
    apiVersion: controlplane.cluster.x-k8s.io/v1beta1
    kind: KubeadmControlPlane
    name: c-control-plane
  infrastructureRef:
    apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
    kind: AzureCluster
    name: c
`

// TestUnservedReferenceConverts: a Cluster naming a control plane kind this
// management cluster does not serve (mpool runs no KubeadmControlPlane)
// still reads back in v1beta1 (upstream's conversion alone fails: it cannot
// find the kind's version), with the version it was written with.
func TestUnservedReferenceConverts(t *testing.T) {
	ctx := context.Background()
	ns := createYAML(t, v1beta1Cluster)
	back := &clusterv1beta1.Cluster{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "c"}, back); err != nil {
		t.Fatalf("reading it as v1beta1: %v", err)
	}
	if ref := back.Spec.ControlPlaneRef; ref == nil || ref.APIVersion != "controlplane.cluster.x-k8s.io/v1beta1" || ref.Kind != "KubeadmControlPlane" {
		t.Errorf("controlPlaneRef read back as %+v", ref)
	}
	if _, ok := back.Annotations[conversion.RefVersionsAnnotation]; ok {
		t.Errorf("the v1beta1 view shows %s: %v", conversion.RefVersionsAnnotation, back.Annotations)
	}
	hub := &clusterv1.Cluster{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "c"}, hub); err != nil {
		t.Fatal(err)
	}
	if got := hub.Spec.ControlPlaneRef; got != (clusterv1.ContractVersionedObjectReference{APIGroup: "controlplane.cluster.x-k8s.io", Kind: "KubeadmControlPlane", Name: "c-control-plane"}) {
		t.Errorf("v1beta2 controlPlaneRef %+v", got)
	}
}

// TestChangedSpecFallsBackToUpstream: once a v1beta2 client changes the
// spec, a v1beta1 read is upstream's conversion of the new spec (with the
// references' recorded versions), never the stale written one.
func TestChangedSpecFallsBackToUpstream(t *testing.T) {
	ctx := context.Background()
	ns := createYAML(t, v1beta1Pool)
	hub := &clusterv1.MachinePool{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pool"}, hub); err != nil {
		t.Fatal(err)
	}
	five := int32(5)
	hub.Spec.Replicas = &five
	if err := env.Client.Update(ctx, hub); err != nil {
		t.Fatal(err)
	}
	spoke := &clusterv1beta1.MachinePool{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pool"}, spoke); err != nil {
		t.Fatal(err)
	}
	if spoke.Spec.Replicas == nil || *spoke.Spec.Replicas != 5 {
		t.Errorf("v1beta1 replicas %v after a v1beta2 update to 5", spoke.Spec.Replicas)
	}
	if ref := spoke.Spec.Template.Spec.Bootstrap.ConfigRef; ref == nil || ref.APIVersion != "bootstrap.cluster.x-k8s.io/v1beta1" {
		t.Errorf("configRef %+v: want the recorded bootstrap.cluster.x-k8s.io/v1beta1", ref)
	}
	for _, a := range []string{conversion.SpokeSpecAnnotation, conversion.RefVersionsAnnotation} {
		if _, ok := spoke.Annotations[a]; ok {
			t.Errorf("the v1beta1 view shows %s", a)
		}
	}
}

// createYAML creates the object of manifest in a fresh namespace, which it
// returns.
func createYAML(t *testing.T, manifest string) string {
	t.Helper()
	ns := env.NewNamespace(t)
	in := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &in.Object); err != nil {
		t.Fatal(err)
	}
	in.SetNamespace(ns)
	if err := env.Client.Create(context.Background(), in); err != nil {
		t.Fatalf("creating %s %s: %v", in.GetKind(), in.GetName(), err)
	}
	return ns
}
