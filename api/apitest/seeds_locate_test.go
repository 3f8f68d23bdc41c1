package apitest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The seed documents are the upstream Cluster API and provider pages mpool was built
// from. They are kept outside the repository, so the tests that compare with them
// find them through the environment (see locateSeeds).
const (
	// seedsDirEnv names the seeds directory explicitly.
	seedsDirEnv = "MPOOL_SEEDS_DIR"
	// ciEnv is "true" in CI, where the seed tests are required.
	ciEnv = "CI"
)

// seedsAction is what a test that compares with the seed documents does.
type seedsAction int

const (
	// seedsRun: the documents were found; run the test on them.
	seedsRun seedsAction = iota
	// seedsFail: they are required but missing; fail the test.
	seedsFail
	// seedsSkip: they are optional here and missing; skip the test.
	seedsSkip
)

// String names the action for failure messages.
func (a seedsAction) String() string {
	switch a {
	case seedsRun:
		return "run"
	case seedsFail:
		return "fail"
	case seedsSkip:
		return "skip"
	}
	return fmt.Sprintf("seedsAction(%d)", int(a))
}

// seedsLookup is everything locateSeeds decides from, gathered by the caller so that
// the decision itself is a pure function.
type seedsLookup struct {
	// EnvDir is $MPOOL_SEEDS_DIR, "" when unset.
	EnvDir string
	// SiblingDir is the conventional place beside the checkout: <repo>/../shared/seeds.
	SiblingDir string
	// CI is true when $CI is "true": the seed tests are required there.
	CI bool
	// IsDir reports whether a path is an existing directory.
	IsDir func(path string) bool
}

// locateSeeds decides where the seed documents are and what a test that needs them
// does: run on dir, fail, or skip, with a message for the last two. checks says what
// the test would check, in the form "that ...".
//
// MPOOL_SEEDS_DIR wins when set; a value that is not a directory is a mistake and fails
// everywhere. Otherwise the sibling directory is used when it exists. Missing seeds
// fail in CI, where the comparison with upstream is an acceptance check, and skip
// elsewhere: a user's clone has no seeds and needs nothing outside the repository.
func locateSeeds(l seedsLookup, checks string) (dir string, action seedsAction, msg string) {
	if l.EnvDir != "" {
		if l.IsDir(l.EnvDir) {
			return l.EnvDir, seedsRun, ""
		}
		return "", seedsFail, fmt.Sprintf("%s=%s is not a directory: point it at the seed documents (the upstream pages mpool was built from) or unset it; this test checks %s",
			seedsDirEnv, l.EnvDir, checks)
	}
	if l.IsDir(l.SiblingDir) {
		return l.SiblingDir, seedsRun, ""
	}
	if l.CI {
		return "", seedsFail, fmt.Sprintf("seed documents not found: %s is unset and %s does not exist, and %s=true requires them; set %s to the seeds directory. This test checks %s",
			seedsDirEnv, l.SiblingDir, ciEnv, seedsDirEnv, checks)
	}
	return "", seedsSkip, fmt.Sprintf("seed documents not available (%s unset, no %s): this test would check %s; set %s to the seeds directory to run it",
		seedsDirEnv, l.SiblingDir, checks, seedsDirEnv)
}

// requireSeeds returns the seeds directory, or fails or skips t as locateSeeds decides.
func requireSeeds(t *testing.T, checks string) string {
	t.Helper()
	dir, action, msg := locateSeeds(seedsLookup{
		EnvDir:     os.Getenv(seedsDirEnv),
		SiblingDir: filepath.Join(filepath.Dir(repoRoot(t)), "shared", "seeds"),
		CI:         os.Getenv(ciEnv) == "true",
		IsDir: func(path string) bool {
			fi, err := os.Stat(path)
			return err == nil && fi.IsDir()
		},
	}, checks)
	switch action {
	case seedsFail:
		t.Fatal(msg)
	case seedsSkip:
		t.Skip(msg)
	}
	return dir
}

// TestLocateSeeds covers every way the seed tests can find, miss or be told about the
// seed documents.
func TestLocateSeeds(t *testing.T) {
	const (
		envDir  = "/elsewhere/seeds"
		sibling = "/src/shared/seeds"
		checks  = "that the examples match"
	)
	dirs := func(existing ...string) func(string) bool {
		return func(p string) bool {
			for _, e := range existing {
				if p == e {
					return true
				}
			}
			return false
		}
	}
	tests := []struct {
		name    string
		lookup  seedsLookup
		wantDir string
		want    seedsAction
		// wantMsg are substrings the message must hold: what is missing, how to fix it
		// and what the test checks.
		wantMsg []string
	}{
		{name: "sibling directory found: a checkout beside the team's notes runs the tests",
			lookup:  seedsLookup{SiblingDir: sibling, IsDir: dirs(sibling)},
			wantDir: sibling, want: seedsRun},
		{name: "sibling directory found in CI: required and present",
			lookup:  seedsLookup{SiblingDir: sibling, CI: true, IsDir: dirs(sibling)},
			wantDir: sibling, want: seedsRun},
		{name: "MPOOL_SEEDS_DIR wins over the sibling directory",
			lookup:  seedsLookup{EnvDir: envDir, SiblingDir: sibling, IsDir: dirs(envDir, sibling)},
			wantDir: envDir, want: seedsRun},
		{name: "missing in CI fails: the comparison with upstream is an acceptance check",
			lookup: seedsLookup{SiblingDir: sibling, CI: true, IsDir: dirs()},
			want:   seedsFail, wantMsg: []string{sibling, "MPOOL_SEEDS_DIR", "CI=true", checks}},
		{name: "missing on a user's clone skips and says what it would check",
			lookup: seedsLookup{SiblingDir: sibling, IsDir: dirs()},
			want:   seedsSkip, wantMsg: []string{sibling, "MPOOL_SEEDS_DIR", "would check " + checks}},
		{name: "MPOOL_SEEDS_DIR naming no directory fails even outside CI: a typo must not hide the tests",
			lookup: seedsLookup{EnvDir: envDir, SiblingDir: sibling, IsDir: dirs(sibling)},
			want:   seedsFail, wantMsg: []string{"MPOOL_SEEDS_DIR=" + envDir, checks}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, action, msg := locateSeeds(tt.lookup, checks)
			if dir != tt.wantDir || action != tt.want {
				t.Fatalf("locateSeeds = (%q, %v), want (%q, %v); message %q", dir, action, tt.wantDir, tt.want, msg)
			}
			if action == seedsRun && msg != "" {
				t.Errorf("message %q for a run, want none", msg)
			}
			for _, s := range tt.wantMsg {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q does not mention %q", msg, s)
				}
			}
		})
	}
}
