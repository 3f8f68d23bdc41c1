package core

import (
	"net/http"
	"strings"
)

// Route is a path a face serves operations at, by method. Path is
// segments joined by "/"; a segment
//
//   - "{name}" matches any segment and sets the request's path value name
//     to it;
//   - "{name=word}" matches the segment word and sets the path value name
//     to it (a path that says which of several places it names: GCP's
//     zones, regions or global);
//   - "{name...}", last, matches one or more segments and sets the path
//     value name to them joined by "/";
//   - "*" matches any segment;
//   - any other matches itself, case-insensitively when the route table
//     folds case.
type Route struct {
	Path string
	// Ops names the operation served at Path, by method.
	Ops map[string]string
}

// GetRoute is a route served to GET only.
func GetRoute(path, op string) Route { return Route{path, map[string]string{http.MethodGet: op}} }

// PostRoute is a route served to POST only.
func PostRoute(path, op string) Route { return Route{path, map[string]string{http.MethodPost: op}} }

// RouteTable is a face's routes, tried in order.
type RouteTable struct {
	Routes []Route
	// FoldCase makes literal segments match case-insensitively (as ARM
	// and Entra ID match them); otherwise they match exactly.
	FoldCase bool
}

// SplitPath is path's segments, without its leading and trailing "/".
func SplitPath(path string) []string { return strings.Split(strings.Trim(path, "/"), "/") }

// Route returns the operation of r by its path's segments, as Match does:
// a Router's Route.
func (t RouteTable) Route(r *http.Request) string { return t.Match(r, SplitPath(r.URL.Path)) }

// Match returns the operation of the first route that serves segs to r's
// method, setting the path values it names; "" when none does (and then
// no path value is set).
func (t RouteTable) Match(r *http.Request, segs []string) string {
	for _, rt := range t.Routes {
		op := rt.Ops[r.Method]
		if op == "" {
			continue
		}
		if values, ok := t.match(strings.Split(rt.Path, "/"), segs); ok {
			for _, kv := range values {
				r.SetPathValue(kv[0], kv[1])
			}
			return op
		}
	}
	return ""
}

// match reports whether pattern matches segs, with the path values it
// sets.
func (t RouteTable) match(pattern, segs []string) ([][2]string, bool) {
	var values [][2]string
	for i, p := range pattern {
		inner, isValue := strings.CutPrefix(p, "{")
		inner, closed := strings.CutSuffix(inner, "}")
		if !isValue || !closed {
			if i >= len(segs) || p != "*" && !t.equal(p, segs[i]) {
				return nil, false
			}
			continue
		}
		if name, rest := strings.CutSuffix(inner, "..."); rest && i == len(pattern)-1 {
			if len(segs) <= i {
				return nil, false
			}
			return append(values, [2]string{name, strings.Join(segs[i:], "/")}), true
		}
		if i >= len(segs) {
			return nil, false
		}
		name, word, fixed := strings.Cut(inner, "=")
		if fixed && !t.equal(word, segs[i]) {
			return nil, false
		}
		values = append(values, [2]string{name, segs[i]})
	}
	return values, len(pattern) == len(segs)
}

// equal reports whether a route's literal segment p matches s.
func (t RouteTable) equal(p, s string) bool {
	if t.FoldCase {
		return strings.EqualFold(p, s)
	}
	return p == s
}
