package kubeenv

import (
	"context"
	"embed"
	"io"
	"path/filepath"
)

// ClusterctlVersion is the Cluster API clusterctl release mpool builds to
// check that its management cluster is acceptable to upstream tooling.
const ClusterctlVersion = "v1.14.2"

// clusterctlPackage is the import path of clusterctl's main package.
const clusterctlPackage = "sigs.k8s.io/cluster-api/cmd/clusterctl"

// clusterctltool is the small Go module that builds clusterctl. As with
// kubetools, its files carry a .txt suffix so that it is not a nested module
// of mpool's own; its go.sum is complete, so the build needs no -mod=mod.
//
//go:embed clusterctltool
var clusterctltool embed.FS

// clusterctlBuild builds clusterctl from clusterctltool, stamping its
// version the way upstream's release build does so that `clusterctl
// version` reports it. -mod=readonly: the embedded go.sum is complete, and a
// build that needed to change it should fail rather than silently
// re-resolve.
var clusterctlBuild = toolBuild{
	fsys:     clusterctltool,
	module:   "clusterctltool",
	name:     "clusterctl-" + ClusterctlVersion,
	what:     "clusterctl " + ClusterctlVersion,
	estimate: "a few minutes on 2 cores",
	goflags:  "-mod=readonly -buildvcs=false",
	pkgs:     []string{clusterctlPackage},
	ldflags:  versionLDFlags("sigs.k8s.io/cluster-api/version", ClusterctlVersion),
}

// EnsureClusterctl returns the path of a cached clusterctl ClusterctlVersion
// binary, building it from source through the Go module proxy first if this
// cache has none for the pinned version and toolchain. The build takes a few
// minutes on a cold Go build cache; progress lines go to progress. Concurrent
// callers (other processes included) wait for one build.
func EnsureClusterctl(ctx context.Context, progress io.Writer) (string, error) {
	dir, err := clusterctlBuild.ensure(ctx, progress)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "clusterctl"), nil
}
