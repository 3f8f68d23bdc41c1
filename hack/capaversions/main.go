// Command capaversions adds Cluster API Provider AWS's own served API
// versions to mpool's CRDs of the kinds CAPA defines too (AWSCluster,
// AWSMachinePool, AWSManagedMachinePool): each version CAPA serves that
// mpool's generated CRD lacks (v1beta2, the version CAPA v2 stores and its
// templates write) is copied unchanged — schema, subresources, printer
// columns — from the CRD in the pinned sigs.k8s.io/cluster-api-provider-aws/v2
// module, served and not stored. mpool keeps storing its own version
// (v1beta1); its conversion webhook (internal/conversion) converts between
// the two. hack/generate.sh runs it on config/crd/bases after controller-gen,
// and api/apitest runs it on a fresh controller-gen output to check the
// committed files.
//
// Usage: go run ./hack/capaversions DIR
package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// CRDs are the files, in both mpool's config/crd/bases and CAPA's
// config/crd/bases, that get CAPA's versions.
var CRDs = []string{
	"infrastructure.cluster.x-k8s.io_awsclusters.yaml",
	"infrastructure.cluster.x-k8s.io_awsmachinepools.yaml",
	"infrastructure.cluster.x-k8s.io_awsmanagedmachinepools.yaml",
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: capaversions DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "capaversions:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/cluster-api-provider-aws/v2").Output()
	if err != nil {
		return fmt.Errorf("locating the sigs.k8s.io/cluster-api-provider-aws/v2 module: %w", err)
	}
	capa := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "bases")
	for _, name := range CRDs {
		if err := merge(filepath.Join(dir, name), filepath.Join(capa, name)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// merge appends to the CRD at path every version the CRD at from serves and
// it lacks, not stored.
func merge(path, from string) error {
	mine, err := read(path)
	if err != nil {
		return err
	}
	theirs, err := read(from)
	if err != nil {
		return err
	}
	versions := mine["spec"].(map[string]any)["versions"].([]any)
	have := map[string]bool{}
	for _, v := range versions {
		have[v.(map[string]any)["name"].(string)] = true
	}
	added := 0
	for _, v := range theirs["spec"].(map[string]any)["versions"].([]any) {
		v := v.(map[string]any)
		if have[v["name"].(string)] || v["served"] != true {
			continue
		}
		v["storage"] = false
		versions = append(versions, v)
		added++
	}
	if added == 0 {
		return fmt.Errorf("CAPA's CRD %s serves no version mpool's lacks", from)
	}
	mine["spec"].(map[string]any)["versions"] = versions
	b, err := yaml.Marshal(mine)
	if err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte("---\n"), b...), 0o644)
}

func read(path string) (map[string]any, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := yaml.Unmarshal(bytes.TrimPrefix(b, []byte("---\n")), &m); err != nil {
		return nil, err
	}
	return m, nil
}
