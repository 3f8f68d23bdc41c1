package kubeadmconfig

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// TestPoolChangedForConfig: of a MachinePool's updates, its KubeadmConfig
// is reconciled for those that change what it reads (spec, joining,
// metadata), not for the other status writes of a pool that scales.
func TestPoolChangedForConfig(t *testing.T) {
	base := func() *clusterv1.MachinePool {
		mp := &clusterv1.MachinePool{
			ObjectMeta: metav1.ObjectMeta{Name: "mp", Generation: 1},
			Spec:       clusterv1.MachinePoolSpec{Replicas: ptr.To[int32](2)},
		}
		mp.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
		mp.Status.NodeRefs = []corev1.ObjectReference{{Name: "n1"}}
		return mp
	}
	tests := []struct {
		name   string
		change func(*clusterv1.MachinePool)
		want   bool
	}{
		{"ready replicas, still joining", func(mp *clusterv1.MachinePool) { mp.Status.ReadyReplicas = ptr.To[int32](1) }, false},
		{"phase", func(mp *clusterv1.MachinePool) { mp.Status.Phase = "Running" }, false},
		{"the last Node joined", func(mp *clusterv1.MachinePool) {
			mp.Status.NodeRefs = append(mp.Status.NodeRefs, corev1.ObjectReference{Name: "n2"})
		}, true},
		{"providerIDList", func(mp *clusterv1.MachinePool) {
			mp.Generation++
			mp.Spec.ProviderIDList = []string{"local:///a"}
		}, false},
		{"version", func(mp *clusterv1.MachinePool) { mp.Spec.Template.Spec.Version = "v1.31.0" }, true},
		{"replicas", func(mp *clusterv1.MachinePool) { mp.Spec.Replicas = ptr.To[int32](3) }, true},
		{"paused", func(mp *clusterv1.MachinePool) { mp.Annotations = map[string]string{clusterv1.PausedAnnotation: ""} }, true},
		{"deleted", func(mp *clusterv1.MachinePool) { mp.DeletionTimestamp = ptr.To(metav1.Now()) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, n := base(), base()
			tt.change(n)
			if got := poolChangedForConfig(o, n); got != tt.want {
				t.Fatalf("poolChangedForConfig = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestClusterChangedForConfig: the configs of a Cluster's pools are
// reconciled for its spec, metadata and readiness, not its other status.
func TestClusterChangedForConfig(t *testing.T) {
	tests := []struct {
		name   string
		change func(*clusterv1.Cluster)
		want   bool
	}{
		{"a condition", func(c *clusterv1.Cluster) {
			c.Status.Conditions = []metav1.Condition{{Type: "Available", Status: metav1.ConditionTrue}}
		}, false},
		{"phase", func(c *clusterv1.Cluster) { c.Status.Phase = "Provisioned" }, false},
		{"paused", func(c *clusterv1.Cluster) { c.Spec.Paused = ptr.To(true) }, true},
		{"endpoint", func(c *clusterv1.Cluster) { c.Spec.ControlPlaneEndpoint.Host = "10.0.0.1" }, true},
		{"control plane initialized", func(c *clusterv1.Cluster) { c.Status.Initialization.ControlPlaneInitialized = ptr.To(true) }, true},
		{"annotation", func(c *clusterv1.Cluster) { c.Annotations = map[string]string{"a": "b"} }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, n := &clusterv1.Cluster{}, &clusterv1.Cluster{}
			tt.change(n)
			if got := clusterChangedForConfig(o, n); got != tt.want {
				t.Fatalf("clusterChangedForConfig = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestTokenCheckStillHolds: a config's last look at its tokens answers
// until it is a check interval old, the data carries another token, the
// pool starts or stops joining, or the token needs extending or rotating.
func TestTokenCheckStillHolds(t *testing.T) {
	ttl := 15 * time.Minute
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	c := tokenCheck{name: "bootstrap-token-abc", expiration: at.Add(ttl), at: at, joining: false}
	tests := []struct {
		name    string
		current string
		now     time.Time
		joining bool
		want    bool
	}{
		{"just looked", "bootstrap-token-abc", at.Add(time.Second), false, true},
		{"another token", "bootstrap-token-def", at.Add(time.Second), false, false},
		{"the pool started joining", "bootstrap-token-abc", at.Add(time.Second), true, false},
		{"a check interval later", "bootstrap-token-abc", at.Add(tokenCheckInterval(ttl)), false, false},
		{"the clock went back", "bootstrap-token-abc", at.Add(-time.Second), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wait, got := c.stillHolds(tt.current, tt.now, ttl, tt.joining)
			if got != tt.want {
				t.Fatalf("stillHolds = %v, want %v", got, tt.want)
			}
			if got && (wait <= 0 || wait > tokenCheckInterval(ttl)) {
				t.Fatalf("next look in %s", wait)
			}
		})
	}
	// Joining, a token is extended once a sixth of its life is gone: the
	// look answers no longer, however recent.
	j := tokenCheck{name: "bootstrap-token-abc", expiration: at.Add(ttl), at: at, joining: true}
	if _, ok := j.stillHolds("bootstrap-token-abc", at.Add(ttl/6+time.Second), ttl, true); ok {
		t.Fatal("a token due for extension must be looked at")
	}
	if _, ok := j.stillHolds("bootstrap-token-abc", at.Add(time.Second), ttl, true); !ok {
		t.Fatal("a fresh token of a joining pool needs no look")
	}
	// A pool that stopped joining keeps its token: the look taken while it
	// joined left no other token to delete.
	if _, ok := j.stillHolds("bootstrap-token-abc", at.Add(time.Second), ttl, false); !ok {
		t.Fatal("a pool that stopped joining needs no look")
	}
}

// TestConfigTouch: a config's spec or annotations changing makes its next
// reconcile look at its tokens again; its status changing does not.
func TestConfigTouch(t *testing.T) {
	cfg := &bootstrapv1.KubeadmConfig{ObjectMeta: metav1.ObjectMeta{Generation: 1, Annotations: map[string]string{"a": "1"}}}
	before := configTouch(cfg)
	cfg.Status.Initialization.DataSecretCreated = ptr.To(true)
	if configTouch(cfg) != before {
		t.Fatal("a status change touched the config")
	}
	cfg.Annotations["test.mpool.dev/poke"] = "1"
	if configTouch(cfg) == before {
		t.Fatal("an annotation did not touch the config")
	}
	touched := configTouch(cfg)
	cfg.Generation = 2
	if configTouch(cfg) == touched {
		t.Fatal("a spec change did not touch the config")
	}
}
