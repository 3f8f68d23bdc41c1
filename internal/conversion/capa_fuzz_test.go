package conversion

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	capainfrav1 "sigs.k8s.io/cluster-api-provider-aws/v2/api/v1beta2"
	capaexpinfrav1 "sigs.k8s.io/cluster-api-provider-aws/v2/exp/api/v1beta2"
	conversionutil "sigs.k8s.io/cluster-api/util/conversion"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
	mpoolscheme "github.com/mpool-dev/mpool/internal/scheme"
)

// TestCAPAFuzzyConversion fills random objects of every CAPAKinds kind in
// both versions and checks on the wire that converting to the other version
// and back loses nothing of the spec: what the other version has no field
// for comes back from UnconvertedAnnotation.
func TestCAPAFuzzyConversion(t *testing.T) {
	s, err := mpoolscheme.New()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Registry(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct {
		mine, capa client.Object
	}{
		{&infrav1.AWSCluster{}, &capainfrav1.AWSCluster{}},
		{&infrav1.AWSMachinePool{}, &capaexpinfrav1.AWSMachinePool{}},
		{&infrav1.AWSManagedMachinePool{}, &capaexpinfrav1.AWSManagedMachinePool{}},
	} {
		mineGVK, capaGVK := gvkOf(t, s, k.mine), gvkOf(t, s, k.capa)
		c, ok := r.GetConverter(mineGVK.GroupKind())
		if !ok {
			t.Fatalf("no converter for %s", mineGVK.GroupKind())
		}
		roundTrip := func(t *testing.T, from, to client.Object, fromGVK, toGVK schema.GroupVersionKind) {
			f := conversionutil.GetFuzzer(s)
			kept := 0
			for i := range fuzzRounds {
				in := wire(t, s, newLike(from), fill(f, newLike(from)), fromGVK)
				in.SetAnnotations(nil)
				out := newLike(to)
				out.GetObjectKind().SetGroupVersionKind(toGVK)
				if err := c.ConvertObject(context.Background(), in.DeepCopyObject(), out); err != nil {
					t.Fatalf("round %d: converting to %s: %v", i, toGVK.Version, err)
				}
				if _, ok := out.GetAnnotations()[UnconvertedAnnotation]; ok {
					kept++
				}
				out = wire(t, s, newLike(to), out, toGVK)
				back := newLike(from)
				back.GetObjectKind().SetGroupVersionKind(fromGVK)
				if err := c.ConvertObject(context.Background(), out.DeepCopyObject(), back); err != nil {
					t.Fatalf("round %d: converting back to %s: %v", i, fromGVK.Version, err)
				}
				back = wire(t, s, newLike(from), back, fromGVK)
				if d := cmp.Diff(withoutZeros(specOf(t, in)), withoutZeros(specOf(t, back))); d != "" {
					t.Fatalf("round %d: %s -> %s -> %s changed the spec (-before +after):\n%s", i, fromGVK.Version, toGVK.Version, fromGVK.Version, d)
				}
				if _, ok := back.GetAnnotations()[UnconvertedAnnotation]; ok {
					t.Fatalf("round %d: the round trip left %s on the object", i, UnconvertedAnnotation)
				}
			}
			if kept == 0 {
				t.Errorf("no random %s lost a field to %s: the test proves nothing about %s", fromGVK.Version, toGVK.Version, UnconvertedAnnotation)
			}
		}
		t.Run(mineGVK.Kind+"/v1beta1", func(t *testing.T) { roundTrip(t, k.mine, k.capa, mineGVK, capaGVK) })
		t.Run(mineGVK.Kind+"/v1beta2", func(t *testing.T) { roundTrip(t, k.capa, k.mine, capaGVK, mineGVK) })
	}
}
