package contract

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestGroupName(t *testing.T) {
	long := strings.Repeat("x", 300)
	for _, tc := range []struct {
		name      string
		namespace string
		pool      string
		maxLen    int
	}{
		{name: "simple", namespace: "default", pool: "pool-0", maxLen: 63},
		{name: "dots and capitals are replaced", namespace: "Team.A", pool: "My.Pool", maxLen: 63},
		{name: "long names are shortened", namespace: long, pool: long, maxLen: 63},
		{name: "short limit", namespace: "default", pool: "pool-0", maxLen: 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := GroupName(tc.namespace, tc.pool, tc.maxLen)
			if len(got) > tc.maxLen {
				t.Errorf("%q is longer than %d", got, tc.maxLen)
			}
			if errs := validation.IsDNS1123Label(got); len(errs) > 0 {
				t.Errorf("%q: %v", got, errs)
			}
			if again := GroupName(tc.namespace, tc.pool, tc.maxLen); again != got {
				t.Errorf("not predictable: %q then %q", got, again)
			}
		})
	}
	if GroupName("a-b", "c", 63) == GroupName("a", "b-c", 63) {
		t.Error("distinct pools share a group name")
	}
}

func TestInstanceObjectName(t *testing.T) {
	if got := InstanceObjectName("pool-0", "i-0000002a"); got != "pool-0-i-0000002a" {
		t.Errorf("got %q", got)
	}
	long := InstanceObjectName(strings.Repeat("p", 253), "i-1")
	if errs := validation.IsDNS1123Subdomain(long); len(errs) > 0 {
		t.Errorf("%q: %v", long, errs)
	}
	if long == InstanceObjectName(strings.Repeat("p", 253), "i-2") {
		t.Error("shortened names collide")
	}
}
