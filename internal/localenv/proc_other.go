//go:build !linux

package localenv

import "os/exec"

// bindToParent is a no-op where the platform has no parent-death signal.
func bindToParent(cmd *exec.Cmd) {}
