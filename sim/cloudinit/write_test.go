package cloudinit

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestWriteJoinReadsBack: what WriteJoin writes, ReadJoin reads as it was
// given, for both kubeadm API versions, the node named after the instance.
func TestWriteJoinReadsBack(t *testing.T) {
	for _, v := range []string{KubeadmV1Beta3, KubeadmV1Beta4} {
		t.Run(v, func(t *testing.T) {
			in := JoinConfig{
				APIVersion:        v,
				APIServerEndpoint: "10.0.0.1:6443",
				DiscoveryToken:    "abcdef.0123456789abcdef",
				CACertHashes:      []string{"sha256:00ff"},
				Taints:            []corev1.Taint{{Key: "dedicated", Value: "sim", Effect: corev1.TaintEffectNoSchedule}},
				KubeletExtraArgs:  map[string]string{"max-pods": "30"},
				NodeLabels:        map[string]string{"pool": "blue", "tier": "web"},
			}
			data := WriteJoin(in, true)
			if !strings.Contains(string(data), "bootstrap-success.complete") {
				t.Errorf("no bootstrap sentinel in\n%s", data)
			}
			got, err := ReadJoin(data, Metadata{LocalHostname: "ip-10-0-0-7"})
			if err != nil {
				t.Fatalf("ReadJoin: %v\n%s", err, data)
			}
			want := in
			want.NodeName = "ip-10-0-0-7"
			want.TLSBootstrapToken = in.DiscoveryToken
			want.KubeletExtraArgs = map[string]string{"max-pods": "30", "node-labels": "pool=blue,tier=web"}
			if !reflect.DeepEqual(*got, want) {
				t.Fatalf("read back\n%+v\nwant\n%+v\nfrom\n%s", *got, want, data)
			}
		})
	}
	if strings.Contains(string(WriteJoin(JoinConfig{APIServerEndpoint: "h:1", DiscoveryToken: "t"}, false)), "bootstrap-success") {
		t.Error("a sentinel written when not asked for")
	}
}
