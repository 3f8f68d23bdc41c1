package kubeenv

import (
	"context"
	"embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// KubernetesVersion is the kube-apiserver version mpool builds and runs.
const KubernetesVersion = "v1.37.1"

// EtcdVersion is the etcd server version mpool builds and runs.
const EtcdVersion = "v3.7.0"

// kubetools is the small Go module that builds kube-apiserver and etcd. Its
// files carry a .txt suffix so that it is not a nested module of mpool's own;
// hack/update-kubetools.sh re-tidies it after a version bump.
//
//go:embed kubetools
var kubetools embed.FS

// Binaries are the paths of the built control-plane binaries.
type Binaries struct {
	APIServer         string
	ControllerManager string
	Etcd              string
}

// CacheDir returns the root of mpool's cache: $MPOOL_CACHE_DIR, else the
// user's cache directory joined with "mpool".
func CacheDir() (string, error) {
	if d := os.Getenv("MPOOL_CACHE_DIR"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the user cache directory (set MPOOL_CACHE_DIR): %w", err)
	}
	return filepath.Join(d, "mpool"), nil
}

// kubeBuild builds the control-plane binaries from kubetools.
var kubeBuild = toolBuild{
	fsys:     kubetools,
	module:   "kubetools",
	name:     fmt.Sprintf("kube-%s-etcd-%s", KubernetesVersion, EtcdVersion),
	what:     fmt.Sprintf("kube-apiserver, kube-controller-manager %s and etcd %s", KubernetesVersion, EtcdVersion),
	estimate: "about 6 minutes on 2 cores",
	goflags:  "-mod=mod -buildvcs=false",
	pkgs:     []string{"k8s.io/kubernetes/cmd/kube-apiserver", "k8s.io/kubernetes/cmd/kube-controller-manager", "./etcd"},
	ldflags: fmt.Sprintf("-s -w -X k8s.io/component-base/version.gitVersion=%s -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=%s",
		KubernetesVersion, strings.Split(KubernetesVersion, ".")[1]),
}

// EnsureBinaries returns the cached kube-apiserver, kube-controller-manager
// and etcd binaries, building
// them from source first if this cache has none for the pinned versions. The
// build takes minutes on a cold Go build cache; progress lines go to progress.
// Concurrent callers (other processes included) wait for one build.
func EnsureBinaries(ctx context.Context, progress io.Writer) (Binaries, error) {
	dir, err := kubeBuild.ensure(ctx, progress)
	if err != nil {
		return Binaries{}, err
	}
	return Binaries{
		APIServer:         filepath.Join(dir, "kube-apiserver"),
		ControllerManager: filepath.Join(dir, "kube-controller-manager"),
		Etcd:              filepath.Join(dir, "etcd"),
	}, nil
}
