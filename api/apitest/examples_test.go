package apitest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// exampleSources says which seed document, and which of its ```yaml blocks, each
// manifest under examples/seeds was copied from.
var exampleSources = []struct {
	file  string
	seed  string
	block int
}{
	{file: "aws-machinepool.yaml", seed: "004", block: 0},
	{file: "azure-machinepool.yaml", seed: "000", block: 2},
}

// exampleFiles returns the paths of the manifests under examples/seeds.
func exampleFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "examples", "seeds", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example manifests in examples/seeds: %v", err)
	}
	return files
}

// exampleBody returns an example manifest without the comment lines that head it and
// say where it comes from.
func exampleBody(text string) string {
	lines := strings.Split(text, "\n")
	i := 0
	for i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "#") {
		i++
	}
	return strings.Join(lines[i:], "\n")
}

// TestExampleManifestsRoundTrip creates every object of examples/seeds, each file in a
// fresh namespace, and asserts that every field written reads back unchanged: the
// README's "the example manifests apply unchanged", with nothing from outside the
// repository.
func TestExampleManifestsRoundTrip(t *testing.T) {
	for _, f := range exampleFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			applyAndCompare(t, exampleBody(string(b)))
		})
	}
}

// TestExampleSourcesKnown keeps exampleSources complete: every manifest under
// examples/seeds names the upstream block it was copied from, so that
// TestExamplesMatchSeeds checks it.
func TestExampleSourcesKnown(t *testing.T) {
	var got, want []string
	for _, f := range exampleFiles(t) {
		got = append(got, filepath.Base(f))
	}
	for _, s := range exampleSources {
		want = append(want, s.file)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("examples/seeds holds %v, exampleSources names %v: add the new example's seed and block", got, want)
	}
}

// TestExamplesMatchSeeds checks that every manifest under examples/seeds is its upstream
// block copied unchanged, except that each ${VAR} is filled with a sample value (the
// same value wherever the variable repeats).
func TestExamplesMatchSeeds(t *testing.T) {
	dir := requireSeeds(t, "that every manifest under examples/seeds is its upstream example (seed 000's or 004's yaml block) unchanged but for filled ${VARS}")
	for _, src := range exampleSources {
		t.Run(src.file, func(t *testing.T) {
			blocks := yamlBlocks(readSeed(t, dir, src.seed))
			if src.block >= len(blocks) {
				t.Fatalf("seed %s has %d yaml blocks, want block %d", src.seed, len(blocks), src.block)
			}
			b, err := os.ReadFile(filepath.Join(repoRoot(t), "examples", "seeds", src.file))
			if err != nil {
				t.Fatal(err)
			}
			vars, err := matchFilled(blocks[src.block], exampleBody(string(b)))
			if err != nil {
				t.Fatalf("examples/seeds/%s is not seed %s's yaml block %d with its variables filled: %v", src.file, src.seed, src.block, err)
			}
			t.Logf("variables filled: %v", vars)
		})
	}
}

// matchFilled reports whether text is template with every ${VAR} replaced by a value on
// one line, the same value for each occurrence of a variable, and returns the values.
// Trailing spaces and leading and trailing blank lines are ignored on both sides.
func matchFilled(template, text string) (map[string]string, error) {
	template, text = normaliseLines(template), normaliseLines(text)
	locs := varRE.FindAllStringSubmatchIndex(template, -1)
	var names []string
	var re strings.Builder
	re.WriteString(`\A`)
	prev := 0
	for _, loc := range locs {
		re.WriteString(regexp.QuoteMeta(template[prev:loc[0]]))
		re.WriteString(`([^\n]+?)`)
		names = append(names, template[loc[2]:loc[3]])
		prev = loc[1]
	}
	re.WriteString(regexp.QuoteMeta(template[prev:]))
	re.WriteString(`\z`)
	m := regexp.MustCompile(re.String()).FindStringSubmatch(text)
	if m == nil {
		return nil, fmt.Errorf("the text differs beyond the variables:\n%s", firstDifference(template, text))
	}
	vars := map[string]string{}
	for i, name := range names {
		v := m[i+1]
		if strings.Contains(v, "${") {
			return nil, fmt.Errorf("${%s} is not filled: %q", name, v)
		}
		if seen, ok := vars[name]; ok && seen != v {
			return nil, fmt.Errorf("${%s} is filled with %q and %q", name, seen, v)
		}
		vars[name] = v
	}
	return vars, nil
}

// normaliseLines drops trailing spaces from every line and blank lines at both ends.
func normaliseLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n")
}

