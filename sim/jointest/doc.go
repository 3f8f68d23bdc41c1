// Package jointest holds the integration tests in which simulated instances
// join a real API server (internal/testenv) the way kubeadm-bootstrapped VMs
// do: token discovery, CA pinning, Node registration and heartbeats.
package jointest
