package infrapool

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestBootstrapDataChanged: an update of a bootstrap data Secret wakes its
// pools when the data with its tokens masked changes, or the Secret goes;
// a rotated token alone, or a change of anything but the data, does not.
func TestBootstrapDataChanged(t *testing.T) {
	data := func(token, version string) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "mp-0", Namespace: "ns", Annotations: map[string]string{"token": token}},
			Data: map[string][]byte{
				BootstrapDataKey: []byte("#cloud-config\nwrite_files:\n- path: /run/kubeadm/kubeadm-join-config.yaml\n  content: |\n" +
					"    discovery:\n      bootstrapToken:\n        token: " + token + "\n    nodeRegistration:\n      kubeletExtraArgs: {}\n" +
					"runcmd:\n- kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml # " + version + "\n"),
				"format": []byte("cloud-config"),
			},
		}
	}
	old := data("abcdef.0123456789abcdef", "v1.37.1")
	gone := old.DeepCopy()
	gone.DeletionTimestamp = &metav1.Time{}
	emptied := old.DeepCopy()
	delete(emptied.Data, BootstrapDataKey)
	for _, c := range []struct {
		name string
		new  *corev1.Secret
		want bool
	}{
		{"unchanged", old.DeepCopy(), false},
		{"token rotated", data("ghijkl.0123456789ghijkl", "v1.37.1"), false},
		{"content changed", data("abcdef.0123456789abcdef", "v1.37.2"), true},
		{"content changed and token rotated", data("ghijkl.0123456789ghijkl", "v1.37.2"), true},
		{"data removed", emptied, true},
		{"being deleted", gone, true},
	} {
		if got := bootstrapDataChanged(old, c.new); got != c.want {
			t.Errorf("%s: changed %v, want %v", c.name, got, c.want)
		}
	}
}
