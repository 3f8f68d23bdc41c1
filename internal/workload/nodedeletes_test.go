package workload

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestNodeDeletesSkipsARepeat: a Node deleted a moment ago is not deleted
// again until the TTL passes; a failed delete is not remembered; a Node of
// the same name with another UID (registered again) is deleted.
func TestNodeDeletesSkipsARepeat(t *testing.T) {
	now := time.Unix(1000, 0)
	d := NewNodeDeletes(time.Minute)
	d.now = func() time.Time { return now }
	calls := 0
	del := func(err error) func() error { return func() error { calls++; return err } }
	node := func(uid string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: types.UID(uid)}}
	}

	if err := d.Delete(node("a"), del(errors.New("refused"))); err == nil {
		t.Fatal("a failed delete returned no error")
	}
	for range 2 {
		if err := d.Delete(node("a"), del(nil)); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 2 {
		t.Errorf("%d deletes of Node a, want 2: the failed one, then one (the repeat is skipped)", calls)
	}
	if err := d.Delete(node("b"), del(nil)); err != nil || calls != 3 {
		t.Errorf("the Node registered again (another UID) was not deleted: %d deletes, err %v", calls, err)
	}
	now = now.Add(time.Minute)
	if err := d.Delete(node("a"), del(nil)); err != nil || calls != 4 {
		t.Errorf("after the TTL the delete was not sent again: %d deletes, err %v", calls, err)
	}
	var none *NodeDeletes
	if err := none.Delete(node("a"), del(nil)); err != nil || calls != 5 {
		t.Errorf("a nil memo skipped the delete: %d deletes, err %v", calls, err)
	}
}
