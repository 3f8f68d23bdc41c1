// Package kubeenv owns the embedded control plane that `mpool up` and the
// integration tests run on: an etcd and a real kube-apiserver, built from
// source at pinned versions (no binary can be downloaded on the machines mpool
// targets), cached per version outside the repository, and started on
// loopback with their certificates, ports and data kept in one directory.
//
// The build is guarded by a file lock, so concurrent test packages and a
// concurrent `mpool up` build the binaries at most once.
package kubeenv
