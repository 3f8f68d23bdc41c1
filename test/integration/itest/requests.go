package itest

import (
	"maps"
	"net/http"
	"strings"
	"sync"

	"k8s.io/client-go/transport"
)

// RequestCounter counts the API server requests of each client of a test
// (the manager, the node agent) on the client's own transport (Wrap): the
// API server's metrics do not say who asked. A request is counted once it
// has its answer, whatever the answer (a conflict is a request too), and
// also by "verb resource" and by answer status, to see which writes repeat.
type RequestCounter struct {
	mu sync.Mutex
	// counts is by key: "client", "client verb resource" and
	// "client verb resource code" for answers other than 2xx.
	counts map[string]int64
}

// NewRequestCounter returns an empty counter.
func NewRequestCounter() *RequestCounter {
	return &RequestCounter{counts: map[string]int64{}}
}

// Wrap returns the transport wrapper that counts requests as those of
// client.
func (c *RequestCounter) Wrap(client string) transport.WrapperFunc {
	return func(rt http.RoundTripper) http.RoundTripper {
		return &countingTransport{c: c, client: client, next: rt}
	}
}

// Counts returns a copy of the counts, by the keys described at
// RequestCounter.
func (c *RequestCounter) Counts() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

func (c *RequestCounter) add(client, verb, resource string, code int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[client]++
	key := client + " " + verb + " " + resource
	c.counts[key]++
	if code != 0 && (code < 200 || code > 299) {
		c.counts[key+" "+http.StatusText(code)]++
	}
}

type countingTransport struct {
	c      *RequestCounter
	client string
	next   http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	code := 0
	if err == nil {
		code = resp.StatusCode
	}
	resource, named := requestResource(req.URL.Path)
	t.c.add(t.client, requestVerb(req, named), resource, code)
	return resp, err
}

// requestVerb is the API server's verb of req, roughly: a GET is a WATCH
// with the watch parameter, a LIST of a collection (named false) and a GET
// of one object.
func requestVerb(req *http.Request, named bool) string {
	if req.Method != http.MethodGet {
		return req.Method
	}
	switch {
	case req.URL.Query().Get("watch") == "true":
		return "WATCH"
	case !named:
		return "LIST"
	}
	return req.Method
}

// requestResource is the resource (and subresource) of an API path, and
// whether the path names one object:
// /api/v1/namespaces/ns/pods/p/status is "pods/status", named;
// /apis/g/v/nodes is "nodes", a collection. A path outside the resource
// APIs (/version) is itself, named.
func requestResource(path string) (string, bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return path, true
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	switch len(parts) {
	case 0:
		return "namespaces", false
	case 1:
		return parts[0], false
	case 2:
		return parts[0], true
	default:
		return parts[0] + "/" + parts[2], true
	}
}
