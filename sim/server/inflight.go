package server

import (
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"
)

// inflight tracks the requests being served, so that Stop can tell a
// request still running from a connection that has sent none: a client
// whose request was cancelled while it dialed keeps the connection for a
// later request, and http.Server.Shutdown waits up to 5 s on such a
// connection before it counts it idle.
type inflight struct {
	mu   sync.Mutex
	next uint64
	reqs map[uint64]request
	// idle is closed while no request is being served.
	idle chan struct{}
	// stopping is set once the server stops: a request that comes after
	// is answered 503 and not served.
	stopping bool
}

// request is one request being served.
type request struct {
	method, path string
	start        time.Time
}

func newInflight() *inflight {
	idle := make(chan struct{})
	close(idle)
	return &inflight{reqs: map[uint64]request{}, idle: idle}
}

// wrap counts h's requests while they are served.
func (f *inflight) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := f.begin(request{method: r.Method, path: r.URL.Path, start: time.Now()})
		if !ok {
			http.Error(w, "the simulated cloud is stopping", http.StatusServiceUnavailable)
			return
		}
		defer f.end(id)
		h.ServeHTTP(w, r)
	})
}

// stop refuses the requests that come from now on.
func (f *inflight) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopping = true
}

// begin records r, or reports false once the server is stopping.
func (f *inflight) begin(r request) (uint64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopping {
		return 0, false
	}
	if len(f.reqs) == 0 {
		f.idle = make(chan struct{})
	}
	f.next++
	f.reqs[f.next] = r
	return f.next, true
}

func (f *inflight) end(id uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.reqs, id)
	if len(f.reqs) == 0 {
		close(f.idle)
	}
}

// wait waits up to d for every request to end and returns those still
// being served then, oldest first, as "GET /path (running 7.1s)".
func (f *inflight) wait(d time.Duration) []string {
	f.mu.Lock()
	idle := f.idle
	f.mu.Unlock()
	select {
	case <-idle:
		return nil
	default:
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-idle:
		return nil
	case <-t.C:
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	left := make([]request, 0, len(f.reqs))
	for _, r := range f.reqs {
		left = append(left, r)
	}
	sort.Slice(left, func(i, j int) bool { return left[i].start.Before(left[j].start) })
	out := make([]string, len(left))
	for i, r := range left {
		out[i] = fmt.Sprintf("%s %s (running %s)", r.method, r.path, time.Since(r.start).Round(100*time.Millisecond))
	}
	return out
}
