package kubeenv

import (
	"os/exec"
	"syscall"
)

// bindToParent makes the child die with this process, so that a killed
// `mpool up` or test binary does not leave etcd or kube-apiserver running.
func bindToParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
