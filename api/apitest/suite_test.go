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
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/mpool-dev/mpool/config/crd"
	"github.com/mpool-dev/mpool/internal/admission"
	"github.com/mpool-dev/mpool/internal/testenv"
)

var env *testenv.Env

// TestMain starts the control plane, installs the admission policies of config/crd/policies
// as the manager does at start (mpool serves them with its CRDs: they hold what upstream's
// webhooks check of Cluster API's own kinds), waits until the API server enforces them, runs
// the tests and stops the control plane.
func TestMain(m *testing.M) {
	os.Exit(testenv.RunWith(m, &env, func(*testenv.Env) (func(), error) {
		if err := installPolicies(context.Background()); err != nil {
			return nil, fmt.Errorf("installing the admission policies: %w", err)
		}
		return nil, nil
	}))
}

// policyProbes holds, for each admission policy of config/crd/policies, an object the CRD
// schemas accept and only that policy refuses.
var policyProbes = map[string]string{
	"mpool-machinepool": `
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachinePool
metadata: {namespace: default, name: policy-probe}
spec:
  clusterName: demo
  template:
    spec:
      clusterName: demo
      bootstrap: {dataSecretName: demo}
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: AzureMachinePool, name: demo}
      version: "1.31.2"
`,
	"mpool-machine": `
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata: {namespace: default, name: policy-probe}
spec:
  clusterName: demo
  bootstrap: {dataSecretName: demo}
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: AzureMachinePoolMachine, name: demo}
  version: "1.31.2"
`,
	"mpool-kubeadmconfig": `
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfig
metadata: {namespace: default, name: policy-probe}
spec: {verbosity: -1}
`,
	"mpool-kubeadmconfigtemplate": `
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfigTemplate
metadata: {namespace: default, name: policy-probe}
spec: {template: {spec: {verbosity: -1}}}
`,
}

// installPolicies creates the admission policies and their bindings, then, for each policy
// with a probe, repeats a dry-run create of the probe until that policy refuses it: the
// API server enforces a new policy only once its informers have it and its binding.
func installPolicies(ctx context.Context) error {
	pols, binds, err := crd.AdmissionPolicies()
	if err != nil {
		return err
	}
	if err := admission.EnsurePolicies(ctx, env.Client, pols, binds); err != nil {
		return err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for _, p := range pols {
		doc, ok := policyProbes[p.Name]
		if !ok {
			continue
		}
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			return fmt.Errorf("decoding the probe of %s: %w", p.Name, err)
		}
		by := "ValidatingAdmissionPolicy '" + p.Name + "'"
		for {
			err := env.Client.Create(ctx, &unstructured.Unstructured{Object: m}, client.DryRunAll)
			if err != nil && strings.Contains(err.Error(), by) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("policy %s does not refuse its probe (got %v)", p.Name, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

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
