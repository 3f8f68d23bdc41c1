package testenv

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2/textlogger"
)

// Ring keeps the last lines written to it, for a failing test to print
// what the controllers said before it failed: by default the integration
// tests' controllers log nowhere, and a flake seen once in CI is otherwise
// a failure nobody can explain.
type Ring struct {
	mu      sync.Mutex
	lines   []string
	next    int
	full    bool
	partial []byte
}

// NewRing returns a Ring of n lines.
func NewRing(n int) *Ring { return &Ring{lines: make([]string, max(n, 1))} }

// Write adds p's complete lines; an incomplete last line waits for the
// rest.
func (r *Ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	data := p
	if len(r.partial) > 0 {
		data = append(r.partial, p...)
		r.partial = nil
	}
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		r.lines[r.next] = string(data[:i])
		r.next = (r.next + 1) % len(r.lines)
		r.full = r.full || r.next == 0
		data = data[i+1:]
	}
	if len(data) > 0 {
		r.partial = append([]byte(nil), data...)
	}
	return len(p), nil
}

// Last returns the last n lines for which keep (nil: every line) reports
// true, oldest first, joined by newlines.
func (r *Ring) Last(n int, keep func(line string) bool) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for k := 1; k <= len(r.lines) && len(out) < n; k++ {
		i := (r.next - k + len(r.lines)) % len(r.lines)
		if !r.full && i >= r.next {
			break
		}
		if keep == nil || keep(r.lines[i]) {
			out = append(out, r.lines[i])
		}
	}
	slices.Reverse(out)
	return strings.Join(out, "\n")
}

// RingVerbosity is the verbosity RecordingLogger keeps in its Ring: the
// engine's decisions ("Waiting for the drain") are at 1.
const RingVerbosity = 1

// RecordingLogger is Logger, except that with MPOOL_TEST_LOG unset it
// keeps the last lines at RingVerbosity in r instead of discarding them.
func RecordingLogger(r *Ring) logr.Logger {
	if _, err := strconv.Atoi(os.Getenv(LogEnv)); err == nil {
		return Logger()
	}
	return textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(RingVerbosity), textlogger.Output(r)))
}

// Goroutines returns the stacks of at most n of this process's goroutines
// whose stack contains match (a function, "infrapool.(*Engine).Reconcile"),
// for a test that waited in vain to show what its controllers were blocked
// on.
func Goroutines(match string, n int) string {
	buf := make([]byte, 1<<20)
	for {
		m := runtime.Stack(buf, true)
		if m < len(buf) {
			buf = buf[:m]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, match) {
			out = append(out, g)
		}
	}
	if len(out) > n {
		out = append(out[:n], fmt.Sprintf("(%d more)", len(out)-n))
	}
	return strings.Join(out, "\n\n")
}
