package itest

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mpool-dev/mpool/sim/core"
)

// FaultSpy is a manager's HTTP transport to a simulated cloud whose face
// answers some requests with faults: it counts the cloud API's requests,
// those answered (neither throttled nor failed) and those throttled, and
// records each request sent before a Retry-After the face answered had
// expired. The Azure and GCP fault tests read it.
type FaultSpy struct {
	// Next carries the requests.
	Next http.RoundTripper
	// API reports whether a request is one of the cloud API's (the others,
	// such as token requests, pass uncounted).
	API func(*http.Request) bool
	// Throttled reports whether an answer throttles (ARM's 429; Compute
	// Engine's 429 or 403 rateLimitExceeded, which carry Retry-After).
	Throttled func(*http.Response) bool

	mu                             sync.Mutex
	requests, succeeded, throttled int
	notBefore                      time.Time
	early                          []string
	// lastThrottled names the request whose answer set notBefore, and
	// when that answer arrived, for the Early messages.
	lastThrottled   string
	lastThrottledAt time.Time
}

// FaultCounts are what a FaultSpy saw.
type FaultCounts struct {
	// Requests, Succeeded and Throttled count the API's requests: all,
	// answered (not throttled, below 500), throttled.
	Requests, Succeeded, Throttled int
	// Early are the requests sent before a Retry-After expired.
	Early []string
}

// RoundTrip implements http.RoundTripper.
func (s *FaultSpy) RoundTrip(req *http.Request) (*http.Response, error) {
	if !s.API(req) {
		return s.Next.RoundTrip(req)
	}
	s.mu.Lock()
	s.requests++
	if now := time.Now(); now.Before(s.notBefore) {
		s.early = append(s.early, fmt.Sprintf("%s %s sent %s before Retry-After expired (%s was throttled %s before)",
			req.Method, req.URL.Path, s.notBefore.Sub(now).Round(time.Millisecond), s.lastThrottled, now.Sub(s.lastThrottledAt).Round(time.Millisecond)))
	}
	s.mu.Unlock()
	resp, err := s.Next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.Throttled(resp):
		s.throttled++
		if secs, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil {
			// A margin for the request in flight on another worker when
			// the answer arrived.
			now := time.Now()
			if until := now.Add(time.Duration(secs)*time.Second - 50*time.Millisecond); until.After(s.notBefore) {
				s.notBefore = until
				s.lastThrottled, s.lastThrottledAt = req.Method+" "+req.URL.Path, now
			}
		}
	case resp.StatusCode < 500:
		s.succeeded++
	}
	return resp, nil
}

// Counts returns what the spy saw so far.
func (s *FaultSpy) Counts() FaultCounts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return FaultCounts{Requests: s.requests, Succeeded: s.succeeded, Throttled: s.throttled, Early: append([]string(nil), s.early...)}
}

// Booting reports whether any of g's instances is not running yet.
func Booting(g *core.Group) bool {
	for _, in := range g.Instances {
		if in.State != core.StateRunning {
			return true
		}
	}
	return false
}
