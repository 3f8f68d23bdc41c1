package kubeenv

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is a child process whose output goes to a log file: the control
// plane's etcd, kube-apiserver and kube-controller-manager, and the
// upstream managers the interop tests run. It dies with this process where
// the platform allows.
type Process struct {
	name   string
	log    string
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
}

// StartProcess starts bin with args, its output appended to logPath.
func StartProcess(bin string, args []string, logPath string) (*Process, error) {
	return StartProcessEnv(bin, args, nil, logPath)
}

// StartProcessEnv is StartProcess with env ("KEY=value") added to this
// process's environment (a manager's cloud credentials).
func StartProcessEnv(bin string, args, env []string, logPath string) (*Process, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", logPath, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if _, set := os.LookupEnv("GOGC"); !set {
		// The child processes (API servers, controllers) allocate briskly under load and
		// have memory to spare on a developer machine: collect half as often
		// as Go's default.
		cmd.Env = append(os.Environ(), "GOGC=200")
	}
	if len(env) > 0 {
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		cmd.Env = append(cmd.Env, env...)
	}
	bindToParent(cmd)
	p := &Process{name: filepath.Base(bin), log: logPath, cmd: cmd, exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, fmt.Errorf("starting %s: %w", p.name, err)
	}
	go func() {
		p.err = cmd.Wait()
		_ = logf.Close()
		close(p.exited)
	}()
	return p, nil
}

// WaitHTTP polls url until it answers 200, the process exits, or timeout;
// a failure quotes the end of the log.
func (p *Process) WaitHTTP(ctx context.Context, url string, tlsCfg *tls.Config, timeout time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg}}
	defer client.CloseIdleConnections()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := client.Get(url)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				select {
				case <-p.exited: // the answer came from another process on this port
				default:
					return nil
				}
			}
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited (%v); last lines of %s:\n%s", p.name, p.err, p.log, tailFile(p.log, 30))
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("%s not ready after %s; last lines of %s:\n%s", p.name, timeout, p.log, tailFile(p.log, 30))
		case <-tick.C:
		}
	}
}

// Stop sends SIGTERM and waits up to grace for the process to exit, then
// kills it (and says so).
func (p *Process) Stop(grace time.Duration) error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return fmt.Errorf("%s did not stop within %s and was killed", p.name, grace)
	}
}

// Kill kills the process (SIGKILL: no chance to clean up, as when its node
// dies) and waits until it has exited.
func (p *Process) Kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// Pid is the process's ID (for reading its usage from /proc).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited is closed once the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Tail returns the last n lines of the process's log.
func (p *Process) Tail(n int) string { return tailFile(p.log, n) }

func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// FreePort returns a TCP port on 127.0.0.1 that nothing listens on now,
// for a child process to bind. It is chosen below the kernel's ephemeral
// range, at random and never twice in this process: a port from the
// ephemeral range (what binding port 0 returns) can be taken by any
// outgoing connection before the child binds it, and on a busy machine
// one of them did. A port another process picks the same way in the same
// instant is still possible, but is one chance in thousands rather than a
// race with every connection the tests open.
func FreePort() (int, error) {
	lo, hi := portRange()
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 200 {
		p := lo + rand.IntN(hi-lo)
		if portsGiven[p] || !portFree(p) {
			continue
		}
		portsGiven[p] = true
		return p, nil
	}
	// Below the ephemeral range everything seems taken: let the kernel
	// choose.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// portRange is where FreePort picks: from 10000 up to the start of the
// kernel's ephemeral port range (Linux's ip_local_port_range; 32768 if it
// cannot be read).
func portRange() (lo, hi int) {
	lo, hi = 10000, 32768
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return lo, hi
	}
	if f := strings.Fields(string(b)); len(f) == 2 {
		if start, err := strconv.Atoi(f[0]); err == nil && start > lo+1000 {
			hi = start
		}
	}
	return lo, hi
}
