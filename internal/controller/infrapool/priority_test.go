package infrapool

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestWorkAnnotation(t *testing.T) {
	for key, want := range map[string]bool{
		"mpool.dev/rollout-strategy":          true,
		"cluster.x-k8s.io/paused":             true,
		"machinepool.cluster.x-k8s.io/x":      true,
		"test.mpool.dev/poke":                 false,
		"conversion.mpool.dev/unconverted":    false,
		"kubectl.kubernetes.io/last-applied":  false,
		"example.com/owner":                   false,
		"no-domain":                           false,
		"notcluster.x-k8s.io.example.com/key": false,
	} {
		if got := workAnnotation(key); got != want {
			t.Errorf("workAnnotation(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestWorkAnnotationsChanged(t *testing.T) {
	obj := func(a map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Annotations: a}}
	}
	base := map[string]string{"mpool.dev/rollout-strategy": "BlueGreen", AppliedSpecAnnotation: "h1"}
	for _, tc := range []struct {
		name string
		next map[string]string
		want bool
	}{
		{"a foreign annotation added", map[string]string{"mpool.dev/rollout-strategy": "BlueGreen", AppliedSpecAnnotation: "h1", "test.mpool.dev/poke": "1"}, false},
		{"the engine's own changed", map[string]string{"mpool.dev/rollout-strategy": "BlueGreen", AppliedSpecAnnotation: "h2"}, false},
		{"a rollout setting changed", map[string]string{"mpool.dev/rollout-strategy": "RollingUpdate", AppliedSpecAnnotation: "h1"}, true},
		{"a rollout setting removed", map[string]string{AppliedSpecAnnotation: "h1"}, true},
	} {
		if got := workAnnotationsChanged(obj(base), obj(tc.next), poolOwnAnnotations...); got != tc.want {
			t.Errorf("%s: workAnnotationsChanged = %v, want %v", tc.name, got, tc.want)
		}
	}
}
