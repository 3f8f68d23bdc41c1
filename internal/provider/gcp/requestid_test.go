package gcp_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mpool-dev/mpool/internal/scalegroup"
	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/face/gcpface"
)

// twice is a transport that sends every Compute Engine write twice, as a
// client whose first answer was lost and that retried, and records each
// write's requestId and the operations the two answers name.
type twice struct {
	next http.RoundTripper

	mu     sync.Mutex
	writes []sentTwice
}

type sentTwice struct {
	action, requestID string
	ops               [2]string
}

func (s *twice) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet || !strings.Contains(req.URL.Path, "/instanceGroupManagers") || strings.HasSuffix(req.URL.Path, "/listManagedInstances") {
		return s.next.RoundTrip(req)
	}
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
	}
	w := sentTwice{action: req.Method + " " + req.URL.Path[strings.LastIndexByte(req.URL.Path, '/')+1:], requestID: req.URL.Query().Get("requestId")}
	var resp *http.Response
	for i := range 2 {
		r := req.Clone(req.Context())
		r.Body = io.NopCloser(bytes.NewReader(body))
		var err error
		if resp, err = s.next.RoundTrip(r); err != nil {
			return nil, err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(b))
		var op struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(b, &op)
		w.ops[i] = op.Name
	}
	s.mu.Lock()
	s.writes = append(s.writes, w)
	s.mu.Unlock()
	return resp, nil
}

// TestWritesCarryRequestIDs: every write to a group (insert, resize,
// setInstanceTemplate, deleteInstances) carries a requestId, and the same
// write sent again with it is answered with the first one's operation, not
// performed again; the same write decided again on a changed group (scale
// 2→3→2→3) is a new request, which the simulated Compute Engine performs.
func TestWritesCarryRequestIDs(t *testing.T) {
	spy := &twice{}
	e := startGCP(t, nil, func(next http.RoundTripper) http.RoundTripper { spy.next = next; return spy })
	r := ref("rid0")
	e.Apply(t, r, spec(2, "aaaa", "x"))
	e.Settle(t, r)
	for _, n := range []int32{3, 2, 3} {
		e.Apply(t, r, spec(n, "aaaa", "x"))
		e.Settle(t, r)
	}
	e.Apply(t, r, spec(3, "bbbb", "x"))
	g := e.Settle(t, r)
	if err := e.SG.DeleteInstances(t.Context(), r, []string{g.Instances[0].ID}); err != nil {
		t.Fatal(err)
	}
	g = e.Settle(t, r)
	if g.Capacity != 2 || len(g.Instances) != 2 {
		t.Errorf("after the writes sent twice: capacity %d, instances %v", g.Capacity, g.Instances)
	}

	seen := map[string]bool{}
	actions := map[string]int{}
	for _, w := range spy.writes {
		actions[w.action]++
		if w.requestID == "" {
			t.Errorf("%s carried no requestId", w.action)
			continue
		}
		if seen[w.requestID] {
			t.Errorf("%s reused requestId %s of an earlier write", w.action, w.requestID)
		}
		seen[w.requestID] = true
		if w.ops[0] == "" || w.ops[0] != w.ops[1] {
			t.Errorf("%s sent twice with requestId %s: operations %q and %q, want the first one twice", w.action, w.requestID, w.ops[0], w.ops[1])
		}
	}
	for _, a := range []string{"POST instanceGroupManagers", "POST resize", "POST setInstanceTemplate", "POST deleteInstances"} {
		if actions[a] == 0 {
			t.Errorf("no %s among the writes %v", a, actions)
		}
	}
	if actions["POST resize"] != 3 {
		t.Errorf("%d resizes, want 3 (2→3→2→3)", actions["POST resize"])
	}
}

// TestRepeatedRequestIDIsNotPerformed: the simulated Compute Engine
// answers a write whose requestId it has seen with the first write's
// operation and does not perform it, even when its body differs (as
// Compute Engine ignores a repeated request).
func TestRepeatedRequestIDIsNotPerformed(t *testing.T) {
	var (
		mu   sync.Mutex
		last *http.Request
	)
	rewrite := roundTripper(func(next http.RoundTripper, req *http.Request) (*http.Response, error) {
		if strings.HasSuffix(req.URL.Path, "/resize") {
			mu.Lock()
			if last != nil {
				// Send the second resize with the first one's requestId.
				q := req.URL.Query()
				q.Set("requestId", last.URL.Query().Get("requestId"))
				req = req.Clone(req.Context())
				req.URL.RawQuery = q.Encode()
			} else {
				last = req
			}
			mu.Unlock()
		}
		return next.RoundTrip(req)
	})
	e := startGCP(t, nil, rewrite.wrap)
	r := ref("rid1")
	e.Apply(t, r, spec(1, "aaaa", "x"))
	e.Settle(t, r)
	e.Apply(t, r, spec(2, "aaaa", "x"))
	e.Settle(t, r)
	e.Apply(t, r, spec(4, "aaaa", "x"))
	if g := e.CloudGroup(t, groupKey(r)); g.Capacity != 2 {
		t.Fatalf("a resize to 4 with the requestId of the resize to 2 left the group at %d, want 2", g.Capacity)
	}
}

// roundTripper is a transport wrapper as a function of the next transport
// and the request.
type roundTripper func(next http.RoundTripper, req *http.Request) (*http.Response, error)

func (f roundTripper) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) { return f(next, req) })
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func groupKey(r scalegroup.Ref) core.GroupKey {
	return core.GroupKey{Face: gcpface.GCPFaceName, Scope: gcpface.GCPScope(r.Scope, r.Location), Name: r.Name}
}
