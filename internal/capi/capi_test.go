package capi

import (
	"testing"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

func TestNodeUninitializedTaintKeyIsUpstreams(t *testing.T) {
	if NodeUninitializedTaintKey != clusterv1.NodeUninitializedTaint.Key {
		t.Fatalf("NodeUninitializedTaintKey %q, upstream's taint key %q", NodeUninitializedTaintKey, clusterv1.NodeUninitializedTaint.Key)
	}
}

func TestLatestVersion(t *testing.T) {
	for in, want := range map[string]string{"": "", "v1beta1": "v1beta1", "v1alpha3_v1beta1": "v1beta1", "v1beta2_v1beta1_v1alpha4": "v1beta2", "v1_v1beta1": "v1"} {
		if got := latestVersion(in); got != want {
			t.Errorf("latestVersion(%q) = %q, want %q", in, got, want)
		}
	}
}
