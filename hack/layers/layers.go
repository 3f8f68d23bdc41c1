// Package layers checks mpool's import rules: which packages may import
// which. Its test runs them over the repository with the rest of the suite
// (go test ./...), so a crossing import fails CI with a message naming the
// file, the import and the rule.
//
// The rules apply to non-test files: tests may reach across layers to set
// up real parts (a provider's tests start the simulated cloud).
//
// The simulated cloud (sim/...) is kept apart both ways: product code never
// imports it (only the commands that start it and the test support do, and
// the local provider its wire types), and it imports no controller,
// provider, manager or CLI.
package layers

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Rule is one import rule.
type Rule struct {
	// Name says what the rule keeps apart, for the violation message.
	Name string
	// Applies reports whether the rule covers the package at dir (a
	// slash-separated path relative to the repository root).
	Applies func(dir string) bool
	// Allowed reports whether that package may import path (module-relative
	// paths start with "./", e.g. "./sim/core").
	Allowed func(dir, path string) bool
}

// Violation is one import that breaks a rule.
type Violation struct {
	File, Import, Rule string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s imports %s: %s", v.File, v.Import, v.Rule)
}

// Rules are mpool's layers.
func Rules() []Rule {
	under := func(dir, prefix string) bool { return dir == prefix || strings.HasPrefix(dir, prefix+"/") }
	isSDK := func(path string) bool {
		for _, p := range []string{"github.com/Azure/", "github.com/aws/", "cloud.google.com/", "google.golang.org/api/"} {
			if strings.HasPrefix(path, p) {
				return true
			}
		}
		return false
	}
	return []Rule{
		{
			Name:    "the API types import only the Go standard library, Kubernetes API packages, upstream Cluster API's API module and CAPA's API packages (the v1beta2 AWS kinds mpool serves)",
			Applies: func(dir string) bool { return under(dir, "api") && !under(dir, "api/apitest") },
			Allowed: func(dir, path string) bool {
				switch {
				case !strings.Contains(strings.SplitN(path, "/", 2)[0], "."):
					return true // the standard library
				case strings.HasPrefix(path, "./api/"), strings.HasPrefix(path, "k8s.io/api/"), strings.HasPrefix(path, "k8s.io/apimachinery/"),
					strings.HasPrefix(path, "k8s.io/apiextensions-apiserver/pkg/apis/"),
					strings.HasPrefix(path, "sigs.k8s.io/cluster-api/api/"),
					path == "sigs.k8s.io/cluster-api-provider-aws/v2/api/v1beta2", path == "sigs.k8s.io/cluster-api-provider-aws/v2/exp/api/v1beta2":
					return true
				case path == "sigs.k8s.io/controller-runtime/pkg/scheme":
					return true // the scheme builder the generated registration uses
				}
				return false
			},
		},
		{
			Name: "cloud SDKs are imported only by their provider (internal/provider/<cloud>, not the contract or the kit) and the simulated cloud's faces (sim/face/<face>)",
			Applies: func(dir string) bool {
				provider := under(dir, "internal/provider") && dir != "internal/provider" &&
					!under(dir, "internal/provider/contract") && !under(dir, "internal/provider/kit")
				return !provider && !under(dir, "sim/face")
			},
			Allowed: func(_, path string) bool { return !isSDK(path) },
		},
		{
			Name:    "product code never imports the simulated cloud (sim/...): only the commands that start it (internal/cli), the test support (internal/testenv, test/...) and the local provider its wire types (sim/wire/localapi)",
			Applies: func(dir string) bool { return !under(dir, "sim") },
			Allowed: func(dir, path string) bool {
				switch {
				case !strings.HasPrefix(path, "./sim/"):
					return true
				case dir == "internal/cli", under(dir, "internal/testenv"), under(dir, "test"):
					return true
				case under(dir, "internal/provider/local") && path == "./sim/wire/localapi":
					return true // the local face's protocol is the local provider's API
				}
				return false
			},
		},
		{
			Name:    "the simulated cloud imports no controller, provider, manager or CLI: it is a neighbour of the product, not a room of it",
			Applies: func(dir string) bool { return under(dir, "sim") },
			Allowed: func(_, path string) bool {
				for _, p := range []string{"./internal/controller", "./internal/provider", "./internal/manager", "./internal/cli", "./cmd"} {
					if path == p || strings.HasPrefix(path, p+"/") {
						return false
					}
				}
				return true
			},
		},
		{
			Name:    "the simulated cloud's core and wire types know no face: faces build on the core, never the other way",
			Applies: func(dir string) bool { return under(dir, "sim/core") || under(dir, "sim/wire") },
			Allowed: func(_, path string) bool {
				for _, p := range []string{"./sim/face", "./sim/server", "./sim/cloudsim", "./sim/admin"} {
					if path == p || strings.HasPrefix(path, p+"/") {
						return false
					}
				}
				return true
			},
		},
		{
			Name:    "the CLI reads the engine's behaviour through internal/preview, never the controller packages",
			Applies: func(dir string) bool { return under(dir, "internal/cli") },
			Allowed: func(_, path string) bool { return !strings.HasPrefix(path, "./internal/controller") },
		},
		{
			Name: "the planner, the preview, the ScaleGroup interface and the provider contract and kit are pure: no controllers, providers (but the contract) or simulated cloud",
			Applies: func(dir string) bool {
				return under(dir, "internal/rollout") || under(dir, "internal/preview") || under(dir, "internal/scalegroup") ||
					under(dir, "internal/provider/contract") || under(dir, "internal/provider/kit")
			},
			Allowed: func(_, path string) bool {
				if path == "./internal/provider/contract" {
					return true
				}
				for _, p := range []string{"./internal/controller", "./internal/provider", "./sim", "./internal/manager", "./internal/cli"} {
					if strings.HasPrefix(path, p) {
						return false
					}
				}
				return true
			},
		},
		{
			Name:    "a provider imports the contract and the kit, not the engine that drives it, nor another provider or the registry",
			Applies: func(dir string) bool { return under(dir, "internal/provider") && dir != "internal/provider" },
			Allowed: func(dir, path string) bool {
				if strings.HasPrefix(path, "./internal/controller") {
					return false
				}
				if !strings.HasPrefix(path, "./internal/provider") || path == "./internal/provider/contract" || path == "./internal/provider/kit" {
					return true
				}
				own := "./" + strings.Join(strings.SplitN(dir, "/", 4)[:3], "/")
				return path == own || strings.HasPrefix(path, own+"/")
			},
		},
		{
			Name:    "the registry lists providers and how to reach their clouds; the manager wires the engine to them",
			Applies: func(dir string) bool { return dir == "internal/provider" },
			Allowed: func(_, path string) bool {
				return !strings.HasPrefix(path, "./internal/controller") && !strings.HasPrefix(path, "./internal/metrics")
			},
		},
	}
}

// Check parses the imports of every non-test Go file under root (a module
// whose path is module) and returns the violations of rules, sorted.
// Directories named testdata or vendor, and hidden ones, are skipped.
func Check(root, module string, rules []Rule) ([]Violation, error) {
	var out []Violation
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		dir := filepath.ToSlash(filepath.Dir(rel))
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return fmt.Errorf("parsing %s: %w", rel, err)
		}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return fmt.Errorf("%s: import %s: %w", rel, imp.Path.Value, err)
			}
			if p == module || strings.HasPrefix(p, module+"/") {
				p = "./" + strings.TrimPrefix(strings.TrimPrefix(p, module), "/")
			}
			for _, r := range rules {
				if r.Applies(dir) && !r.Allowed(dir, p) {
					out = append(out, Violation{File: rel, Import: p, Rule: r.Name})
				}
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Import < out[j].Import
	})
	return out, err
}

// ModulePath reads the module path from root's go.mod.
func ModulePath(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.TrimSpace(rest), nil
		}
	}
	return "", fmt.Errorf("no module line in %s/go.mod", root)
}
