package localenv

import (
	"bufio"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
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

// binariesKey identifies a build: the pinned versions, the exact module files
// and the Go toolchain that compiles them.
func binariesKey() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(kubetools, "kubetools", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := kubetools.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hashing the embedded kubetools module: %w", err)
	}
	goVersion, err := goToolVersion()
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "%s\x00%s/%s", goVersion, runtime.GOOS, runtime.GOARCH)
	return fmt.Sprintf("kube-%s-etcd-%s-%s", KubernetesVersion, EtcdVersion, hex.EncodeToString(h.Sum(nil))[:12]), nil
}

func goTool() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	return "", errors.New("the go toolchain is needed to build kube-apiserver and etcd on first use, and none was found on PATH")
}

func goToolVersion() (string, error) {
	gobin, err := goTool()
	if err != nil {
		return "", err
	}
	out, err := exec.Command(gobin, "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("running go env GOVERSION: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// EnsureBinaries returns the cached kube-apiserver, kube-controller-manager
// and etcd binaries, building
// them from source first if this cache has none for the pinned versions. The
// build takes minutes on a cold Go build cache; progress lines go to progress.
// Concurrent callers (other processes included) wait for one build.
func EnsureBinaries(ctx context.Context, progress io.Writer) (Binaries, error) {
	if progress == nil {
		progress = io.Discard
	}
	root, err := CacheDir()
	if err != nil {
		return Binaries{}, err
	}
	key, err := binariesKey()
	if err != nil {
		return Binaries{}, err
	}
	dir := filepath.Join(root, "bin", key)
	bins := Binaries{
		APIServer:         filepath.Join(dir, "kube-apiserver"),
		ControllerManager: filepath.Join(dir, "kube-controller-manager"),
		Etcd:              filepath.Join(dir, "etcd"),
	}
	complete := filepath.Join(dir, ".complete")
	if _, err := os.Stat(complete); err == nil {
		return bins, nil
	}
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		return Binaries{}, fmt.Errorf("creating the binary cache: %w", err)
	}
	unlock, err := lockFile(ctx, filepath.Join(root, "bin", key+".lock"), func() {
		fmt.Fprintf(progress, "waiting for another mpool process that is building kube-apiserver %s and etcd %s\n", KubernetesVersion, EtcdVersion)
	})
	if err != nil {
		return Binaries{}, err
	}
	defer unlock()
	if _, err := os.Stat(complete); err == nil {
		return bins, nil
	}
	if err := build(ctx, dir, progress); err != nil {
		return Binaries{}, err
	}
	if err := os.WriteFile(complete, []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644); err != nil {
		return Binaries{}, fmt.Errorf("marking the binary cache complete: %w", err)
	}
	return bins, nil
}

// build writes the embedded kubetools module to a scratch directory and builds
// both binaries into dir.
func build(ctx context.Context, dir string, progress io.Writer) error {
	gobin, err := goTool()
	if err != nil {
		return err
	}
	src, err := os.MkdirTemp(filepath.Dir(dir), "kubetools-src-")
	if err != nil {
		return fmt.Errorf("creating the build directory: %w", err)
	}
	defer os.RemoveAll(src)
	err = fs.WalkDir(kubetools, "kubetools", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := kubetools.ReadFile(path)
		if err != nil {
			return err
		}
		rel := strings.TrimSuffix(strings.TrimPrefix(path, "kubetools/"), ".txt")
		dst := filepath.Join(src, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		return fmt.Errorf("writing the kubetools module: %w", err)
	}
	out := dir + ".partial"
	_ = os.RemoveAll(out)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", out, err)
	}

	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod -buildvcs=false")
	pkgs := []string{"k8s.io/kubernetes/cmd/kube-apiserver", "k8s.io/kubernetes/cmd/kube-controller-manager", "./etcd"}

	total := countPackages(ctx, gobin, src, env, pkgs)
	start := time.Now()
	fmt.Fprintf(progress, "building kube-apiserver, kube-controller-manager %s and etcd %s from source (first run only; about 6 minutes on 2 cores)\n", KubernetesVersion, EtcdVersion)

	ldflags := fmt.Sprintf("-s -w -X k8s.io/component-base/version.gitVersion=%s -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=%s",
		KubernetesVersion, strings.Split(KubernetesVersion, ".")[1])
	args := append([]string{"build", "-v", "-trimpath", "-ldflags", ldflags, "-o", out + string(os.PathSeparator)}, pkgs...)
	cmd := exec.CommandContext(ctx, gobin, args...)
	cmd.Dir = src
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting go build: %w", err)
	}
	var compiled atomic.Int64
	var tail []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if !strings.Contains(line, " ") && !strings.HasPrefix(line, "#") {
				compiled.Add(1) // `go build -v` names each package it compiles
				continue
			}
			tail = append(tail, line)
			if len(tail) > 40 {
				tail = tail[1:]
			}
		}
	}()
	ticker := time.NewTicker(10 * time.Second)
	defer ticker.Stop()
	waitErr := make(chan error, 1)
	go func() { <-done; waitErr <- cmd.Wait() }()
	for {
		select {
		case err := <-waitErr:
			if err != nil {
				return fmt.Errorf("building kube-apiserver, kube-controller-manager and etcd failed: %w\n%s", err, strings.Join(tail, "\n"))
			}
			if err := os.Rename(out, dir); err != nil {
				return fmt.Errorf("moving the built binaries into the cache: %w", err)
			}
			fmt.Fprintf(progress, "built kube-apiserver, kube-controller-manager and etcd in %s (cached in %s)\n", time.Since(start).Round(time.Second), dir)
			return nil
		case <-ticker.C:
			n := compiled.Load()
			if total > 0 {
				fmt.Fprintf(progress, "  building: %d/%d packages compiled (those already in the Go build cache are skipped), %s elapsed\n", n, total, time.Since(start).Round(time.Second))
			} else {
				fmt.Fprintf(progress, "  building: %d packages compiled, %s elapsed\n", n, time.Since(start).Round(time.Second))
			}
		}
	}
}

// countPackages returns how many packages the build covers, or 0 when it
// cannot tell; it only feeds the progress line.
func countPackages(ctx context.Context, gobin, dir string, env, pkgs []string) int {
	cmd := exec.CommandContext(ctx, gobin, append([]string{"list", "-deps"}, pkgs...)...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return 0
	}
	return strings.Count(string(out), "\n")
}
