package core

import (
	"net/http"
	"strconv"
	"time"
)

// WrapOps returns the operations of ops, each wrapped by Wrap under its
// name, with inner (when not nil) inside Wrap: what every request of the
// face goes through once it is counted and not faulted (a signature
// check). Several maps are merged, a later one's operation replacing an
// earlier one's of the same name.
func (env FaceEnv) WrapOps(inner func(http.HandlerFunc) http.HandlerFunc, ops ...map[string]http.HandlerFunc) map[string]http.HandlerFunc {
	out := map[string]http.HandlerFunc{}
	for _, m := range ops {
		for op, fn := range m {
			if inner != nil {
				fn = inner(fn)
			}
			out[op] = env.Wrap(op, fn)
		}
	}
	return out
}

// Router is a face's HTTP handler that serves each request with the
// operation Route names. A request Route names no operation of (Route
// returns "" or a name not in Ops) is the face's Unknown operation,
// counted and faulted like the others, unless IsAPI says it is not one of
// the API's: then NotServed answers it, uncounted, in the shape of what
// else the face serves there (a token server beside the API, whose
// clients read errors of their own shape).
type Router struct {
	// Ops are the face's operations by name, as WrapOps returns them;
	// Unknown must be one of them.
	Ops map[string]http.HandlerFunc
	// Route names the operation of a request, "" for none; it may set the
	// request's path values the operations read.
	Route func(*http.Request) string
	// Unknown is the operation that answers the API's requests no other
	// operation serves, in the API's error shape.
	Unknown string
	// IsAPI reports whether a request is the API's; nil means every
	// request is.
	IsAPI func(*http.Request) bool
	// NotServed answers a request that is not the API's and that Route
	// names no operation of.
	NotServed http.HandlerFunc
}

// ServeHTTP implements http.Handler.
func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op := rt.Route(r)
	if _, ok := rt.Ops[op]; !ok {
		if rt.IsAPI != nil && !rt.IsAPI(r) {
			rt.NotServed(w, r)
			return
		}
		op = rt.Unknown
	}
	rt.Ops[op](w, r)
}

// BaseURL is the face's URL as the client of r reached it: its scheme (https
// on a TLS listener), host and BasePath. A face writes it into the links it
// answers with (next pages, operations, self links).
func (env FaceEnv) BaseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + env.BasePath
}

// RetrySeconds is f's RetryAfter as a Retry-After header's value: whole
// seconds.
func (f Fault) RetrySeconds() string {
	return strconv.Itoa(int(f.RetryAfter / time.Second))
}

// SetRetryAfter sets the Retry-After header of h when f is throttling.
func (f Fault) SetRetryAfter(h http.Header) {
	if f.Kind == FaultThrottle {
		h.Set("Retry-After", f.RetrySeconds())
	}
}
