package workload

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestClusterOfKubeconfigSecret(t *testing.T) {
	tests := []struct {
		name, secret string
		want         types.NamespacedName
		ok           bool
	}{
		{name: "a kubeconfig Secret", secret: KubeconfigSecretName("c1"), want: types.NamespacedName{Namespace: "ns", Name: "c1"}, ok: true},
		{name: "the suffix alone", secret: "-kubeconfig"},
		{name: "another Secret", secret: "c1-ca"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: tt.secret}}
			got, ok := ClusterOfKubeconfigSecret(s)
			if got != tt.want || ok != tt.ok || IsKubeconfigSecret(s) != tt.ok {
				t.Errorf("ClusterOfKubeconfigSecret(%q) = %v, %v; want %v, %v", tt.secret, got, ok, tt.want, tt.ok)
			}
		})
	}
}
