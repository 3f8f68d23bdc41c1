package infrapool

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/mpool-dev/mpool/api/infrastructure/v1beta1"
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

// TestPoolChanged: the engine's own writes to a pool (its status, its own
// annotations) wake it not; a new spec, an annotation it acts on, and the
// cache's resync (the --sync-period pass: no other event looks at the
// cloud of a pool at rest) do.
func TestPoolChanged(t *testing.T) {
	old := &infrav1.LocalMachinePool{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", ResourceVersion: "7", Generation: 2}}
	status := old.DeepCopy()
	status.ResourceVersion = "8"
	status.Status.Replicas = 3
	own := old.DeepCopy()
	own.ResourceVersion = "8"
	own.Annotations = map[string]string{AppliedSpecAnnotation: "abc"}
	spec := old.DeepCopy()
	spec.ResourceVersion, spec.Generation = "8", 3
	for _, c := range []struct {
		name string
		new  *infrav1.LocalMachinePool
		want bool
	}{
		{"resync", old.DeepCopy(), true},
		{"its status written", status, false},
		{"its own annotation written", own, false},
		{"spec changed", spec, true},
	} {
		if got := poolChanged(old, c.new); got != c.want {
			t.Errorf("%s: changed %v, want %v", c.name, got, c.want)
		}
	}
}
