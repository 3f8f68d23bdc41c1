package history

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Changes lists what differs from prev to cur, one line a field:
// "MachinePool spec.template.spec.version: v1.31.2 → v1.32.0". Lists and
// objects are compared by their leaves; a value that is too long is cut.
func Changes(prev, cur Snapshot) []string {
	var out []string
	out = append(out, diff("MachinePool spec.template", prev.Template, cur.Template)...)
	out = append(out, diff(cur.Infrastructure.Kind+" spec", prev.Infrastructure.Spec, cur.Infrastructure.Spec)...)
	var pb, cb json.RawMessage
	kind := "bootstrap config"
	if prev.Bootstrap != nil {
		pb = prev.Bootstrap.Spec
	}
	if cur.Bootstrap != nil {
		cb, kind = cur.Bootstrap.Spec, cur.Bootstrap.Kind
		if prev.Bootstrap != nil && prev.Bootstrap.Name != cur.Bootstrap.Name {
			out = append(out, fmt.Sprintf("%s: %s → %s", kind, prev.Bootstrap.Name, cur.Bootstrap.Name))
		}
	}
	out = append(out, diff(kind+" spec", pb, cb)...)
	return out
}

func diff(prefix string, a, b json.RawMessage) []string {
	la, lb := leaves(a), leaves(b)
	paths := slices.Sorted(maps.Keys(la))
	for p := range lb {
		if _, ok := la[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	var out []string
	for _, p := range paths {
		va, oka := la[p]
		vb, okb := lb[p]
		if oka && okb && va == vb {
			continue
		}
		if !oka {
			va = "(unset)"
		}
		if !okb {
			vb = "(unset)"
		}
		out = append(out, fmt.Sprintf("%s%s: %s → %s", prefix, p, cut(va), cut(vb)))
	}
	return out
}

// leaves flattens a JSON document into its scalar values by path
// (".a.b[0].c").
func leaves(raw json.RawMessage) map[string]string {
	out := map[string]string{}
	if len(raw) == 0 {
		return out
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return out
	}
	var walk func(string, any)
	walk = func(path string, v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, e := range t {
				walk(path+"."+k, e)
			}
		case []any:
			for i, e := range t {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		case nil:
		default:
			b, _ := json.Marshal(t)
			out[path] = string(b)
		}
	}
	walk("", v)
	return out
}

func cut(s string) string {
	s = strings.Trim(s, `"`)
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}
