package server

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mpool-dev/mpool/sim/core"
)

// A client whose request was cancelled while it dialed keeps the
// connection for later: the server sees a connection that has sent no
// request. Stop must not wait on it as on a request.
func TestStopDoesNotWaitOnAConnectionWithoutRequest(t *testing.T) {
	s := startServer(t, core.Options{})
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
}

func TestInflightNamesRequestsStillRunning(t *testing.T) {
	f := newInflight()
	if left := f.wait(0); left != nil {
		t.Fatalf("no request: wait returned %v", left)
	}
	a, _ := f.begin(request{method: "PUT", path: "/groups/a", start: time.Now().Add(-time.Second)})
	b, _ := f.begin(request{method: "GET", path: "/groups/b", start: time.Now()})
	left := f.wait(time.Millisecond)
	if len(left) != 2 || !strings.HasPrefix(left[0], "PUT /groups/a (running ") || !strings.HasPrefix(left[1], "GET /groups/b (running ") {
		t.Fatalf("two requests running: wait returned %q, want the PUT then the GET", left)
	}
	f.end(a)
	done := make(chan []string)
	go func() { done <- f.wait(time.Minute) }()
	f.end(b)
	if left := <-done; left != nil {
		t.Fatalf("the last request ended: wait returned %v", left)
	}
	f.stop()
	if _, ok := f.begin(request{method: "GET", path: "/groups/c", start: time.Now()}); ok {
		t.Error("a request after stop was let in")
	}
}
