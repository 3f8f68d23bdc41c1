package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
	_ "unsafe" // go:linkname, to age controller-runtime's logger
)

// rootLogCreated is when controller-runtime's root logger was made (at its
// package's init). Once 30 s have passed since then, controller-runtime's
// first use of a logger that nobody set prints "log.SetLogger(...) was never
// called" and a goroutine stack to stderr.
//
//go:linkname rootLogCreated sigs.k8s.io/controller-runtime/pkg/log.rootLogCreated
var rootLogCreated time.Time

// loggerChildEnv holds the arguments (a JSON list) of the one command a
// child process of TestControllerRuntimeLoggerSet runs.
const loggerChildEnv = "MPOOL_TEST_LOGGER_CHILD_ARGS"

// readyLine ends a child's `mpool up` once printed.
const readyLine = "mpool is ready"

// TestControllerRuntimeLoggerSet runs commands that reach controller-runtime
// in a fresh process whose controller-runtime logger is a minute old, as it
// is when the first `mpool up` on a machine has spent minutes building the
// control plane, and checks that none prints controller-runtime's
// "log.SetLogger(...) was never called" warning: each command sets a logger
// before anything of controller-runtime runs.
func TestControllerRuntimeLoggerSet(t *testing.T) {
	if testing.Short() {
		t.Skip("runs `mpool up` in a child process")
	}
	tests := []struct {
		name string
		args []string
		// want is printed when the command got as far as controller-runtime.
		want string
	}{
		{
			name: "up (the conversion webhook's client is made while the control plane starts)",
			args: []string{"up", "--empty", "--data-dir", t.TempDir()},
			want: readyLine,
		},
		{
			name: "a read command (its client is controller-runtime's)",
			args: []string{"describe", "machinepool", "nothing-here", "--kubeconfig", kubeconfigFile(t, "")},
			want: "not found",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			args, err := json.Marshal(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), loggerChildEnv+"="+string(args))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err = cmd.Run()
			out := stdout.String() + stderr.String()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatalf("running the child process: %v", err)
			}
			if !strings.Contains(out, tt.want) {
				t.Fatalf("mpool %s did not get as far as %q; output:\n%s", strings.Join(tt.args, " "), tt.want, out)
			}
			if strings.Contains(out, "SetLogger") {
				t.Errorf("mpool %s printed controller-runtime's missing-logger warning:\n%s", strings.Join(tt.args, " "), out)
			}
		})
	}
}

// runLoggerChild is the child process of TestControllerRuntimeLoggerSet: it
// ages controller-runtime's logger by a minute and runs `mpool ARGS...`,
// stopping `mpool up` once it is ready.
func runLoggerChild(argsJSON string) int {
	var args []string
	if err := json.Unmarshal([]byte(argsJSON), &args); err != nil {
		fmt.Fprintf(os.Stderr, "decoding %s: %v\n", loggerChildEnv, err)
		return 2
	}
	rootLogCreated = rootLogCreated.Add(-time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root := NewRootCommand()
	root.SetArgs(args)
	root.SetOut(&cancelOnWriter{w: os.Stdout, line: readyLine, cancel: cancel})
	root.SetErr(os.Stderr)
	if err := root.ExecuteContext(ctx); err != nil {
		return 1
	}
	return 0
}

// cancelOnWriter copies to w and calls cancel once line has been written.
type cancelOnWriter struct {
	w      *os.File
	line   string
	cancel context.CancelFunc
	seen   strings.Builder
}

func (c *cancelOnWriter) Write(p []byte) (int, error) {
	c.seen.Write(p)
	if strings.Contains(c.seen.String(), c.line) {
		c.cancel()
	}
	return c.w.Write(p)
}
