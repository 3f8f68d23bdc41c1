package conversion

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	coreconversion "sigs.k8s.io/cluster-api/core/webhooks/conversion"

	mpoolscheme "github.com/mpool-dev/mpool/internal/scheme"
)

// BenchmarkConvertMachinePool measures what the webhook does per object
// when a v1beta1 client reads a stored MachinePool (v1beta2 -> v1beta1)
// and writes one (v1beta1 -> v1beta2): upstream's conversions plus
// recording's annotations. Controllers use v1beta2, the stored version, so
// none of this is on their path.
func BenchmarkConvertMachinePool(b *testing.B) {
	s, err := mpoolscheme.New()
	if err != nil {
		b.Fatal(err)
	}
	coreconversion.SetAPIVersionGetter(func(_ context.Context, gk schema.GroupKind) (string, error) {
		return schema.GroupVersion{Group: gk.Group, Version: "v1beta1"}.String(), nil
	})
	r, err := Registry(s)
	if err != nil {
		b.Fatal(err)
	}
	c, _ := r.GetConverter(clusterv1.GroupVersion.WithKind("MachinePool").GroupKind())
	spoke := &clusterv1beta1.MachinePool{}
	if err := yaml.Unmarshal([]byte(`
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachinePool
metadata: {name: pool, namespace: default}
spec:
  clusterName: c
  replicas: 3
  template:
    spec:
      bootstrap: {configRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta1, kind: KubeadmConfig, name: pool}}
      clusterName: c
      infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: LocalMachinePool, name: pool}
      version: v1.37.1
`), spoke); err != nil {
		b.Fatal(err)
	}
	spoke.SetGroupVersionKind(clusterv1beta1.GroupVersion.WithKind("MachinePool"))
	hub := &clusterv1.MachinePool{}
	hub.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("MachinePool"))
	if err := c.ConvertObject(context.Background(), spoke.DeepCopy(), hub); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		h := &clusterv1.MachinePool{}
		h.SetGroupVersionKind(hub.GroupVersionKind())
		if err := c.ConvertObject(context.Background(), spoke.DeepCopy(), h); err != nil {
			b.Fatal(err)
		}
		sp := &clusterv1beta1.MachinePool{}
		sp.SetGroupVersionKind(spoke.GroupVersionKind())
		if err := c.ConvertObject(context.Background(), h, sp); err != nil {
			b.Fatal(err)
		}
	}
}
