package conversion

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestVersionMemoReadsEachKindOncePerTTL: the embedded control plane's
// webhook reads a kind's CRD once per ttl, not once per conversion; an
// error is not remembered, and a nil memo always reads.
func TestVersionMemoReadsEachKindOncePerTTL(t *testing.T) {
	now := time.Unix(1000, 0)
	m := newVersionMemo(10 * time.Second)
	m.now = func() time.Time { return now }
	reads := map[schema.GroupKind]int{}
	fail := false
	read := func(_ context.Context, gk schema.GroupKind) (string, error) {
		reads[gk]++
		if fail {
			return "", errors.New("API server unavailable")
		}
		return gk.Group + "/v1beta2", nil
	}
	a := schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "LocalMachinePool"}
	b := schema.GroupKind{Group: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfig"}
	ctx := context.Background()
	for range 100 {
		for _, gk := range []schema.GroupKind{a, b} {
			if v, err := m.get(ctx, gk, read); err != nil || v != gk.Group+"/v1beta2" {
				t.Fatalf("get(%s) = %q, %v", gk, v, err)
			}
		}
	}
	if reads[a] != 1 || reads[b] != 1 {
		t.Fatalf("100 conversions within the ttl read the CRDs %v times, want once each", reads)
	}
	now = now.Add(10 * time.Second)
	fail = true
	if _, err := m.get(ctx, a, read); err == nil {
		t.Fatal("after the ttl, a failed read was answered from the memo")
	}
	fail = false
	if _, err := m.get(ctx, a, read); err != nil || reads[a] != 3 {
		t.Fatalf("the failed read was remembered: %v, reads %d", err, reads[a])
	}
	var none *versionMemo
	for range 3 {
		if _, err := none.get(ctx, b, read); err != nil {
			t.Fatal(err)
		}
	}
	if reads[b] != 4 {
		t.Fatalf("a nil memo read %d times for 3 gets, want 3 more than 1", reads[b])
	}
}
