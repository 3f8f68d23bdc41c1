package apitest

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CAPZ's module is not one mpool depends on, and its AzureMachinePool is still v1beta1:
// these tests hold mpool's AzureMachinePool CRD to CAPZ's schema through the list of its
// fields in testdata/capz/fields.txt (with the CAPZ version it was read from) and
// AzureMachinePools that set all of them.

// capzRefused names, for each AzureMachinePool of testdata/capz/refused.yaml, the field
// mpool refuses it for: the API server's message must name that field. A field listed
// here counts as covered by TestCAPZFieldsCovered.
var capzRefused = map[string]string{
	"capz-windows": "spec.template.osDisk.osType",
}

// capzObjects reads the objects of a multi-document file of testdata/capz.
func capzObjects(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "capz", file))
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, doc := range splitYAML(string(b)) {
		if o := fromYAML(t, doc); len(o.Object) > 0 {
			out = append(out, o)
		}
	}
	if len(out) == 0 {
		t.Fatalf("testdata/capz/%s holds no objects", file)
	}
	return out
}

// capzFields reads testdata/capz/fields.txt: CAPZ's AzureMachinePool spec fields.
func capzFields(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "capz", "fields.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		if line := strings.TrimSpace(s.Text()); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// fieldPaths adds to set the path of every field v sets, in fields.txt's notation: keys
// joined by ".", "[]" for a list's items.
func fieldPaths(set map[string]bool, path string, v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			p := k
			if path != "" {
				p = path + "." + k
			}
			set[p] = true
			fieldPaths(set, p, c)
		}
	case []any:
		set[path+"[]"] = true
		for _, c := range v {
			fieldPaths(set, path+"[]", c)
		}
	}
}

// TestCAPZFieldsCovered checks that testdata/capz/azuremachinepools.yaml sets every field
// of CAPZ's AzureMachinePool spec, or that mpool refuses the field (capzRefused): without
// it "every field" would be a claim the round trip could not back.
func TestCAPZFieldsCovered(t *testing.T) {
	set := map[string]bool{}
	for _, o := range capzObjects(t, "azuremachinepools.yaml") {
		fieldPaths(set, "", o.Object)
	}
	for _, f := range capzRefused {
		set[f] = true
	}
	var missing []string
	for _, f := range capzFields(t) {
		if !set[f] {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		t.Errorf("CAPZ fields no AzureMachinePool of testdata/capz/azuremachinepools.yaml sets (set them there, or refuse them and list them in capzRefused):\n  %s", strings.Join(missing, "\n  "))
	}
}

// TestCAPZAzureMachinePoolsRoundTrip creates every AzureMachinePool of
// testdata/capz/azuremachinepools.yaml through mpool's CRD, each in a fresh namespace, and
// asserts that it reads back as written: no field refused, none pruned, none changed.
func TestCAPZAzureMachinePoolsRoundTrip(t *testing.T) {
	for _, want := range capzObjects(t, "azuremachinepools.yaml") {
		t.Run(want.GetName(), func(t *testing.T) {
			ns := env.NewNamespace(t)
			obj := want.DeepCopy()
			obj.SetNamespace(ns)
			if err := env.Client.Create(ctx(), obj); err != nil {
				t.Fatalf("mpool's CRD refuses an AzureMachinePool CAPZ's schema accepts: %v", err)
			}
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(want.GroupVersionKind())
			if err := env.Client.Get(ctx(), client.ObjectKey{Namespace: ns, Name: want.GetName()}, got); err != nil {
				t.Fatal(err)
			}
			if diffs := subsetDiff("", want.Object, got.Object); len(diffs) > 0 {
				t.Errorf("AzureMachinePool %s did not read back as written (a dropped field is one mpool's CRD prunes: add it to api/infrastructure/v1beta1, or refuse it):\n  %s",
					want.GetName(), strings.Join(diffs, "\n  "))
			}
		})
	}
}

// TestCAPZAzureMachinePoolsRefused creates every AzureMachinePool of
// testdata/capz/refused.yaml and expects the API server to refuse it with a message
// naming the field capzRefused gives.
func TestCAPZAzureMachinePoolsRefused(t *testing.T) {
	var names []string
	for _, o := range capzObjects(t, "refused.yaml") {
		names = append(names, o.GetName())
		field, ok := capzRefused[o.GetName()]
		if !ok {
			t.Errorf("AzureMachinePool %s of refused.yaml: capzRefused does not say which field it is refused for", o.GetName())
			continue
		}
		t.Run(o.GetName(), func(t *testing.T) {
			obj := o.DeepCopy()
			obj.SetNamespace(env.NewNamespace(t))
			err := env.Client.Create(ctx(), obj)
			if !apierrors.IsInvalid(err) {
				t.Fatalf("create: %v, want it refused as invalid (%s)", err, field)
			}
			if !strings.Contains(err.Error(), field) {
				t.Errorf("refused with %q, which does not name %s", err, field)
			}
		})
	}
	for name := range capzRefused {
		if !slices.Contains(names, name) {
			t.Errorf("capzRefused names %s, which refused.yaml lacks", name)
		}
	}
}
