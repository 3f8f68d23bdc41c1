package kubeenv

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
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// toolBuild is a build of binaries from a small Go module embedded in mpool
// (its files carry a .txt suffix so that it is not a nested module of
// mpool's own), cached under CacheDir()/bin/<key>: the control-plane
// binaries, clusterctl.
type toolBuild struct {
	// fsys holds the module under the directory module.
	fsys   embed.FS
	module string
	// name prefixes the cache key (a hash of the module files and the Go
	// toolchain follows).
	name string
	// what names the binaries in progress lines and errors.
	what string
	// estimate is how long a cold build takes, for the first progress line.
	estimate string
	// goflags is GOFLAGS for the build.
	goflags string
	// pkgs are the packages built; ldflags their -ldflags.
	pkgs    []string
	ldflags string
	// files are directories of the module's dependencies copied beside
	// the binaries after the build (upstream's CRDs and webhook
	// manifests), keyed by module path; each keeps its path inside the
	// module, under a directory named after the module's last element.
	files map[string][]string
}

// key identifies a build: the name, the exact module files and the Go
// toolchain that compiles them.
func (b toolBuild) key() (string, error) {
	h := sha256.New()
	err := fs.WalkDir(b.fsys, b.module, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		c, err := b.fsys.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(c))
		h.Write(c)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hashing the embedded %s module: %w", b.module, err)
	}
	goVersion, err := goToolVersion()
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "%s\x00%s/%s", goVersion, runtime.GOOS, runtime.GOARCH)
	if len(b.files) > 0 {
		mods := make([]string, 0, len(b.files))
		for m := range b.files {
			mods = append(mods, m)
		}
		slices.Sort(mods)
		for _, m := range mods {
			fmt.Fprintf(h, "\x00%s=%s", m, strings.Join(b.files[m], ","))
		}
	}
	return fmt.Sprintf("%s-%s", b.name, hex.EncodeToString(h.Sum(nil))[:12]), nil
}

// ensure returns the cache directory holding the built binaries, building
// them first if this cache has none for this key. Concurrent callers (other
// processes included) wait for one build; progress lines go to progress.
func (b toolBuild) ensure(ctx context.Context, progress io.Writer) (string, error) {
	if progress == nil {
		progress = io.Discard
	}
	root, err := CacheDir()
	if err != nil {
		return "", err
	}
	key, err := b.key()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "bin", key)
	complete := filepath.Join(dir, ".complete")
	if _, err := os.Stat(complete); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		return "", fmt.Errorf("creating the binary cache: %w", err)
	}
	unlock, err := lockFile(ctx, filepath.Join(root, "bin", key+".lock"), func() {
		fmt.Fprintf(progress, "waiting for another mpool process that is building %s\n", b.what)
	})
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(complete); err == nil {
		return dir, nil
	}
	if err := b.build(ctx, dir, progress); err != nil {
		return "", err
	}
	if err := os.WriteFile(complete, []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("marking the binary cache complete: %w", err)
	}
	return dir, nil
}

// build writes the embedded module to a scratch directory and builds the
// packages into dir, with a progress line every 10 seconds.
func (b toolBuild) build(ctx context.Context, dir string, progress io.Writer) error {
	gobin, err := goTool()
	if err != nil {
		return err
	}
	src, err := os.MkdirTemp(filepath.Dir(dir), b.module+"-src-")
	if err != nil {
		return fmt.Errorf("creating the build directory: %w", err)
	}
	defer os.RemoveAll(src)
	err = fs.WalkDir(b.fsys, b.module, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		c, err := b.fsys.ReadFile(path)
		if err != nil {
			return err
		}
		rel := strings.TrimSuffix(strings.TrimPrefix(path, b.module+"/"), ".txt")
		dst := filepath.Join(src, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, c, 0o644)
	})
	if err != nil {
		return fmt.Errorf("writing the %s module: %w", b.module, err)
	}
	out := dir + ".partial"
	_ = os.RemoveAll(out)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", out, err)
	}

	env := append(os.Environ(), "GOWORK=off", "GOFLAGS="+b.goflags)
	total := countPackages(ctx, gobin, src, env, b.pkgs)
	start := time.Now()
	fmt.Fprintf(progress, "building %s from source (first run only; %s)\n", b.what, b.estimate)

	args := append([]string{"build", "-v", "-trimpath", "-ldflags", b.ldflags, "-o", out + string(os.PathSeparator)}, b.pkgs...)
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
				return fmt.Errorf("building %s failed: %w\n%s", b.what, err, strings.Join(tail, "\n"))
			}
			if err := b.copyFiles(ctx, gobin, src, env, out); err != nil {
				return err
			}
			if err := os.Rename(out, dir); err != nil {
				return fmt.Errorf("moving the built %s into the cache: %w", b.what, err)
			}
			fmt.Fprintf(progress, "built %s in %s (cached in %s)\n", b.what, time.Since(start).Round(time.Second), dir)
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

// copyFiles copies b.files from the module cache into out: the files of
// each listed directory (not its subdirectories), as out/<module's last
// element>/<directory>/<file>.
func (b toolBuild) copyFiles(ctx context.Context, gobin, src string, env []string, out string) error {
	for mod, dirs := range b.files {
		cmd := exec.CommandContext(ctx, gobin, "list", "-m", "-f", "{{.Dir}}", mod)
		cmd.Dir = src
		cmd.Env = env
		o, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("finding module %s of %s: %w", mod, b.what, err)
		}
		root := strings.TrimSpace(string(o))
		for _, d := range dirs {
			entries, err := os.ReadDir(filepath.Join(root, d))
			if err != nil {
				return fmt.Errorf("reading %s of module %s: %w", d, mod, err)
			}
			dst := filepath.Join(out, filepath.Base(mod), d)
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
			for _, e := range entries {
				if e.IsDir() {
					continue
				}
				c, err := os.ReadFile(filepath.Join(root, d, e.Name()))
				if err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(dst, e.Name()), c, 0o644); err != nil {
					return err
				}
			}
		}
	}
	return nil
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

func goTool() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	return "", errors.New("the go toolchain is needed to build kube-apiserver, etcd and clusterctl on first use, and none was found on PATH")
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

// versionLDFlags are the -ldflags with which the release builds of Cluster
// API and its providers stamp version (vMAJOR.MINOR.PATCH) into their
// version package versionPkg, so that the binary reports it.
func versionLDFlags(versionPkg, version string) string {
	parts := strings.Split(version, ".")
	return fmt.Sprintf("-s -w -X %s.gitVersion=%s -X %s.gitMajor=%s -X %s.gitMinor=%s -X %s.gitTreeState=clean",
		versionPkg, version, versionPkg, strings.TrimPrefix(parts[0], "v"), versionPkg, parts[1], versionPkg)
}
