package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/mpool-dev/mpool/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Run(m, &env)) }

// repoRoot returns the directory holding the module's go.mod.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("getting working directory: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// fromYAML decodes one YAML object into an unstructured object.
func fromYAML(t testing.TB, doc string) *unstructured.Unstructured {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatalf("decoding YAML: %v\n%s", err, doc)
	}
	return &unstructured.Unstructured{Object: m}
}

// mergePatch applies a JSON merge patch (RFC 7386), given as YAML, to obj in place:
// maps merge recursively, null deletes a key, anything else replaces.
func mergePatch(t testing.TB, obj map[string]any, patchYAML string) {
	t.Helper()
	if strings.TrimSpace(patchYAML) == "" {
		return
	}
	patch := map[string]any{}
	if err := yaml.Unmarshal([]byte(patchYAML), &patch); err != nil {
		t.Fatalf("decoding patch: %v\n%s", err, patchYAML)
	}
	mergeInto(obj, patch)
}

func mergeInto(dst, patch map[string]any) {
	for k, pv := range patch {
		if pv == nil {
			delete(dst, k)
			continue
		}
		pm, pIsMap := pv.(map[string]any)
		dm, dIsMap := dst[k].(map[string]any)
		if pIsMap && dIsMap {
			mergeInto(dm, pm)
			continue
		}
		if pIsMap {
			fresh := map[string]any{}
			mergeInto(fresh, pm)
			dst[k] = fresh
			continue
		}
		dst[k] = pv
	}
}

// subsetDiff reports every path where want has a value that got lacks or differs from.
// Numbers are compared by value, whatever their Go type.
func subsetDiff(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an object, got %T (%v)", path, got, got)}
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var diffs []string
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				diffs = append(diffs, fmt.Sprintf("%s.%s: dropped (want %v)", path, k, w[k]))
				continue
			}
			diffs = append(diffs, subsetDiff(path+"."+k, w[k], gv)...)
		}
		return diffs
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: want %v, got %v", path, w, got)}
		}
		var diffs []string
		for i := range w {
			diffs = append(diffs, subsetDiff(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return diffs
	default:
		if wn, ok := number(want); ok {
			if gn, ok := number(got); ok && wn == gn {
				return nil
			}
		} else if reflect.DeepEqual(want, got) {
			return nil
		}
		return []string{fmt.Sprintf("%s: want %#v, got %#v", path, want, got)}
	}
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// splitYAML splits a multi-document YAML stream into non-empty documents.
func splitYAML(stream string) []string {
	var docs []string
	for _, doc := range strings.Split("\n"+stream, "\n---") {
		if strings.TrimSpace(doc) != "" {
			docs = append(docs, doc)
		}
	}
	return docs
}

// ctx is the context of API calls in these tests.
func ctx() context.Context { return context.Background() }

// mustJSON renders v for failure messages.
func mustJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
	return b.String()
}
