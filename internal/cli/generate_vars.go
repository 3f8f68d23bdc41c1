package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/drone/envsubst/v2"
	"github.com/drone/envsubst/v2/parse"
	"sigs.k8s.io/yaml"
)

// templateVars resolves a cluster template's variables as clusterctl does:
// the values generate's flags set win, then the environment, then the
// clusterctl config file.
type templateVars struct {
	// flags are the variables set from flags (CLUSTER_NAME, NAMESPACE, ...).
	flags map[string]string
	// env looks a variable up in the environment.
	env func(string) (string, bool)
	// config holds the config file's top-level scalars, keys upper-cased:
	// clusterctl reads that file case-insensitively.
	config map[string]string
}

// lookup returns the value of variable name and whether it has one.
func (v templateVars) lookup(name string) (string, bool) {
	if s, ok := v.flags[name]; ok {
		return s, true
	}
	if v.env != nil {
		if s, ok := v.env(name); ok {
			return s, true
		}
	}
	s, ok := v.config[strings.ToUpper(name)]
	return s, ok
}

// templateVar is one variable a template references.
type templateVar struct {
	name string
	// hasDefault: a reference with arguments (${VAR:=x}, ${VAR/#/p}, ...)
	// needs no value, as clusterctl counts it.
	hasDefault bool
	// defaultValue is the literal default of ${VAR:=x} or ${VAR:-x}.
	defaultValue string
	literal      bool
}

// inspectTemplate lists the variables tpl references, sorted by name.
func inspectTemplate(tpl string) ([]templateVar, error) {
	t, err := parse.Parse(tpl)
	if err != nil {
		return nil, fmt.Errorf("parsing the template's variables: %w", err)
	}
	found := map[string]*templateVar{}
	var walk func(parse.Node)
	walk = func(n parse.Node) {
		switch n := n.(type) {
		case *parse.ListNode:
			for _, c := range n.Nodes {
				walk(c)
			}
		case *parse.FuncNode:
			if _, ok := found[n.Param]; !ok {
				tv := &templateVar{name: n.Param, hasDefault: len(n.Args) > 0}
				if d, ok := literalDefault(n); ok {
					tv.defaultValue, tv.literal = d, true
				}
				found[n.Param] = tv
			}
			for _, a := range n.Args {
				walk(a)
			}
		}
	}
	walk(t.Root)
	out := make([]templateVar, 0, len(found))
	for _, tv := range found {
		out = append(out, *tv)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// literalDefault is the default of ${VAR:=x}, ${VAR:-x}, ${VAR=x} or
// ${VAR-x} when x is plain text.
func literalDefault(n *parse.FuncNode) (string, bool) {
	switch n.Name {
	case ":=", ":-", "=", "-":
	default:
		return "", false
	}
	var b strings.Builder
	for _, a := range n.Args {
		t, ok := a.(*parse.TextNode)
		if !ok {
			return "", false
		}
		b.WriteString(t.Value)
	}
	return b.String(), true
}

// errMissingVariables names every variable a template needs and nobody set,
// in clusterctl's words.
type errMissingVariables struct{ missing []string }

func (e *errMissingVariables) Error() string {
	return fmt.Sprintf("value for variables [%s] is not set. Please set the value using os environment variables or the clusterctl config file",
		strings.Join(e.missing, ", "))
}

// substitute replaces the variables of tpl. A variable with no value and no
// default is an error naming every such variable at once.
func substitute(tpl string, vars templateVars) (string, error) {
	refs, err := inspectTemplate(tpl)
	if err != nil {
		return "", err
	}
	var missing []string
	for _, r := range refs {
		if _, ok := vars.lookup(r.name); !ok && !r.hasDefault {
			missing = append(missing, r.name)
		}
	}
	if len(missing) > 0 {
		return "", &errMissingVariables{missing: missing}
	}
	out, err := envsubst.Eval(tpl, func(name string) string {
		s, _ := vars.lookup(name)
		return s
	})
	if err != nil {
		return "", fmt.Errorf("substituting the template's variables: %w", err)
	}
	return out, nil
}

// loadClusterctlConfig reads a clusterctl config file: a YAML map whose
// top-level scalar values are template variables (nested sections such as
// providers are not variables). A missing file is no error when optional.
func loadClusterctlConfig(path string, optional bool) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if optional && os.IsNotExist(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading the clusterctl config file: %w", err)
	}
	var raw map[string]any
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("parsing the clusterctl config file %s: %w", path, err)
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		switch v := v.(type) {
		case string:
			out[strings.ToUpper(k)] = v
		case bool:
			out[strings.ToUpper(k)] = strconv.FormatBool(v)
		case float64:
			out[strings.ToUpper(k)] = strconv.FormatFloat(v, 'f', -1, 64)
		case nil:
			out[strings.ToUpper(k)] = ""
		}
	}
	return out, nil
}

// defaultClusterctlConfig is clusterctl's own config file,
// ~/.cluster-api/clusterctl.yaml, or "" without a home directory.
func defaultClusterctlConfig() string {
	h, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(h, ".cluster-api", "clusterctl.yaml")
}
