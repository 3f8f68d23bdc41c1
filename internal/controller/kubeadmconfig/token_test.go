package kubeadmconfig

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

func TestDecideTokenAction(t *testing.T) {
	const ttl = 15 * time.Minute
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		why       string
		remaining time.Duration
		joining   bool
		want      tokenAction
	}{
		{name: "fresh, joining", why: "a just-created token needs nothing", remaining: ttl, joining: true, want: tokenKeep},
		{name: "5/6 left, joining", why: "exactly at the threshold is still fine", remaining: ttl * 5 / 6, joining: true, want: tokenKeep},
		{name: "under 5/6, joining", why: "extended early enough for two more looks", remaining: ttl*5/6 - time.Second, joining: true, want: tokenExtend},
		{name: "expired, joining", why: "an expired token of a joining pool is brought back", remaining: -time.Hour, joining: true, want: tokenExtend},
		{name: "under 5/6, joined", why: "a joined pool's token is not extended", remaining: ttl * 2 / 3, joining: false, want: tokenKeep},
		{name: "half left, joined", why: "exactly at the threshold is still fine", remaining: ttl / 2, joining: false, want: tokenKeep},
		{name: "under half, joined", why: "rotated while it still has TTL/2 to live", remaining: ttl/2 - time.Second, joining: false, want: tokenRotate},
		{name: "expired, joined", why: "an expired token of a joined pool is rotated", remaining: -time.Minute, joining: false, want: tokenRotate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := decideTokenAction(now, now.Add(tt.remaining), ttl, tt.joining); got != tt.want {
				t.Errorf("decideTokenAction = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestPoolJoining(t *testing.T) {
	node := corev1.ObjectReference{Kind: "Node", Name: "n"}
	tests := []struct {
		name string
		pool clusterv1.MachinePool
		want bool
	}{
		{name: "new pool", pool: clusterv1.MachinePool{}, want: true},
		{name: "infrastructure not ready", pool: clusterv1.MachinePool{Status: clusterv1.MachinePoolStatus{NodeRefs: []corev1.ObjectReference{node}}}, want: true},
		{name: "replicas default to one", pool: clusterv1.MachinePool{Status: clusterv1.MachinePoolStatus{Initialization: clusterv1.MachinePoolInitializationStatus{InfrastructureProvisioned: ptr.To(true)}, NodeRefs: []corev1.ObjectReference{node}}}, want: false},
		{name: "scaling up", pool: clusterv1.MachinePool{Spec: clusterv1.MachinePoolSpec{Replicas: ptr.To[int32](3)}, Status: clusterv1.MachinePoolStatus{Initialization: clusterv1.MachinePoolInitializationStatus{InfrastructureProvisioned: ptr.To(true)}, NodeRefs: []corev1.ObjectReference{node}}}, want: true},
		{name: "scaling down", pool: clusterv1.MachinePool{Spec: clusterv1.MachinePoolSpec{Replicas: ptr.To[int32](0)}, Status: clusterv1.MachinePoolStatus{Initialization: clusterv1.MachinePoolInitializationStatus{InfrastructureProvisioned: ptr.To(true)}, NodeRefs: []corev1.ObjectReference{node}}}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := poolJoining(&tt.pool); got != tt.want {
				t.Errorf("poolJoining = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSwapToken(t *testing.T) {
	const newToken = "zyxwvu.fedcba9876543210"
	tests := []struct {
		name   string
		why    string
		data   string
		old    string
		want   string
		wantOK bool
	}{
		{name: "swapped", why: "the usual rotation", data: "token: abcdef.0123456789abcdef\nx", old: "bootstrap-token-abcdef", want: "token: " + newToken + "\nx", wantOK: true},
		{name: "at the edges", why: "a token at the start or end of the data", data: "abcdef.0123456789abcdef", old: "bootstrap-token-abcdef", want: newToken, wantOK: true},
		{name: "other token untouched", why: "a user's own token-like string with another id stays", data: "abcdef.0123456789abcdef qqqqqq.0123456789abcdef", old: "bootstrap-token-abcdef", want: newToken + " qqqqqq.0123456789abcdef", wantOK: true},
		{name: "not present", why: "data without the annotated token must be rendered again", data: "token: qqqqqq.0123456789abcdef", old: "bootstrap-token-abcdef", wantOK: false},
		{name: "bad name", why: "an annotation that is not a token Secret name", data: "abcdef.0123456789abcdef", old: "bootstrap-token-", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := swapToken([]byte(tt.data), tt.old, newToken)
			if ok != tt.wantOK || (ok && string(got) != tt.want) {
				t.Errorf("swapToken = %q, %v; want %q, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestCarriedToken(t *testing.T) {
	tests := []struct {
		name   string
		why    string
		data   string
		secret string
		want   string
		wantOK bool
	}{
		{name: "plain", why: "the token as the JoinConfiguration carries it", data: "token: abcdef.0123456789abcdef\n", secret: "bootstrap-token-abcdef", want: "abcdef.0123456789abcdef", wantOK: true},
		{name: "quoted", why: "YAML quotes a token that reads as a number", data: "token: \"123456.1234567890123456\"\n", secret: "bootstrap-token-123456", want: "123456.1234567890123456", wantOK: true},
		{name: "other id", why: "only the annotated token is kept", data: "token: qqqqqq.0123456789abcdef\n", secret: "bootstrap-token-abcdef", wantOK: false},
		{name: "inside a word", why: "a longer alphanumeric run is not the token", data: "xabcdef.0123456789abcdef", secret: "bootstrap-token-abcdef", wantOK: false},
		{name: "not a token Secret", why: "an annotation that names no token Secret", data: "abcdef.0123456789abcdef", secret: "abcdef", wantOK: false},
		{name: "invalid id", why: "the id is matched literally, never as a pattern", data: "a.c.ef.0123456789abcdef", secret: "bootstrap-token-a.c.ef", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := carriedToken([]byte(tt.data), tt.secret)
			if ok != tt.wantOK || got != tt.want {
				t.Errorf("carriedToken = %q, %v; want %q, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
