package lastwrite

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

func node(rv, label string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", UID: "u", ResourceVersion: rv, Labels: map[string]string{"l": label}}}
}

func TestLatestStandsForTheCacheUntilItCatchesUp(t *testing.T) {
	var m Memo
	key := Key{UID: "u", Part: "status"}
	if got := m.Latest(key, "1"); got != nil {
		t.Fatalf("nothing written, got %v", got)
	}
	m.Wrote(key, "1", node("2", "a"))
	got, ok := m.Latest(key, "1").(*corev1.Node)
	if !ok || got.ResourceVersion != "2" || got.Labels["l"] != "a" {
		t.Fatalf("cache at 1, behind the write: got %v, want the answer at 2", got)
	}
	got.Labels["l"] = "changed"
	if again := m.Latest(key, "1").(*corev1.Node); again.Labels["l"] != "a" {
		t.Fatal("Latest returned the Memo's own copy")
	}
	// A second write from the answer: the cache may still be at 1 or at 2.
	m.Wrote(key, "2", node("3", "b"))
	for _, rv := range []string{"1", "2"} {
		if got := m.Latest(key, rv); got == nil || got.GetResourceVersion() != "3" {
			t.Fatalf("cache at %s: got %v, want the answer at 3", rv, got)
		}
	}
	// The cache caught up: the record is forgotten.
	if got := m.Latest(key, "3"); got != nil {
		t.Fatalf("cache at 3: got %v, want nil", got)
	}
	if got := m.Latest(key, "1"); got != nil || m.Len() != 0 {
		t.Fatalf("after the cache caught up: got %v and %d records, want none", got, m.Len())
	}
}

func TestSomeoneElsesWriteForgetsTheRecord(t *testing.T) {
	var m Memo
	key := Key{UID: "u", Part: "status"}
	m.Wrote(key, "1", node("2", "a"))
	if got := m.Latest(key, "7"); got != nil {
		t.Fatalf("cache at a version the Memo does not know: got %v, want nil", got)
	}
	if m.Len() != 0 {
		t.Fatal("the record was kept")
	}
}

func TestARecordExpires(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Now())
	m := Memo{TTL: time.Second, Clock: clk}
	key := Key{UID: "u", Part: "create"}
	m.Wrote(key, "", node("1", "a"))
	if m.Latest(key, "") == nil {
		t.Fatal("a fresh create is not remembered")
	}
	clk.SetTime(clk.Now().Add(time.Second))
	if m.Latest(key, "") != nil {
		t.Fatal("a record older than the TTL is trusted")
	}
}

func TestPendingUntilTheCacheCatchesUp(t *testing.T) {
	var m Memo
	create := Key{UID: "u", Part: "create"}
	if m.Pending(create, "") {
		t.Fatal("nothing written, but pending")
	}
	m.Wrote(create, "", node("1", "a"))
	if !m.Pending(create, "") {
		t.Fatal("a create the cache has not shown is not pending")
	}
	release := Key{UID: "u", Part: "release"}
	m.Wrote(release, "1", node("1", "a"))
	if !m.Pending(release, "1") {
		t.Fatal("cache still at the released copy: not pending")
	}
	if m.Pending(release, "2") || m.Pending(release, "1") {
		t.Fatal("the cache moved on: still pending")
	}
}
