//go:build !linux

package kubeenv

import "os/exec"

// bindToParent is a no-op where the platform has no parent-death signal.
func bindToParent(cmd *exec.Cmd) {}
