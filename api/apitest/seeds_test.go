package apitest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mpool-dev/mpool/config/crd"
)

// seedVars are sample values for the ${VARS} in the seeds' manifests.
var seedVars = map[string]string{
	"YOUR_SSH_PUB_KEY":               "c3NoLWVkMjU1MTkgQUFBQUMzTnphQzFsWkRJMU5URTVBQUFBSUhSbGMzUT0gdGVzdA==",
	"AWS_AVAILABILITY_ZONE":          "us-east-1a",
	"AWS_CONTROL_PLANE_MACHINE_TYPE": "t3.large",
	"AWS_SSH_KEY_NAME":               "default",
	"AWS_SUBNET":                     "subnet-0123456789abcdef0",
}

var varRE = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)\}`)

// readSeed returns the text of the seed in dir whose file name starts with prefix.
func readSeed(t *testing.T, dir, prefix string) string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(dir, prefix+"_*.txt"))
	if err != nil || len(matches) != 1 {
		t.Fatalf("want exactly one seed %s_*.txt in %s, got %v (%v)", prefix, dir, matches, err)
	}
	b, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatalf("reading seed: %v", err)
	}
	return string(b)
}

// yamlBlocks returns the contents of the ```yaml fenced blocks of a Markdown text.
func yamlBlocks(text string) []string {
	var blocks []string
	var cur []string
	in := false
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case !in && trimmed == "```yaml":
			in, cur = true, nil
		case in && trimmed == "```":
			in = false
			blocks = append(blocks, strings.Join(cur, "\n"))
		case in:
			cur = append(cur, line)
		}
	}
	return blocks
}

// fillVars replaces ${VARS} with sample values; unknown variables fail the test.
func fillVars(t *testing.T, s string) string {
	t.Helper()
	return varRE.ReplaceAllStringFunc(s, func(m string) string {
		name := varRE.FindStringSubmatch(m)[1]
		v, ok := seedVars[name]
		if !ok {
			t.Fatalf("no sample value for ${%s}: add it to seedVars", name)
		}
		return v
	})
}

// TestSeedManifestsRoundTrip creates every example manifest of seeds 000 and 004, each
// block in a fresh namespace, and asserts that every field written reads back unchanged.
// It needs the seed documents (see locateSeeds); TestExampleManifestsRoundTrip does the
// same for the copies under examples/seeds, which the repository holds.
func TestSeedManifestsRoundTrip(t *testing.T) {
	dir := requireSeeds(t, "that every example manifest of the upstream Azure and AWS MachinePool pages (seeds 000 and 004) applies unchanged and reads back field for field")
	for _, seed := range []struct {
		prefix     string
		wantBlocks int
	}{
		{prefix: "000", wantBlocks: 3},
		{prefix: "004", wantBlocks: 1},
	} {
		blocks := yamlBlocks(readSeed(t, dir, seed.prefix))
		if len(blocks) != seed.wantBlocks {
			t.Fatalf("seed %s: want %d yaml blocks, found %d", seed.prefix, seed.wantBlocks, len(blocks))
		}
		for i, block := range blocks {
			t.Run(fmt.Sprintf("seed %s block %d", seed.prefix, i), func(t *testing.T) {
				applyAndCompare(t, fillVars(t, block))
			})
		}
	}
}

func applyAndCompare(t *testing.T, stream string) {
	t.Helper()
	ns := env.NewNamespace(t)
	docs := splitYAML(stream)
	if len(docs) == 0 {
		t.Fatal("block holds no objects")
	}
	for _, doc := range docs {
		want := fromYAML(t, doc)
		// The seeds name their own namespace (or none); the test uses a fresh one.
		unstructured.RemoveNestedField(want.Object, "metadata", "namespace")
		obj := want.DeepCopy()
		obj.SetNamespace(ns)
		what := fmt.Sprintf("%s %s", want.GetKind(), want.GetName())
		if err := env.Client.Create(ctx(), obj); err != nil {
			t.Fatalf("creating %s: %v", what, err)
		}
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(want.GroupVersionKind())
		if err := env.Client.Get(ctx(), client.ObjectKey{Namespace: ns, Name: want.GetName()}, got); err != nil {
			t.Fatalf("reading back %s: %v", what, err)
		}
		diffs := subsetDiff("", want.Object, got.Object)
		if converted(t, want.GroupVersionKind().GroupKind()) {
			diffs = withoutDroppedFalse(diffs)
		}
		if len(diffs) > 0 {
			t.Errorf("%s did not read back as written:\n  %s\nread back: %s", what, strings.Join(diffs, "\n  "), mustJSON(got.Object))
		}
	}
}

// TestSeed001RepeatsSeed000 checks the claim that seed 001 repeats seed 000's example
// manifests (with its indentation lost), so applying 000's covers 001's.
func TestSeed001RepeatsSeed000(t *testing.T) {
	dir := requireSeeds(t, "that the newer Azure MachinePool page (seed 001) repeats the example manifests of seed 000, so applying 000's covers 001's")
	normalise := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	text001 := normalise(readSeed(t, dir, "001"))
	blocks := yamlBlocks(readSeed(t, dir, "000"))
	if len(blocks) == 0 {
		t.Fatal("seed 000 has no yaml blocks")
	}
	for i, block := range blocks {
		if !strings.Contains(text001, normalise(block)) {
			t.Errorf("seed 001 does not contain seed 000's yaml block %d:\n%s", i, block)
		}
	}
}

// withoutDroppedFalse leaves out an explicit false that did not read back:
// a converted object (Cluster API's core and bootstrap kinds are stored as
// v1beta2 and served as v1beta1 through the conversion webhook) passes
// through Go types, where a false optional bool and an absent one are the
// same value. Nothing else is forgiven, and nothing of a kind that is not
// converted (see converted).
func withoutDroppedFalse(diffs []string) []string {
	var out []string
	for _, d := range diffs {
		if !strings.HasSuffix(d, ": dropped (want false)") {
			out = append(out, d)
		}
	}
	return out
}

// convertedKinds are the kinds whose CRD serves more than one version
// (crd.Converted), read once from the embedded CRDs.
var convertedKinds = sync.OnceValues(func() (map[schema.GroupKind]bool, error) {
	crds, err := crd.CRDs()
	if err != nil {
		return nil, err
	}
	out := map[schema.GroupKind]bool{}
	for _, c := range crds {
		out[schema.GroupKind{Group: c.Spec.Group, Kind: c.Spec.Names.Kind}] = crd.Converted(c)
	}
	return out, nil
})

// converted reports whether objects of gk pass through the conversion
// webhook (their CRD serves more than one version).
func converted(t *testing.T, gk schema.GroupKind) bool {
	t.Helper()
	kinds, err := convertedKinds()
	if err != nil {
		t.Fatalf("reading the CRDs: %v", err)
	}
	return kinds[gk]
}