// firstDifference shows the first line where template and text differ, for a failure
// message; lines holding a ${VAR} in the template are not compared.
func firstDifference(template, text string) string {
	tl, xl := strings.Split(template, "\n"), strings.Split(text, "\n")
	for i := 0; i < max(len(tl), len(xl)); i++ {
		var a, b string
		if i < len(tl) {
			a = tl[i]
		}
		if i < len(xl) {
			b = xl[i]
		}
		if a != b && !varRE.MatchString(a) {
			return fmt.Sprintf("line %d: upstream %q, example %q", i+1, a, b)
		}
	}
	return "the lines holding variables differ beyond them"
}

// TestMatchFilled keeps the examples' comparison with upstream honest.
func TestMatchFilled(t *testing.T) {
	const template = "---\nkind: Pool\nspec:\n  zone: \"${ZONE}\"\n  key: ${KEY}\n  again: ${ZONE}\n"
	tests := []struct {
		name     string
		text     string
		wantVars map[string]string
		wantErr  string
	}{
		{name: "variables filled, spacing at the ends ignored",
			text:     "\n---\nkind: Pool  \nspec:\n  zone: \"us-east-1a\"\n  key: ssh-ed25519 AAAA x@y\n  again: us-east-1a\n\n",
			wantVars: map[string]string{"ZONE": "us-east-1a", "KEY": "ssh-ed25519 AAAA x@y"}},
		{name: "a changed field is caught", text: "---\nkind: Pool\nspec:\n  zone: \"a\"\n  key: k\n  again: a\n  extra: 1\n",
			wantErr: "differs"},
		{name: "a changed literal line is reported", text: "---\nkind: Other\nspec:\n  zone: \"a\"\n  key: k\n  again: a\n",
			wantErr: `upstream "kind: Pool"`},
		{name: "one variable, two values", text: "---\nkind: Pool\nspec:\n  zone: \"a\"\n  key: k\n  again: b\n",
			wantErr: "filled with"},
		{name: "a variable left unfilled", text: "---\nkind: Pool\nspec:\n  zone: \"a\"\n  key: ${KEY}\n  again: a\n",
			wantErr: "not filled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars, err := matchFilled(template, tt.text)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(vars) != len(tt.wantVars) {
				t.Fatalf("vars %v, want %v", vars, tt.wantVars)
			}
			for k, v := range tt.wantVars {
				if vars[k] != v {
					t.Errorf("vars[%s] = %q, want %q", k, vars[k], v)
				}
			}
		})
	}
}

// TestV1Beta2ExamplesRoundTrip applies every manifest of examples/v1beta2 (the
// v1beta2 equivalents of the v1beta1 examples, from the converters the
// webhook serves) and asserts every field written reads back unchanged.
func TestV1Beta2ExamplesRoundTrip(t *testing.T) {
	// The pools; the cluster files' Secrets carry stringData, which no
	// Secret reads back (the e2e tests apply them).
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "examples", "v1beta2", "*machinepool.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in examples/v1beta2: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			applyAndCompare(t, exampleBody(string(b)))
		})
	}
}

// TestSeedExamplesReadBackAsV1Beta2 applies each v1beta1 seed example and
// reads every object back in v1beta2: it must hold what its v1beta2
// equivalent in examples/v1beta2 says (the same object, written in the other
// version).
func TestSeedExamplesReadBackAsV1Beta2(t *testing.T) {
	for _, f := range exampleFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			v1, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			v2, err := os.ReadFile(filepath.Join(repoRoot(t), "examples", "v1beta2", "seeds-"+filepath.Base(f)))
			if err != nil {
				t.Fatal(err)
			}
			ns := env.NewNamespace(t)
			for _, doc := range splitYAML(exampleBody(string(v1))) {
				obj := fromYAML(t, doc)
				obj.SetNamespace(ns)
				if err := env.Client.Create(ctx(), obj); err != nil {
					t.Fatalf("creating %s %s: %v", obj.GetKind(), obj.GetName(), err)
				}
			}
			for _, doc := range splitYAML(exampleBody(string(v2))) {
				want := fromYAML(t, doc)
				unstructured.RemoveNestedField(want.Object, "metadata", "namespace")
				got := &unstructured.Unstructured{}
				got.SetGroupVersionKind(want.GroupVersionKind())
				if err := env.Client.Get(ctx(), client.ObjectKey{Namespace: ns, Name: want.GetName()}, got); err != nil {
					t.Fatalf("reading %s %s as %s: %v", want.GetKind(), want.GetName(), want.GetAPIVersion(), err)
				}
				if diffs := subsetDiff("", want.Object, got.Object); len(diffs) > 0 {
					t.Errorf("%s %s read as %s differs from its v1beta2 equivalent:\n  %s", want.GetKind(), want.GetName(), want.GetAPIVersion(), strings.Join(diffs, "\n  "))
				}
			}
		})
	}
}
