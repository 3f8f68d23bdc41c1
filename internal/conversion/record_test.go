package conversion

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1beta1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta1"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	conversionutil "sigs.k8s.io/cluster-api/util/conversion"

	mpoolscheme "github.com/mpool-dev/mpool/internal/scheme"
)

// wholeObjectSpecJSON is specJSON as it was first written: the whole object
// encoded, decoded and encoded again, and its spec taken from that. The
// hashes of specs kept on stored objects (SpokeSpecAnnotation) were taken
// with it, so specJSON must give the same bytes.
func wholeObjectSpecJSON(obj runtime.Object) ([]byte, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	fresh := newLike(obj.(client.Object))
	if err := json.Unmarshal(b, fresh); err != nil {
		return nil, err
	}
	if b, err = json.Marshal(fresh); err != nil {
		return nil, err
	}
	var u struct {
		Spec any `json:"spec"`
	}
	if err := json.Unmarshal(b, &u); err != nil {
		return nil, err
	}
	if u.Spec == nil {
		return nil, nil
	}
	return json.Marshal(u.Spec)
}

// TestSpecJSONIsTheWholeObjectsSpec: encoding the spec alone gives the
// bytes the whole object's encoding gives its spec, for random objects of
// every converted kind in both versions, and for empty ones.
func TestSpecJSONIsTheWholeObjectsSpec(t *testing.T) {
	s, err := mpoolscheme.New()
	if err != nil {
		t.Fatal(err)
	}
	f := conversionutil.GetFuzzer(s, validInputs)
	for _, o := range []client.Object{
		&clusterv1.Cluster{}, &clusterv1.Machine{}, &clusterv1.MachinePool{}, &clusterv1.MachineHealthCheck{},
		&bootstrapv1.KubeadmConfig{}, &bootstrapv1.KubeadmConfigTemplate{},
		&clusterv1beta1.Cluster{}, &clusterv1beta1.Machine{}, &clusterv1beta1.MachinePool{},
		&bootstrapv1beta1.KubeadmConfig{}, &bootstrapv1beta1.KubeadmConfigTemplate{},
	} {
		for i := range 100 {
			obj := newLike(o)
			if i > 0 {
				obj = fill(f, obj)
			}
			want, err := wholeObjectSpecJSON(obj)
			if err != nil {
				t.Fatalf("%T: %v", o, err)
			}
			_, got, err := specJSON(obj)
			if err != nil {
				t.Fatalf("%T: specJSON: %v", o, err)
			}
			if string(got) != string(want) {
				t.Fatalf("%T (round %d): specJSON = %s, the whole object's spec = %s", o, i, got, want)
			}
		}
	}
}
