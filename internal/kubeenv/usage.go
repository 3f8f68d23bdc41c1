package kubeenv

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times (100 on
// every Linux platform Go supports).
const clockTicks = 100

// Usage is a process's CPU time and peak resident memory, read from /proc.
type Usage struct {
	// CPUSeconds is user plus system CPU time.
	CPUSeconds float64
	// PeakRSSBytes is the high-water mark of resident memory (VmHWM).
	PeakRSSBytes int64
}

// ReadUsage reads process pid's usage from /proc (Linux only).
func ReadUsage(pid int) (Usage, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Usage{}, err
	}
	// The fields after the command (which may hold spaces) in parentheses.
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndex(s, ")")+1:])
	if len(fields) < 13 {
		return Usage{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields))
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return Usage{}, fmt.Errorf("/proc/%d/stat: reading CPU times", pid)
	}
	u := Usage{CPUSeconds: float64(utime+stime) / clockTicks}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Usage{}, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return Usage{}, fmt.Errorf("/proc/%d/status: VmHWM %q", pid, v)
			}
			u.PeakRSSBytes = kb * 1024
		}
	}
	return u, nil
}

// Usage reads the process's usage (Linux only).
func (p *Process) Usage() (Usage, error) { return ReadUsage(p.Pid()) }

// Usage reads the usage of each of the control plane's processes, by name:
// "etcd", "kube-apiserver" and, when it runs, "kube-controller-manager"
// (Linux only). Benchmarks read it before and after a phase to say where
// the machine's CPU went.
func (c *ControlPlane) Usage() (map[string]Usage, error) {
	out := map[string]Usage{}
	for name, p := range map[string]*Process{"etcd": c.etcd, "kube-apiserver": c.api, "kube-controller-manager": c.kcm} {
		if p == nil {
			continue
		}
		u, err := p.Usage()
		if err != nil {
			return nil, fmt.Errorf("reading the usage of %s: %w", name, err)
		}
		out[name] = u
	}
	return out, nil
}
