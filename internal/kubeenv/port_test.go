package kubeenv

import (
	"net"
	"strconv"
	"testing"
)

// TestFreePortAvoidsTheEphemeralRange: the ports handed to child processes
// are bindable, never handed out twice, and below the range the kernel
// gives outgoing connections, so no connection can take one first.
func TestFreePortAvoidsTheEphemeralRange(t *testing.T) {
	lo, hi := portRange()
	seen := map[int]bool{}
	for range 50 {
		p, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if p < lo || p >= hi {
			t.Fatalf("port %d outside [%d, %d)", p, lo, hi)
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Fatalf("port %d is not bindable: %v", p, err)
		}
		_ = l.Close()
	}
}
