package conversion

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"strconv"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/randfill"

	bootstrapv1beta1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	coreconversion "sigs.k8s.io/cluster-api/core/webhooks/conversion"
	conversionutil "sigs.k8s.io/cluster-api/util/conversion"

	mpoolscheme "github.com/mpool-dev/mpool/internal/scheme"
)

// fuzzRounds is how many random objects each kind round-trips.
const fuzzRounds = 300

// TestFuzzyConversion fills random v1beta2 objects of every converted kind
// (upstream's fuzzer, conversionutil.GetFuzzer), and checks on the wire
// (JSON, which is all the API server keeps) that hub -> v1beta1 -> hub
// through the converters the webhook serves loses nothing: a v1beta1 client
// that reads a stored object and writes it back keeps every v1beta2 field.
// It also checks v1beta1 -> hub -> v1beta1 keeps the v1beta1 spec as
// written (SpokeSpecAnnotation).
func TestFuzzyConversion(t *testing.T) {
	s, err := mpoolscheme.New()
	if err != nil {
		t.Fatal(err)
	}
	// References' versions, as the CRDs' contract labels would give them.
	coreconversion.SetAPIVersionGetter(func(_ context.Context, gk schema.GroupKind) (string, error) {
		return schema.GroupVersion{Group: gk.Group, Version: "v1beta1"}.String(), nil
	})
	r, err := Registry(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct {
		hub, spoke client.Object
	}{
		{&clusterv1.Cluster{}, &clusterv1beta1.Cluster{}},
		{&clusterv1.Machine{}, &clusterv1beta1.Machine{}},
		{&clusterv1.MachinePool{}, &clusterv1beta1.MachinePool{}},
		{&clusterv1.MachineHealthCheck{}, &clusterv1beta1.MachineHealthCheck{}},
		{&bootstrapv1.KubeadmConfig{}, &bootstrapv1beta1.KubeadmConfig{}},
		{&bootstrapv1.KubeadmConfigTemplate{}, &bootstrapv1beta1.KubeadmConfigTemplate{}},
	} {
		hubGVK, spokeGVK := gvkOf(t, s, k.hub), gvkOf(t, s, k.spoke)
		c, ok := r.GetConverter(hubGVK.GroupKind())
		if !ok {
			t.Fatalf("no converter for %s", hubGVK.GroupKind())
		}
		t.Run(hubGVK.Kind, func(t *testing.T) {
			f := conversionutil.GetFuzzer(s, validInputs)
			converted := 0
			defer func() {
				if converted < fuzzRounds/2 {
					t.Errorf("only %d of %d random objects converted: the fuzzer proves too little", converted, fuzzRounds)
				}
			}()
			for i := range fuzzRounds {
				hub := wire(t, s, newLike(k.hub), fill(f, newLike(k.hub)), hubGVK)
				spoke := newLike(k.spoke)
				spoke.GetObjectKind().SetGroupVersionKind(spokeGVK)
				if err := c.ConvertObject(context.Background(), hub.DeepCopyObject(), spoke); err != nil {
					continue // random input upstream refuses (e.g. an unparsable duration): not a loss
				}
				converted++
				spoke = wire(t, s, newLike(k.spoke), spoke, spokeGVK)
				back := newLike(k.hub)
				back.GetObjectKind().SetGroupVersionKind(hubGVK)
				if err := c.ConvertObject(context.Background(), spoke.DeepCopyObject(), back); err != nil {
					t.Fatalf("round %d: converting back to v1beta2: %v", i, err)
				}
				back = wire(t, s, newLike(k.hub), back, hubGVK)
				if d := cmp.Diff(withoutZeros(specOf(t, hub)), withoutZeros(specOf(t, back))); d != "" {
					t.Fatalf("round %d: hub -> v1beta1 -> hub changed the spec (-before +after):\n%s", i, d)
				}
			}
			// v1beta1 -> hub -> v1beta1: the spec reads back as written while
			// the stored spec is unchanged (SpokeSpecAnnotation).
			for i := range fuzzRounds {
				spoke := wire(t, s, newLike(k.spoke), fill(f, newLike(k.spoke)), spokeGVK)
				hub := newLike(k.hub)
				hub.GetObjectKind().SetGroupVersionKind(hubGVK)
				if err := c.ConvertObject(context.Background(), spoke.DeepCopyObject(), hub); err != nil {
					continue
				}
				hub = wire(t, s, newLike(k.hub), hub, hubGVK)
				back := newLike(k.spoke)
				back.GetObjectKind().SetGroupVersionKind(spokeGVK)
				if err := c.ConvertObject(context.Background(), hub.DeepCopyObject(), back); err != nil {
					t.Fatalf("round %d: converting back to v1beta1: %v", i, err)
				}
				back = wire(t, s, newLike(k.spoke), back, spokeGVK)
				if b, _ := json.Marshal(specOf(t, spoke)); len(b) > maxSpokeSpec {
					continue // not kept: upstream's conversion alone answers
				}
				if _, kept := hub.GetAnnotations()[SpokeSpecAnnotation]; !kept {
					t.Fatalf("round %d: the v1beta1 spec was not kept", i)
				}
				if d := cmp.Diff(withoutZeros(specOf(t, spoke)), withoutZeros(specOf(t, back))); d != "" {
					t.Fatalf("round %d: v1beta1 -> hub -> v1beta1 changed the spec (-before +after):\n%s", i, d)
				}
			}
		})
	}
}

// validInputs keeps the fuzzer to values the API server would hold: a
// reference names a DNS-like group and a kind (so its version can be looked
// up), a bootstrap token has kubeadm's form.
func validInputs(_ runtimeserializer.CodecFactory) []any {
	return []any{
		func(in *clusterv1.ContractVersionedObjectReference, c randfill.Continue) {
			c.FillNoCustom(in)
			in.APIGroup = "g" + strconv.Itoa(int(c.Uint32()%100)) + ".example.com"
			in.Kind = "K" + strconv.Itoa(int(c.Uint32()%100))
		},
		func(in *corev1.ObjectReference, c randfill.Continue) {
			c.FillNoCustom(in)
			in.APIVersion = "g" + strconv.Itoa(int(c.Uint32()%100)) + ".example.com/v1beta1"
		},
		func(in *bootstrapv1beta1.BootstrapTokenString, _ randfill.Continue) {
			in.ID, in.Secret = "abcdef", "0123456789abcdef"
		},
		func(in *bootstrapv1.BootstrapTokenString, _ randfill.Continue) {
			in.ID, in.Secret = "abcdef", "0123456789abcdef"
		},
		func(in *apiextensionsv1.JSON, c randfill.Continue) {
			in.Raw = []byte(strconv.Quote(strconv.Itoa(int(c.Uint32()))))
		},
		// v1beta1 has one control-plane health check timeout for init and
		// join; v1beta2 one each. Upstream's own fuzz tests make them equal.
		func(in *bootstrapv1.KubeadmConfigSpec, c randfill.Continue) {
			c.FillNoCustom(in)
			in.JoinConfiguration.Timeouts.ControlPlaneComponentHealthCheckSeconds = in.InitConfiguration.Timeouts.ControlPlaneComponentHealthCheckSeconds
		},
	}
}

func newLike(o client.Object) client.Object {
	return reflect.New(reflect.TypeOf(o).Elem()).Interface().(client.Object)
}

func fill(f interface{ Fill(any) }, o client.Object) client.Object {
	f.Fill(o)
	return o
}

func gvkOf(t *testing.T, s *runtime.Scheme, o client.Object) schema.GroupVersionKind {
	t.Helper()
	gvks, _, err := s.ObjectKinds(o)
	if err != nil {
		t.Fatal(err)
	}
	return gvks[0]
}

// wire returns src as the API server would keep it: through JSON into a
// fresh into, with gvk set.
func wire(t *testing.T, _ *runtime.Scheme, into, src client.Object, gvk schema.GroupVersionKind) client.Object {
	t.Helper()
	b, err := json.Marshal(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatal(err)
	}
	into.GetObjectKind().SetGroupVersionKind(gvk)
	return into
}

// withoutZeros drops zero values (0, false, "", empty lists and objects)
// from v: an unset optional field coming back as its zero value (nil -> &0)
// is what upstream's own fuzz tests accept; a value that changes or
// disappears is still a loss.
func withoutZeros(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range t {
			if e = withoutZeros(e); e != nil {
				out[k] = e
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		if len(t) == 0 {
			return nil
		}
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = withoutZeros(e)
		}
		return out
	case bool:
		if !t {
			return nil
		}
	case string:
		if t == "" {
			return nil
		}
	case int64:
		if t == 0 {
			return nil
		}
	case float64:
		if t == 0 {
			return nil
		}
	}
	return v
}

func specOf(t *testing.T, o client.Object) map[string]any {
	t.Helper()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := u["spec"].(map[string]any)
	return m
}
