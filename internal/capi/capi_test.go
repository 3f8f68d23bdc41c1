package capi

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

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

func TestLabelValue(t *testing.T) {
	if got := LabelValue("pool"); got != "pool" {
		t.Errorf("got %q", got)
	}
	got := LabelValue(strings.Repeat("a", 100))
	if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
		t.Errorf("%q: %v", got, errs)
	}
}
