package localenv

import (
	"bufio"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
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

// clusterctlKey identifies a clusterctl build: the pinned version, the exact
// module files and the Go toolchain that compiles them.
func clusterctlKey() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(clusterctltool, "clusterctltool", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := clusterctltool.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hashing the embedded clusterctltool module: %w", err)
	}
	goVersion, err := goToolVersion()
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "%s\x00%s/%s", goVersion, runtime.GOOS, runtime.GOARCH)
	return fmt.Sprintf("clusterctl-%s-%s", ClusterctlVersion, hex.EncodeToString(h.Sum(nil))[:12]), nil
}

// EnsureClusterctl returns the path of a cached clusterctl ClusterctlVersion
// binary, building it from source through the Go module proxy first if this
// cache has none for the pinned version and toolchain. The build takes a few
// minutes on a cold Go build cache; progress lines go to progress. Concurrent
// callers (other processes included) wait for one build.
func EnsureClusterctl(ctx context.Context, progress io.Writer) (string, error) {
	if progress == nil {
		progress = io.Discard
	}
	root, err := CacheDir()
	if err != nil {
		return "", err
	}
	key, err := clusterctlKey()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "bin", key)
	bin := filepath.Join(dir, "clusterctl")
	complete := filepath.Join(dir, ".complete")
	if _, err := os.Stat(complete); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		return "", fmt.Errorf("creating the binary cache: %w", err)
	}
	unlock, err := lockFile(ctx, filepath.Join(root, "bin", key+".lock"), func() {
		fmt.Fprintf(progress, "waiting for another mpool process that is building clusterctl %s\n", ClusterctlVersion)
	})
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(complete); err == nil {
		return bin, nil
	}
	if err := buildClusterctl(ctx, dir, progress); err != nil {
		return "", err
	}
	if err := os.WriteFile(complete, []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("marking the clusterctl cache complete: %w", err)
	}
	return bin, nil
}

// buildClusterctl writes the embedded clusterctltool module to a scratch
// directory and builds clusterctl into dir, stamping its version the way
// upstream's release build does so that `clusterctl version` reports it.
func buildClusterctl(ctx context.Context, dir string, progress io.Writer) error {
	gobin, err := goTool()
	if err != nil {
		return err
	}
	src, err := os.MkdirTemp(filepath.Dir(dir), "clusterctltool-src-")
	if err != nil {
		return fmt.Errorf("creating the build directory: %w", err)
	}
	defer os.RemoveAll(src)
	err = fs.WalkDir(clusterctltool, "clusterctltool", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := clusterctltool.ReadFile(path)
		if err != nil {
			return err
		}
		rel := strings.TrimSuffix(strings.TrimPrefix(path, "clusterctltool/"), ".txt")
		dst := filepath.Join(src, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		return fmt.Errorf("writing the clusterctltool module: %w", err)
	}
	out := dir + ".partial"
	_ = os.RemoveAll(out)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", out, err)
	}

	// -mod=readonly: the embedded go.sum is complete, and a build that
	// needed to change it should fail rather than silently re-resolve.
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly -buildvcs=false")
	pkgs := []string{clusterctlPackage}

	total := countPackages(ctx, gobin, src, env, pkgs)
	start := time.Now()
	fmt.Fprintf(progress, "building clusterctl %s from source (first run only; a few minutes on 2 cores)\n", ClusterctlVersion)

	const v = "sigs.k8s.io/cluster-api/version"
	ldflags := fmt.Sprintf("-s -w -X %s.gitVersion=%s -X %s.gitMajor=%s -X %s.gitMinor=%s -X %s.gitTreeState=clean",
		v, ClusterctlVersion, v, strings.TrimPrefix(strings.Split(ClusterctlVersion, ".")[0], "v"), v, strings.Split(ClusterctlVersion, ".")[1], v)
	args := append([]string{"build", "-v", "-trimpath", "-ldflags", ldflags, "-o", filepath.Join(out, "clusterctl")}, pkgs...)
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
				return fmt.Errorf("building clusterctl %s failed: %w\n%s", ClusterctlVersion, err, strings.Join(tail, "\n"))
			}
			if err := os.Rename(out, dir); err != nil {
				return fmt.Errorf("moving the built clusterctl into the cache: %w", err)
			}
			fmt.Fprintf(progress, "built clusterctl %s in %s (cached in %s)\n", ClusterctlVersion, time.Since(start).Round(time.Second), dir)
			return nil
		case <-ticker.C:
			n := compiled.Load()
			if total > 0 {
				fmt.Fprintf(progress, "  building clusterctl: %d/%d packages compiled (those already in the Go build cache are skipped), %s elapsed\n", n, total, time.Since(start).Round(time.Second))
			} else {
				fmt.Fprintf(progress, "  building clusterctl: %d packages compiled, %s elapsed\n", n, time.Since(start).Round(time.Second))
			}
		}
	}
}
